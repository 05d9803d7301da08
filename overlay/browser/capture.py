"""Headless capture of the page by the system Chromium (playwright-python).

Two ways, as ``euchre-overlay capture`` offers them:

* **deterministic** (:class:`GraphicCapture`): the page is our OGraf graphic
  (``static/ograf/``) in the minimal OGraf host, in non-real-time mode: for every frame
  the capture calls the spec's ``goToTime`` and screenshots the page with a transparent
  background.  Scenes, fonts and the static files come from this process through
  playwright's request routing (an origin that never reaches the network), so a game file
  is captured with no server; the picture depends on the time only.
  :class:`PageClockCapture` does the same for a running channel's page: it stops the page's
  live clock and steps ``window.renderAt(t)`` over the scene on screen.
* **live** (:class:`LiveCapture`): the page of a running channel as it plays, from
  Chromium's screencast (PNG frames with alpha over a transparent default background),
  sampled at the output frame rate (the last frame repeats while nothing changes).

Every launch uses :mod:`overlay.browser.chromium` (``chromium_path()``, ``CHROMIUM_ARGS``).
"""

from __future__ import annotations

import base64
import io
import mimetypes
import threading
import time
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlparse

import numpy as np
import numpy.typing as npt

from .chromium import CHROMIUM_ARGS, chromium_path

__all__ = ["ORIGIN", "STATIC", "GraphicCapture", "PageClockCapture", "LiveCapture", "decode_png"]

#: the capture's own origin: requests to it are answered by :meth:`_Browser._serve`
ORIGIN = "http://capture.euchre-overlay.invalid/"
STATIC = Path(str(files("overlay") / "static"))
MANIFEST = "static/ograf/euchre-overlay.ograf.json"

RGBA = npt.NDArray[np.uint8]


def decode_png(data: bytes) -> RGBA:
    """PNG bytes -> straight RGBA (H x W x 4)."""
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))


