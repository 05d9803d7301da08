"""Graphics into a stream without OBS: a channel's live overlay laid over a video, frame by frame.

:class:`LiveOverlay` follows a channel as its OBS page does (the page WebSocket: each scene
message carries the step's scene, its age and the playback rate) and rasterises it with skia
at the time a video frame is composited: the overlay is what the page would show at that
moment.  It reaches the server over loopback, so ``inject --serve`` runs the server in the
same process, and ``--server URL`` follows a server elsewhere.

:func:`inject` reads the input (a file or a stream URL), draws the overlay over each
decoded frame, encodes H.264 and copies the audio packets.  A file input is paced to real
time (as a live source would be); a frame finished after its due time is *late*, and one
more than :data:`DROP_AFTER` frames late is *dropped* (not encoded), so a stream catches up
instead of drifting.  Both are counted and shown.
"""

from __future__ import annotations

import asyncio
import json
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import skia  # type: ignore[import-not-found]

from ..video.source import VideoInputError, decode_fault, open_video

__all__ = ["LiveOverlay", "InjectStats", "inject", "output_format", "serve_in_thread", "DROP_AFTER"]

#: a frame this many frame periods behind its due time is dropped (not encoded)
DROP_AFTER = 3.0


class LiveOverlay:
    """A channel's current overlay, kept up to date by a WebSocket client in a thread.

    ``image(now)`` is the overlay at monotonic time ``now`` (``None`` while the channel has
    no game), scaled to ``video_size`` (which :func:`inject` sets from the input).  The page
    socket only serves page sizes (1280x720 to 3840x2160): a smaller video gets the overlay
    drawn at a page size and scaled.
    """

    def __init__(
        self, server: str, channel: str, *, output: str = "program", size: tuple[int, int] = (1920, 1080), token: str | None = None
    ) -> None:
        from renderer.raster import Assets

        self.video_size = size
        self.server = server.rstrip("/")
        self.channel = channel
        self.output = output
        self.token = token  # the preview output needs the API token
        w, h = size
        if w < 1280 or h < 720:
            s = max(1280 / w, 720 / h)
            w, h = round(w * s), round(h * s)
        self.size = (min(w, 3840), min(h, 2160))
        self.assets = Assets.load()
        self.scenes = 0
        self.connected = threading.Event()
        self._lock = threading.Lock()
        self._current: tuple[Any, float, float, float, int] | None = None  # scene, age, rate, t0, id
        self._cache: tuple[tuple[int, float], skia.Image | None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self.error: str | None = None

    def start(self, timeout: float = 10.0) -> LiveOverlay:
        """Connect, wait for the first scene message and draw it once (warm caches).

        Raises:
            OSError: no scene within ``timeout`` seconds (server down, unknown channel).
        """
        self._thread = threading.Thread(target=self._run, name="inject-overlay", daemon=True)
        self._thread.start()
        if not self.connected.wait(timeout):
            self.stop()
            raise OSError(f"{self.server}: no overlay for channel {self.channel!r} ({self.error or 'no answer'})")
        self.image(time.monotonic())
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._follow())
        finally:
            self._loop.close()

    async def _follow(self) -> None:
        import aiohttp

        self._stop = asyncio.Event()
        base = self.server.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        w, h = self.size
        url = f"{base}/ws/overlay/{self.channel}?output={self.output}&width={w}&height={h}"
        while not self._stop.is_set():
            try:
                async with aiohttp.ClientSession() as session, session.ws_connect(url, compress=0, max_msg_size=0) as ws:
                    hello: dict[str, object] = {"type": "hello", "output": self.output, "width": w, "height": h, "visible": True}
                    if self.token:
                        hello["token"] = self.token
                    await ws.send_str(json.dumps(hello))
                    stop = asyncio.ensure_future(self._stop.wait())
                    while True:
                        recv = asyncio.ensure_future(ws.receive())
                        done, _ = await asyncio.wait({recv, stop}, return_when=asyncio.FIRST_COMPLETED)
                        if stop in done:
                            recv.cancel()
                            return
                        msg = recv.result()
                        if msg.type != aiohttp.WSMsgType.TEXT:
                            break
                        self._on_message(msg.data)
            except (aiohttp.ClientError, OSError) as exc:
                self.error = str(exc)
            if not self._stop.is_set():
                await asyncio.sleep(0.25)  # reconnect, as the page does

    def _on_message(self, text: str) -> None:
        from renderer.scene import Scene

        data = json.loads(text)
        if data.get("type") != "scene":
            return
        scene = Scene.from_json(data["scene"]) if data.get("scene") else None
        with self._lock:
            self.scenes += 1
            self._current = (scene, float(data.get("age") or 0.0), float(data.get("rate") or 0.0), time.monotonic(), self.scenes)
        self.connected.set()

    def image(self, now: float) -> skia.Image | None:
        from renderer.frames import still_from
        from renderer.raster import raster

        with self._lock:
            cur = self._current
        if cur is None or cur[0] is None:
            return None
        scene, age, rate, t0, ident = cur
        t = min(age + (now - t0) * rate, still_from(scene))
        key = (ident, round(t, 4))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        img = raster(scene, t, self.assets)
        if (img.width(), img.height()) != self.video_size:
            # scaled once per new picture, so compositing is a plain blit
            w, h = self.video_size
            surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(w, h))
            surf.getCanvas().drawImageRect(img, skia.Rect.MakeWH(w, h), skia.SamplingOptions(skia.FilterMode.kLinear, skia.MipmapMode.kLinear))
            img = surf.makeImageSnapshot()
        self._cache = (key, img)
        return img


