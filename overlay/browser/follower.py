"""A channel's live overlay outside a browser: the page socket read as the OBS page reads it.

:class:`LiveOverlay` follows one output of a channel over the page WebSocket in a thread of
its own and keeps what is on air there as a :class:`renderer.onair.OnAir`, the description
every output draws, by the page's rules (``overlay/static/overlay.js``):

* a ``scene`` message sets the step's scene, its age and its playback rate; a scene of
  another step, or a jump, drops the analysis layer;
* an ``analysis`` message's ``layer`` goes over its own step's scene only, on a clock of its
  own from when it is shown; one that comes before its step's scene waits for it;
* the uploaded images either names (logo and sponsor slots, photo badges) are read from the
  server's ``/media/`` before the picture changes, as the page loads them from there.

``image(now)`` draws it with :func:`renderer.onair.draw` at monotonic time ``now``:
``inject`` lays that over each video frame.  A message that cannot be read is counted
(:attr:`LiveOverlay.refused`) and the last good picture stays on air.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import skia  # type: ignore[import-not-found]

from renderer.onair import OnAir

__all__ = ["LiveOverlay"]

log = logging.getLogger("overlay.browser.follower")

#: seconds an image read from the server may take before the scene goes on air without it
IMAGE_TIMEOUT = 2.0


@dataclass(frozen=True)
class _Shown:
    """What the follower has on air: the step's on-air parts and their clocks."""

    on_air: OnAir | None  # None: the channel shows nothing (no game)
    step: int | None
    age: float  # scene time when the message arrived
    rate: float
    t0: float  # monotonic time the message arrived
    layer_at: float | None  # monotonic time the layer was shown
    ident: int  # changes with every new picture (scene or layer)