class _Browser:
    """One headless Chromium with one page of ``size``; a context manager."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.size = size
        self._pw: Any = None
        self.browser: Any = None
        self.page: Any = None
        self._cdp: Any = None  # the page's DevTools session (screenshots)

    def __enter__(self) -> _Browser:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        try:
            self.browser = self._pw.chromium.launch(executable_path=chromium_path(), args=[*CHROMIUM_ARGS, "--hide-scrollbars"], headless=True)
            w, h = self.size
            self.page = self.browser.new_page(viewport={"width": w, "height": h}, device_scale_factor=1)
        except BaseException:
            self._pw.stop()
            raise
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
        finally:
            self._pw.stop()

    def open(self, url: str) -> None:
        """Load ``url``; a refusal (e.g. a size the page does not allow) is an OSError."""
        resp = self.page.goto(url)
        if resp is not None and not resp.ok:
            raise OSError(f"{url}: HTTP {resp.status}: {resp.text()[:200]}")

    def screenshot(self) -> RGBA:
        """The page with a transparent background, straight RGBA.

        Taken through the DevTools protocol with Chromium's fast PNG encoding (the same
        pixels as playwright's ``screenshot(omit_background=True)``, a larger file that
        is quicker to make and to decode: 63 against 109 ms a 1920x1080 frame, encoding and
        decoding; docs/benchmarks.md)."""
        if self._cdp is None:
            self._cdp = self.page.context.new_cdp_session(self.page)
        self._cdp.send("Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}})
        shot = self._cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        return decode_png(base64.b64decode(shot["data"]))


class GraphicCapture(_Browser):
    """Deterministic capture of a game through the OGraf graphic (non-real time).

    ``scene(step) -> str`` gives what is on air over each step as JSON
    (:meth:`renderer.onair.OnAir.dumps`: scene and analysis layer; a bare scene JSON too);
    ``images`` reads the uploaded images they name, served to the page at ``/media/``
    (without it they draw nothing, as on a page that cannot load them).
    ``starts``/``first``/``last`` are the schedule (:class:`renderer.frames.Schedule`).
    ``frame(t)`` is the page at output time ``t`` seconds.
    """

    def __init__(
        self,
        size: tuple[int, int],
        *,
        scene: Callable[[int], str],
        starts: list[float],
        first: int,
        last: int,
        fps: float,
        images: Callable[[list[str]], dict[str, bytes]] | None = None,
    ) -> None:
        super().__init__(size)
        self.scene_text = scene
        self.read_images = images
        self.timeline = {"starts": starts, "first": first, "last": last, "sceneUrl": ORIGIN + "scene/{step}.json"}
        self.fps = fps

    def _serve(self, route: Any) -> None:
        from renderer.fonts import font_files

        path = urlparse(route.request.url).path.lstrip("/")
        try:
            if path.startswith("scene/") and path.endswith(".json"):
                body = self.scene_text(int(path[6:-5])).encode("utf-8")
                route.fulfill(status=200, body=body, content_type="application/json")
                return
            if path.startswith("media/") and self.read_images is not None:
                name = path[6:]
                data = self.read_images([name]).get(name)
                if data is not None:
                    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
                    route.fulfill(status=200, body=data, content_type=kind)
                    return
            if path.startswith("fonts/") and path.endswith(".ttf"):
                route.fulfill(status=200, body=font_files()[path[6:-4]].read_bytes(), content_type="font/ttf")
                return
            if path.startswith("static/"):
                file = (STATIC / path[7:]).resolve()
                if STATIC.resolve() in file.parents and file.is_file():
                    kind = "text/javascript" if file.suffix in (".js", ".mjs") else mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                    route.fulfill(status=200, body=file.read_bytes(), content_type=kind)
                    return
        except (KeyError, ValueError, IndexError):
            pass
        route.fulfill(status=404, body=b"not found")

    def __enter__(self) -> GraphicCapture:
        super().__enter__()
        from renderer.fonts import font_files

        try:
            page = self.page
            page.route(ORIGIN + "**", self._serve)
            page.goto(ORIGIN + "static/ograf/host.html")
            page.wait_for_function("() => !!window.ografHost")
            w, h = self.size
            params = {
                "renderType": "non-realtime",
                "renderCharacteristics": {"resolution": {"width": w, "height": h}, "frameRate": self.fps},
                "data": {"timeline": self.timeline, "fontUrls": {k: f"{ORIGIN}fonts/{k}.ttf" for k in font_files()}},
            }
            res = page.evaluate("([m, p]) => ografHost.load(m, p)", [ORIGIN + MANIFEST, params])
            if not res or res.get("statusCode") != 200:
                raise OSError(f"the OGraf graphic refused to load: {res!r}")
            starts: list[float] = self.timeline["starts"]  # type: ignore[assignment]
            first = min([0.0, *starts])
            schedule = [{"timestamp": first * 1000.0 - 1.0, "action": {"type": "playAction", "params": {}}}]
            page.evaluate("(s) => ografHost.call('setActionsSchedule', {schedule: s})", schedule)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def frame(self, t: float) -> RGBA:
        res = self.page.evaluate("(ms) => ografHost.call('goToTime', {timestamp: ms})", t * 1000.0)
        if not res or res.get("statusCode") != 200:
            raise OSError(f"goToTime({t * 1000.0:.1f}) failed: {res!r}")
        return self.screenshot()


def page_url(source: str, *, server: str, output: str, size: tuple[int, int] | None, token: str | None = None) -> str:
    """A channel id or page URL -> the overlay page URL (with the size in the query, and the
    API token in the fragment when given: the preview output needs it)."""
    if source.startswith(("http://", "https://")):
        url = source
    else:
        url = f"{server.rstrip('/')}/overlay/{source}?output={output}"
    if size is not None and "width=" not in url:
        url += ("&" if "?" in url else "?") + f"width={size[0]}&height={size[1]}"
    if token and "#" not in url:
        url += f"#token={quote(token, safe='')}"
    return url


class PageClockCapture(_Browser):
    """Deterministic capture of a running channel's page: its clock stepped by ``renderAt``.

    The page draws the scene on screen at scene time ``t0 + t`` where ``t0`` is where the
    page was when the capture began; the live clock is stopped for the whole capture.
    """

    def __init__(self, url: str, size: tuple[int, int]) -> None:
        super().__init__(size)
        self.url = url
        self.t0 = 0.0

    def __enter__(self) -> PageClockCapture:
        super().__enter__()
        try:
            self.open(self.url)
            self.page.wait_for_function("() => window.euchreOverlay && window.euchreOverlay.current() && window.euchreOverlay.current().hasScene", timeout=15000)
            self.page.evaluate("() => window.euchreOverlay.player.sceneReady")
            self.t0 = float(
                self.page.evaluate(
                    "() => { const c = window.euchreOverlay.current(); return c.age + (performance.now() / 1000 - c.t0) * c.rate; }"
                )
            )
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def frame(self, t: float) -> RGBA:
        self.page.evaluate("(t) => window.renderAt(t)", self.t0 + t)
        return self.screenshot()


class LiveCapture(_Browser):
    """The live page as it plays: Chromium's screencast, sampled at ``fps``."""

    def __init__(self, url: str, size: tuple[int, int]) -> None:
        super().__init__(size)
        self.url = url
        self.latest: bytes | None = None
        self.received = 0
        self._lock = threading.Lock()
        self._cdp: Any = None

    def __enter__(self) -> LiveCapture:
        super().__enter__()
        try:
            cdp = self.page.context.new_cdp_session(self.page)
            self._cdp = cdp
            cdp.on("Page.screencastFrame", self._on_frame)
            self.open(self.url)
            self.page.wait_for_function("() => window.euchreOverlay && window.euchreOverlay.current()", timeout=15000)
            # no white page behind the canvas (never take a playwright screenshot from here on:
            # it resets this override when it is done)
            cdp.send("Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}})
            # two frames painted over it before the screencast starts: its first frame was at
            # times the last one painted on white, and a page at rest sends no other
            self.page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            w, h = self.size
            cdp.send("Page.startScreencast", {"format": "png", "maxWidth": w, "maxHeight": h, "everyNthFrame": 1})
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _on_frame(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.latest = base64.b64decode(event["data"])
            self.received += 1
        try:
            self._cdp.send("Page.screencastFrameAck", {"sessionId": event["sessionId"]})
        except Exception:  # noqa: BLE001 - the session may be closing
            pass

    def frames(self, *, fps: float, duration: float | None, stop: Callable[[], bool] = lambda: False) -> Iterator[RGBA]:
        """One frame per ``1/fps`` of wall time (the newest screencast frame), for ``duration``
        seconds (``None``: until ``stop()`` or Ctrl+C)."""
        period = 1.0 / fps
        # the recording starts with the first screencast frame (the page is drawing by then)
        give_up = time.monotonic() + 15.0
        while self.latest is None:
            if time.monotonic() > give_up:
                raise OSError(f"{self.url}: no screencast frame from Chromium")
            self.page.wait_for_timeout(10)
        start = time.monotonic()
        n = 0
        last: RGBA | None = None
        last_png: bytes | None = None
        while duration is None or n < round(duration * fps):
            if stop():
                return
            wait = start + n * period - time.monotonic()
            # waiting in playwright lets its event loop deliver screencast frames
            self.page.wait_for_timeout(max(1.0, wait * 1000.0))
            with self._lock:
                png = self.latest
            if png is not last_png:
                last, last_png = decode_png(png), png
            assert last is not None
            yield last
            n += 1