@dataclass
class InjectStats:
    """What happened: frames written, late and dropped, and when each frame was drawn."""

    frames: int = 0
    late: int = 0
    dropped: int = 0
    started: float = 0.0  # monotonic time of the first frame's due time
    written: list[tuple[float, float]] = field(default_factory=list)  # (video time, monotonic time drawn)

    def line(self) -> str:
        return f"{self.frames} frames, {self.late} late, {self.dropped} dropped"


def output_format(dst: str) -> str | None:
    """The container for ``dst``: ``flv`` for RTMP, ``mpegts`` for UDP/SRT/stdout, else by suffix."""
    if dst == "-" or dst.startswith(("udp://", "srt://", "tcp://", "pipe:")):
        return "mpegts"
    if dst.startswith(("rtmp://", "rtmps://")):
        return "flv"
    return None


def inject(
    src: str,
    dst: str,
    overlay: LiveOverlay,
    *,
    realtime: bool | None = None,
    preset: str = "veryfast",
    stop: Callable[[], bool] = lambda: False,
    status: Callable[[InjectStats], None] | None = None,
    timeout: float = 5.0,
    stats: InjectStats | None = None,
) -> InjectStats:
    """Lay ``overlay`` over every frame of ``src`` and write ``dst`` (H.264, audio copied).

    ``realtime``: pace a file input to its own clock (default: on for a file, off for a
    stream, which paces itself).  Ends when the input ends (or stalls for ``timeout``
    seconds) or ``stop()`` is true; the output is always finished cleanly.  ``stats`` (filled
    as frames are written) lets another thread watch the progress.

    Raises:
        VideoInputError: the input cannot be opened, has no video that can be decoded, or
            (a file) a frame of it cannot be decoded: the output written so far is finished.
    """
    import av

    from renderer.frames import composite_over

    is_file = Path(src).exists()
    pace = is_file if realtime is None else realtime
    options = {} if is_file else {"rw_timeout": str(int(timeout * 1e6)), "timeout": str(int(timeout * 1e6))}
    source = open_video(src, options=options, timeout=None if is_file else timeout)
    inp = source.container
    stats = stats if stats is not None else InjectStats()
    fault: VideoInputError | None = None
    try:
        vin, ain = source.video, source.audio
        overlay.video_size = source.size
        rate = Fraction(vin.average_rate or vin.guessed_rate or 30)
        period = 1.0 / float(rate)
        out = av.open(sys.stdout.buffer if dst == "-" else dst, "w", format=output_format(dst))
        vout = out.add_stream("libx264", rate=rate, options={"preset": preset, "tune": "zerolatency", "crf": "20"})
        vout.width, vout.height = vin.codec_context.width, vin.codec_context.height
        vout.pix_fmt = "yuv420p"
        aout = out.add_stream_from_template(ain) if ain is not None else None
        enc = _Encoder(out, vout, aout)
        try:
            start_pts: float | None = None
            last_pts = -1
            next_status = time.monotonic() + 1.0
            streams = [vin] + ([ain] if ain is not None else [])
            packet = None
            try:
                for packet in inp.demux(*streams):
                    if stop():
                        break
                    if packet.stream.type == "audio":
                        if packet.dts is not None:
                            enc.put(("a", packet))
                        continue
                    for frame in packet.decode():
                        if not isinstance(frame, av.VideoFrame):
                            continue
                        vt = float(frame.pts * frame.time_base) if frame.pts is not None and frame.time_base is not None else stats.frames * period
                        first = start_pts is None
                        if start_pts is None:
                            start_pts = vt
                        vt -= start_pts
                        now = time.monotonic()
                        # the clock starts with the first frame drawn (caches warm)
                        due = now if first else stats.started + vt
                        if pace and now < due:
                            time.sleep(due - now)
                            now = time.monotonic()
                        behind = (now - due) / period
                        if pace and behind > DROP_AFTER:
                            stats.dropped += 1
                            continue
                        if behind > 1.0:
                            stats.late += 1
                        rgba: Any = frame.to_ndarray(format="rgba")
                        composite_over(rgba, overlay.image(now))
                        pts = max(last_pts + 1, round(vt * float(rate)))
                        last_pts = pts
                        enc.put(("v", rgba, pts))
                        stats.frames += 1
                        if first:
                            stats.started = time.monotonic()
                        stats.written.append((vt, now))
                        if status is not None and now >= next_status:
                            status(stats)
                            next_status = now + 1.0
            except av.error.FFmpegError as exc:
                if is_file:  # a damaged file: the output so far is finished, then the fault is told
                    fault = decode_fault(src, exc, packet)
                else:  # a stream that stops (sender gone, read timeout) ends the output cleanly
                    print(f"euchre-overlay: input ended: {exc}", file=sys.stderr)
        finally:
            enc.close()
    finally:
        inp.close()
    if fault is None and is_file and stats.frames == 0 and stats.dropped == 0 and not stop():
        fault = VideoInputError(src, "no video frame in it could be decoded")
    if fault is not None:
        raise fault
    return stats


