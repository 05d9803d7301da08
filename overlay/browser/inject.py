"""Graphics into a stream without OBS: a channel's live overlay laid over a video, frame by frame.

:class:`~overlay.browser.follower.LiveOverlay` follows a channel as its OBS page does (the
page WebSocket: the step's scene, its analysis layer and the uploaded images they name: what
is on air, :class:`renderer.onair.OnAir`) and draws it with skia for the time a video frame is
composited: the overlay is what the page would show at that moment.  It reaches the server
over loopback, so ``inject --serve`` runs the server in the same process, and ``--server
URL`` follows a server elsewhere.

:func:`inject` reads the input (a file or a stream URL), lays the overlay over each decoded
frame, encodes H.264 and copies the audio packets.  The overlay is drawn in a thread of its
own once a frame period (:class:`_Painter`), and each frame takes the newest finished
picture: a picture slower to draw than a period (moving cards on a busy core) costs the
overlay's animation a frame (counted), never the video's.  A file input is paced to real
time (as a live source would be); a frame finished after its due time is *late*, and one
more than :data:`DROP_AFTER` frames late is *dropped* (not encoded), so a stream catches up
instead of drifting.  Both are counted and shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .follower import LiveOverlay

from ..video.source import VideoInputError, decode_fault, open_video

__all__ = ["LiveOverlay", "InjectStats", "inject", "output_format", "serve_in_thread", "DROP_AFTER"]

#: a frame this many frame periods behind its due time is dropped (not encoded)
DROP_AFTER = 3.0


@dataclass
class InjectStats:
    """What happened: frames written, late and dropped, and when each frame was drawn."""

    frames: int = 0
    late: int = 0
    dropped: int = 0
    started: float = 0.0  # monotonic time of the first frame's due time
    written: list[tuple[float, float]] = field(default_factory=list)  # (video time, monotonic time drawn)
    #: per frame written: seconds from its due time to its blended picture going to the encoder
    lateness: list[float] = field(default_factory=list)
    #: frames blended in the video's YUV, in RGBA (overlay.browser.blend), and new overlay
    #: pictures converted for the YUV blend
    blended_yuv: int = 0
    blended_rgba: int = 0
    overlay_conversions: int = 0
    #: frame periods the overlay's animation skipped: a picture that took longer than a period
    #: to draw (the video kept its time; its frames took the newest finished picture)
    overlay_skipped: int = 0

    def line(self) -> str:
        skipped = f", {self.overlay_skipped} overlay frames skipped" if self.overlay_skipped else ""
        return f"{self.frames} frames, {self.late} late, {self.dropped} dropped{skipped}"

    def late_ms(self, q: float = 0.99) -> float:
        """The ``q`` quantile of :attr:`lateness`, in milliseconds (0 without frames)."""
        if not self.lateness:
            return 0.0
        ordered = sorted(self.lateness)
        return 1000.0 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


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
    lossless: bool = False,
) -> InjectStats:
    """Lay ``overlay`` over every frame of ``src`` and write ``dst`` (H.264, audio copied).

    ``realtime``: pace a file input to its own clock (default: on for a file, off for a
    stream, which paces itself).  Ends when the input ends (or stalls for ``timeout``
    seconds) or ``stop()`` is true; the output is always finished cleanly.  ``stats`` (filled
    as frames are written) lets another thread watch the progress.  ``lossless``: H.264 in
    RGB with no loss (``libx264rgb``, qp 0) instead of 4:2:0 at crf 20, for checking the
    pixels or keeping a master.

    Raises:
        VideoInputError: the input cannot be opened, has no video that can be decoded, or
            (a file) a frame of it cannot be decoded: the output written so far is finished.
        OSError: the output refused a write (a full disk, a reader or receiver gone); a file
            output is removed, as ``render`` removes its own.
    """
    import av

    from .blend import YUV_FORMATS, Blender

    is_file = Path(src).exists()
    pace = is_file if realtime is None else realtime
    options = {} if is_file else {"rw_timeout": str(int(timeout * 1e6)), "timeout": str(int(timeout * 1e6))}
    source = open_video(src, options=options, timeout=None if is_file else timeout)
    inp = source.container
    stats = stats if stats is not None else InjectStats()
    fault: VideoInputError | None = None
    try:
        vin, ain = source.video, source.audio
        # FFmpeg's decoder threads: decoding a frame overlaps blending and encoding the last
        vin.codec_context.thread_type = "AUTO"
        blender = Blender(rgb=lossless)
        overlay.video_size = source.size
        yuv = not lossless and vin.codec_context.pix_fmt in YUV_FORMATS
        rate = Fraction(vin.average_rate or vin.guessed_rate or 30)
        period = 1.0 / float(rate)
        out = av.open(sys.stdout.buffer if dst == "-" else dst, "w", format=output_format(dst))
        if lossless:
            vout = out.add_stream("libx264rgb", rate=rate, options={"preset": preset, "tune": "zerolatency", "qp": "0"})
            vout.pix_fmt = "rgb24"
        else:
            vout = out.add_stream("libx264", rate=rate, options={"preset": preset, "tune": "zerolatency", "crf": "20"})
            vout.pix_fmt = "yuv420p"
        vout.width, vout.height = vin.codec_context.width, vin.codec_context.height
        aout = out.add_stream_from_template(ain) if ain is not None else None
        enc = _Encoder(out, vout, aout, rate)
        painter = _Painter(overlay, blender, period, yuv=yuv)
        try:
            painter.latest()  # the first picture before the clock starts
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
                        picture = blender.blend_prepared(frame, painter.latest())
                        stats.lateness.append(time.monotonic() - due)
                        stats.blended_yuv, stats.blended_rgba, stats.overlay_conversions = blender.yuv, blender.rgba, blender.conversions
                        stats.overlay_skipped = painter.skipped
                        pts = max(last_pts + 1, round(vt * float(rate)))
                        last_pts = pts
                        enc.put(("v", picture, pts))
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
            painter.close()
            try:
                enc.close()
            except BaseException:
                if output_format(dst) is None and Path(dst).is_file():
                    # writing the file failed (a full disk), while streaming or finishing it:
                    # what is there cannot be played
                    Path(dst).unlink(missing_ok=True)
                raise
    finally:
        inp.close()
    if fault is None and is_file and stats.frames == 0 and stats.dropped == 0 and not stop():
        fault = VideoInputError(src, "no video frame in it could be decoded")
    if fault is not None:
        raise fault
    return stats


class _Painter:
    """Draws the live overlay in a thread of its own, once a frame period, and prepares each
    new picture for the blend (:meth:`Blender.prepare`: converted where it changed), so that
    the video's frames never wait for a drawing: each takes the newest finished picture.

    Drawing a frame while cards and panels move takes longer than a frame period on a busy
    core (25-35 ms at 1080p with another job on the other core); drawn on the video's path,
    each such frame came out late and the video fell behind.  Here the overlay's animation
    shows fewer pictures for that while, and the video keeps its time.  A picture is drawn
    for the moment it will be shown: its time is ahead by the last drawing's duration.
    """

    def __init__(self, overlay: LiveOverlay, blender: Any, period: float, *, yuv: bool) -> None:
        self.overlay, self.blender, self.period, self.yuv = overlay, blender, period, yuv
        self.skipped = 0  # frame periods a drawing overran
        self._cond = threading.Condition()
        self._latest: Any = None
        self._error: BaseException | None = None
        self._stop = False
        self.thread = threading.Thread(target=self._run, name="inject-painter", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        lead = 0.0
        try:
            while not self._stop:
                began = time.monotonic()
                prepared = self.blender.prepare(self.overlay.image(began + lead), yuv=self.yuv)
                with self._cond:
                    self._latest = prepared
                    self._cond.notify_all()
                took = time.monotonic() - began
                self.skipped += int(took / self.period)
                lead = min(took, self.period)
                if took < self.period:
                    time.sleep(self.period - took)
        except BaseException as exc:  # noqa: BLE001 - raised in the video's thread
            with self._cond:
                self._error = exc
                self._cond.notify_all()

    def latest(self, timeout: float = 10.0) -> Any:
        """The newest prepared picture (the first: waited for).

        Raises:
            Exception: the painter's, if it failed.
        """
        with self._cond:
            if self._latest is None and self._error is None:
                self._cond.wait_for(lambda: self._latest is not None or self._error is not None, timeout)
            if self._error is not None:
                raise self._error
            if self._latest is None:
                raise OSError("the overlay was not drawn within 10 s")
            return self._latest

    def close(self) -> None:
        self._stop = True
        self.thread.join(timeout=5)


class _Encoder:
    """Encodes and muxes in its own thread (PyAV releases the GIL there), so decoding and
    drawing the next frame overlap with encoding this one; audio goes through the same
    queue to keep the muxer in one thread and in order."""

    def __init__(self, out: Any, vout: Any, aout: Any, rate: Fraction) -> None:
        self.out, self.vout, self.aout = out, vout, aout
        self.time_base = 1 / rate  # a picture's pts counts frames
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=8)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="inject-encoder", daemon=True)
        self.thread.start()

    def put(self, item: tuple[Any, ...]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(item)

    def _work(self) -> None:
        try:
            while (item := self.queue.get()) is not None:
                if item[0] == "a":
                    if self.aout is not None:
                        item[1].stream = self.aout
                        self.out.mux(item[1])
                    continue
                vf = item[1]  # a blended picture (PyAV converts it to the stream's pixel format)
                vf.pts = item[2]  # in frames: the encoder's time base
                vf.time_base = self.time_base
                for p in self.vout.encode(vf):
                    self.out.mux(p)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            self.error = exc
            while self.queue.get() is not None:  # unblock the reader
                pass

    def close(self) -> None:
        """Encode what is queued, flush the encoder and finish the output.  After a write
        failed (the reader of ``-`` gone, a stream's receiver gone), finishing the output fails
        too; the first failure is the one raised."""
        try:
            self.queue.put(None)
            self.thread.join()
            if self.error is None:
                for p in self.vout.encode(None):
                    self.out.mux(p)
        finally:
            if self.error is None:
                self.out.close()
            else:
                with contextlib.suppress(Exception):
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