class LiveOverlay:
    """A channel's current overlay, kept up to date by a WebSocket client in a thread.

    ``image(now)`` is the overlay at monotonic time ``now`` (``None`` while the channel has
    no game), scaled to ``video_size`` (which :func:`overlay.browser.inject.inject` sets from
    the input).  The page socket only serves page sizes (1280x720 to 3840x2160): a smaller
    video gets the overlay drawn at a page size and scaled.
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
        self.layers = 0
        #: messages that could not be read (the picture before them stayed on air)
        self.refused = 0
        self.connected = threading.Event()
        self._lock = threading.Lock()
        self._shown: _Shown | None = None
        self._waiting: tuple[int | None, Any] | None = None  # (step, layer scene) before its scene
        self._images: dict[str, bytes] = {}  # read from the server, not yet decoded
        self._cache: tuple[tuple[Any, ...], skia.Image | None] | None = None
        self._ident = 0
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

    @property
    def on_air(self) -> OnAir | None:
        """What is on air now (scene and layer)."""
        with self._lock:
            shown = self._shown
        return None if shown is None else shown.on_air

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
                        await self._on_message(msg.data, session)
            except (aiohttp.ClientError, OSError) as exc:
                self.error = str(exc)
            if not self._stop.is_set():
                await asyncio.sleep(0.25)  # reconnect, as the page does

    async def _on_message(self, text: str, session: Any) -> None:
        """One page-socket message; one that cannot be read leaves the picture as it was."""
        from renderer.ops import SceneError
        from renderer.scene import Scene

        try:
            data = json.loads(text)
            kind = data.get("type") if isinstance(data, dict) else None
            if kind == "scene":
                scene = Scene.from_json(data["scene"], source="scene message") if data.get("scene") else None
                step = data.get("step")
                if scene is not None:
                    await self._read_images(scene.images, session)
                self._on_scene(scene, step, float(data.get("age") or 0.0), float(data.get("rate") or 0.0), bool(data.get("jump")))
            elif kind == "analysis" and data.get("layer"):
                layer = Scene.from_json(data["layer"], source="analysis layer")
                await self._read_images(layer.images, session)
                self._on_layer(data.get("step"), layer)
        except (ValueError, KeyError, TypeError, SceneError) as exc:  # SceneError is a ValueError
            self.refused += 1
            log.warning("channel %s: a page message was not read (%s); the picture before it stays on air", self.channel, exc)

    def _on_scene(self, scene: Any, step: int | None, age: float, rate: float, jump: bool) -> None:
        now = time.monotonic()
        with self._lock:
            before = self._shown
            self.scenes += 1
            self._ident += 1
            keep = before is not None and before.step == step and step is not None and not jump
            layer = before.on_air.layer if keep and before is not None and before.on_air is not None else None
            layer_at = before.layer_at if keep and before is not None else None
            on_air = None if scene is None else OnAir(scene, layer)
            self._shown = _Shown(on_air, step, age, rate, now, layer_at if layer is not None else None, self._ident)
            waiting, self._waiting = self._waiting, None
        if waiting is not None and waiting[0] == step:
            self._on_layer(step, waiting[1])
        self.connected.set()

    def _on_layer(self, step: int | None, layer: Any) -> None:
        now = time.monotonic()
        with self._lock:
            shown = self._shown
            if shown is None or shown.step != step:
                self._waiting = (step, layer)  # its scene may still be on the way
                return
            if shown.on_air is None:
                return
            self.layers += 1
            self._ident += 1
            self._shown = _Shown(shown.on_air.with_layer(layer), shown.step, shown.age, shown.rate, shown.t0, now, self._ident)

    async def _read_images(self, ids: list[str], session: Any) -> None:
        """Read the images ``ids`` names that are not loaded yet from the server's ``/media/``
        (as the page loads them); one that cannot be read draws nothing."""
        import aiohttp

        with self._lock:
            wanted = [i for i in ids if i not in self.assets.bitmaps and i not in self._images]
        for image_id in wanted:
            try:
                async with session.get(f"{self.server}/media/{image_id}", timeout=aiohttp.ClientTimeout(total=IMAGE_TIMEOUT)) as r:
                    if r.status != 200:
                        log.warning("channel %s: image %s: HTTP %s", self.channel, image_id, r.status)
                        continue
                    data = await r.read()
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
                log.warning("channel %s: image %s: %s", self.channel, image_id, exc)
                continue
            with self._lock:
                self._images[image_id] = data

    def _decode_images(self) -> None:
        """Images read by the follower thread go into the assets here, in the drawing thread."""
        from renderer.ops import SceneError

        with self._lock:
            pending, self._images = self._images, {}
        for image_id, data in pending.items():
            try:
                self.assets.add_image(image_id, data)
            except SceneError as exc:
                log.warning("channel %s: %s", self.channel, exc)
        if pending:
            self._cache = None

    def image(self, now: float) -> skia.Image | None:
        """The overlay at monotonic time ``now``, at :attr:`video_size` (``None``: nothing on air)."""
        from renderer.onair import draw, still_from

        if self._images:
            self._decode_images()
        with self._lock:
            shown = self._shown
        if shown is None or shown.on_air is None:
            return None
        on_air = shown.on_air
        t = min(shown.age + (now - shown.t0) * shown.rate, still_from(on_air.scene))
        lt: float | None = None
        if on_air.layer is not None and shown.layer_at is not None:
            lt = min(max(0.0, now - shown.layer_at), still_from(on_air.layer))
        key = (shown.ident, round(t, 4), None if lt is None else round(lt, 4))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        img = draw(on_air, t, self.assets, layer_t=0.0 if lt is None else lt)
        if img is not None and (img.width(), img.height()) != self.video_size:
            # scaled once per new picture, so compositing is a plain blit; mipmaps only for a
            # reduction to half or less (1080p to 720p: building them took 34 ms a picture at
            # 1080p, more than a frame period, against 4.7 ms for plain bilinear)
            w, h = self.video_size
            surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(w, h))
            mip = skia.MipmapMode.kLinear if min(w / img.width(), h / img.height()) <= 0.5 else skia.MipmapMode.kNone
            surf.getCanvas().drawImageRect(img, skia.Rect.MakeWH(w, h), skia.SamplingOptions(skia.FilterMode.kLinear, mip))
            img = surf.makeImageSnapshot()
        self._cache = (key, img)
        return img