class _Encoder:
    """Encodes and muxes in its own thread (PyAV releases the GIL there), so decoding and
    drawing the next frame overlap with encoding this one; audio goes through the same
    queue to keep the muxer in one thread and in order."""

    def __init__(self, out: Any, vout: Any, aout: Any) -> None:
        self.out, self.vout, self.aout = out, vout, aout
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=8)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="inject-encoder", daemon=True)
        self.thread.start()

    def put(self, item: tuple[Any, ...]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(item)

    def _work(self) -> None:
        import av

        try:
            while (item := self.queue.get()) is not None:
                if item[0] == "a":
                    if self.aout is not None:
                        item[1].stream = self.aout
                        self.out.mux(item[1])
                    continue
                vf = av.VideoFrame.from_ndarray(item[1], format="rgba")
                vf.pts = item[2]
                for p in self.vout.encode(vf):
                    self.out.mux(p)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            self.error = exc
            while self.queue.get() is not None:  # unblock the reader
                pass

    def close(self) -> None:
        """Encode what is queued, flush the encoder and finish the output."""
        try:
            self.queue.put(None)
            self.thread.join()
            if self.error is None:
                for p in self.vout.encode(None):
                    self.out.mux(p)
        finally:
            self.out.close()
        if self.error is not None:
            raise self.error


def serve_in_thread(settings: Any) -> tuple[str, Callable[[], None]]:
    """Run the overlay service in a thread of this process: ``(url, stop)``.

    The app of ``serve`` (``create_app``) without its banner: stdout may carry the stream.

    Raises:
        OSError: it did not start within 20 seconds.
    """
    from aiohttp import web

    from ..service.app import create_app

    ready = threading.Event()
    box: dict[str, Any] = {}

    async def run() -> None:
        box["loop"] = asyncio.get_running_loop()
        box["stop"] = stop_event = asyncio.Event()
        runner = web.AppRunner(create_app(settings), handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, settings.host, settings.port)
            await site.start()
            server = getattr(site, "_server", None)
            sockets = getattr(server, "sockets", None) or []
            box["port"] = sockets[0].getsockname()[1] if sockets else settings.port
            ready.set()
            await stop_event.wait()
        finally:
            await runner.cleanup()

    def main() -> None:
        try:
            asyncio.run(run())
        except Exception as exc:  # noqa: BLE001 - reported to the caller below
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=main, name="overlay-server", daemon=True)
    thread.start()
    if not ready.wait(20) or "error" in box:
        raise OSError(f"the in-process overlay server did not start: {box.get('error', 'timeout')}")
    url = f"http://127.0.0.1:{box['port']}"

    def stop() -> None:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(timeout=10)

    return url, stop
