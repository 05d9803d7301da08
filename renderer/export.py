"""Video export: a timeline's frames as a pure function of time, and the PyAV writer.

The one impure part of ``renderer/`` the design allows (it writes files).  Three pieces:

* :class:`Schedule` says which step is on screen at output time ``T`` and how far into it:
  the step start times come from the caller (the overlay's Director track: the Timing
  model's ``run_time + hold`` per step), or from a match video's timing file
  (:func:`sync_starts` fills the steps without a stamp from the Timing model).
* :class:`FrameSource` rasterises ``scene(step)`` at the local time: the same game and
  settings give the same pixels on every run (no clock, no random).
* :class:`VideoWriter` encodes straight-alpha frames with PyAV in process: qtrle ``.mov``
  (exact alpha, fast), VP9 ``.webm`` with alpha, ProRes 4444 ``.mov``, a PNG sequence, or
  H.264 over a solid background (no alpha).  Closing early still leaves a playable file.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import queue
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import skia  # type: ignore[import-not-found]

from engine.errors import Place, SchemaError
from engine.state import GameState, StepKind
from engine.stats import MatchStats

from .analysis import AnalysisFrame, build_analysis_layer, compose
from .extras import build_broadcast_scene
from .matchdata import MatchData
from .raster import Assets, parse_colour, raster, to_rgba
from .scene import Scene
from .statboard import needs_stats
from .theme import Theme
from .timing import Timing
from .view import View, default_view

__all__ = [
    "Codec",
    "CODECS",
    "Schedule",
    "SyncStamps",
    "parse_sync",
    "sync_starts",
    "FrameSource",
    "VideoWriter",
    "composite_over",
    "still_from",
    "parse_fps",
]

RGBA = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Codec:
    """One output format: PyAV encoder, pixel format, file suffix and encoder options."""

    name: str
    encoder: str  # "" for the PNG sequence (written by PIL, no container)
    pix_fmt: str
    suffix: str
    alpha: bool
    options: Mapping[str, str] = field(default_factory=dict)
    decoder: str | None = None  # the decoder that keeps alpha, when ffmpeg's default drops it


#: every format ``render`` writes; qtrle first (the default: lossless alpha, ~4 ms/frame)
CODECS: dict[str, Codec] = {
    "qtrle": Codec("qtrle", "qtrle", "argb", ".mov", True),
    # realtime deadline: good quality at crf 24 and 10-20x faster than the default "good"
    "vp9": Codec(
        "vp9",
        "libvpx-vp9",
        "yuva420p",
        ".webm",
        True,
        {"deadline": "realtime", "cpu-used": "8", "row-mt": "1", "crf": "24", "b": "0"},
        decoder="libvpx-vp9",  # ffmpeg's native vp9 decoder drops the alpha plane
    ),
    "prores": Codec("prores", "prores_ks", "yuva444p10le", ".mov", True, {"profile": "4444", "vendor": "apl0"}),
    "png": Codec("png", "", "rgba", "", True),
    "h264": Codec("h264", "libx264", "yuv420p", ".mp4", False, {"preset": "veryfast", "crf": "18"}),
}


def parse_fps(text: str | float) -> Fraction:
    """``"30"``, ``"29.97"``, ``"30000/1001"`` -> a frame rate (NTSC rates exact).

    Raises:
        ValueError: not a positive rate up to 240.
    """
    try:
        fps = Fraction(str(text)).limit_denominator(1001)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"frame rate {text!r}: expected a number such as 30 or 29.97") from None
    if abs(float(fps) - 29.97) < 0.005:
        fps = Fraction(30000, 1001)
    elif abs(float(fps) - 59.94) < 0.005:
        fps = Fraction(60000, 1001)
    if not 0 < fps <= 240:
        raise ValueError(f"frame rate {text!r}: out of range (0, 240]")
    return fps


# --------------------------------------------------------------------------- schedule


@dataclass(frozen=True)
class Schedule:
    """Step start times on the output clock, and the part of the timeline to show.

    ``starts[i]`` is when step ``i`` begins; a step stays on screen until the next one
    begins, the last one for its own ``durations[-1]``.  ``first``/``last`` bound the steps
    shown (``--deals``); output time runs over ``[t0, t1)``.  Before ``starts[first]`` the
    frame is empty (a synced render starts at the match video's time 0).
    """

    starts: tuple[float, ...]
    durations: tuple[float, ...]
    first: int
    last: int
    t0: float
    t1: float

    @classmethod
    def of(
        cls,
        starts: Sequence[float],
        durations: Sequence[float],
        *,
        steps: tuple[int, int] | None = None,
        from_zero: bool = False,
    ) -> Schedule:
        """Schedule of steps ``steps = (first, last)`` (default all).

        ``from_zero``: output time starts at 0 (a synced render lines up with the video)
        rather than at the first shown step.
        """
        n = len(durations)
        if n == 0:
            return cls((), (), 0, -1, 0.0, 0.0)
        first, last = steps if steps is not None else (0, n - 1)
        first, last = max(0, first), min(n - 1, last)
        st = tuple(float(s) for s in starts[:n])
        t0 = 0.0 if from_zero else st[first]
        end = st[last] + float(durations[last])
        if last + 1 < n and st[last] < st[last + 1] < end:
            end = st[last + 1]  # a synced next step cuts the hold short
        return cls(st, tuple(float(d) for d in durations), first, last, t0, max(t0, end))

    @property
    def duration(self) -> float:
        return self.t1 - self.t0

    def frames(self, fps: Fraction) -> int:
        """Frames in ``[t0, t1)`` at ``fps`` (at least one when there is a step)."""
        if self.last < self.first:
            return 0
        return max(1, math.ceil(self.duration * fps - 1e-9))

    def time_of(self, n: int, fps: Fraction) -> float:
        """Output time of frame ``n``."""
        return self.t0 + float(Fraction(n) / fps)

    def locate(self, time: float) -> tuple[int | None, float]:
        """``(step, seconds into it)`` on screen at output time ``time``; ``None`` = empty."""
        if self.last < self.first or time < self.starts[self.first] - 1e-9:
            return None, 0.0
        i = bisect.bisect_right(self.starts, time + 1e-9, self.first, self.last + 1) - 1
        i = min(max(i, self.first), self.last)
        return i, max(0.0, time - self.starts[i])


# --------------------------------------------------------------------------- sync to a match video


@dataclass(frozen=True)
class SyncStamps:
    """Known step times (seconds into the match video), from a timing file."""

    stamps: dict[int, float]
    video_url: str | None = None


def _stamp(value: Any, where: Place) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SchemaError(f"timestamp {value!r} is not a number of seconds", where)
    return float(value)


def parse_sync(data: str | bytes, steps: Sequence[GameState], *, source: str) -> SyncStamps:
    """Read a timing file into step stamps.

    Accepted (JSON): ``{"steps": {"12": 35.2}, "deals": {"2": 80.0}, "tricks": {"2.3": 95.5},
    "offset": 0.0, "videoUrl": "..."}``: ``deals`` keys are the 1-based position of a deal
    in the file (as ``inspect`` lists them) and stamp its deal-start step; ``tricks`` keys
    are ``"deal.trick"`` (both 1-based) and stamp the trick's lead card; ``offset`` is added
    to every stamp.  An old EGN file's ``timings`` (step index -> seconds, as the EGN
    Renderer wrote it, with ``videoUrl``) is read the same way as ``steps``; there a 0 for
    any step but the first means "no cue" (the Renderer's default) and is skipped.

    Raises:
        SchemaError: not JSON, an unknown deal/trick/step, or a stamp that is not a number.
    """
    place = Place(source=source)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SchemaError(f"not a JSON timing file ({exc})", place) from None
    if not isinstance(doc, dict):
        raise SchemaError("a timing file is a JSON object", place)
    n = len(steps)
    stamps: dict[int, float] = {}
    legacy = "timings" in doc and "steps" not in doc
    table = doc.get("timings") if legacy else doc.get("steps", {})
    if isinstance(table, list):
        table = {str(i): v for i, v in enumerate(table) if v is not None}
    if not isinstance(table, dict):
        raise SchemaError("'steps' (or 'timings') maps step numbers to seconds", place)
    for key, value in table.items():
        try:
            i = int(key)
        except ValueError:
            raise SchemaError(f"step {key!r} is not a step number", place) from None
        where = place.with_(extra=(("step", i),))
        if not 0 <= i < n:
            raise SchemaError(f"no such step: the game has steps 0..{n - 1}", where)
        t = _stamp(value, where)
        if legacy and t == 0.0 and i > 0:
            continue
        stamps[i] = t
    deal_starts: dict[int, int] = {}
    lead_cards: dict[tuple[int, int], int] = {}
    for s in steps:
        if s.branch is not None:
            continue
        deal_starts.setdefault(s.deal, s.step)
        if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 1:
            lead_cards.setdefault((s.deal, s.trick.number), s.step)
    # an EGN file's own "deals" is the game, not stamps
    deal_table = {} if legacy else doc.get("deals") or {}
    trick_table = {} if legacy else doc.get("tricks") or {}
    if not isinstance(deal_table, dict) or not isinstance(trick_table, dict):
        raise SchemaError("'deals' and 'tricks' map numbers to seconds", place)
    for key, value in deal_table.items():
        try:
            d = int(key) - 1
        except ValueError:
            raise SchemaError(f"deal {key!r} is not a deal number", place) from None
        where = place.with_(deal=d + 1)
        if d not in deal_starts:
            raise SchemaError(f"no such deal: the game has deals 1..{len(deal_starts)}", where)
        stamps[deal_starts[d]] = _stamp(value, where)
    for key, value in trick_table.items():
        try:
            d_text, t_text = str(key).split(".")
            d, t = int(d_text) - 1, int(t_text) - 1
        except ValueError:
            raise SchemaError(f"trick {key!r}: expected 'deal.trick' such as '2.3'", place) from None
        where = place.with_(deal=d + 1, trick=t + 1)
        if (d, t) not in lead_cards:
            raise SchemaError("no such trick (or its lead card is not recorded)", where)
        stamps[lead_cards[(d, t)]] = _stamp(value, where)
    offset = _stamp(doc.get("offset", 0.0), place.with_(extra=(("offset", ""),)))
    stamps = {k: v + offset for k, v in stamps.items()}
    last = -math.inf
    for i in sorted(stamps):
        if stamps[i] < last:
            raise SchemaError(f"stamps go backwards: {stamps[i]} s is before an earlier step's {last} s", place.with_(extra=(("step", i),)))
        last = stamps[i]
    url = doc.get("videoUrl")
    return SyncStamps(stamps, url if isinstance(url, str) and url else None)


def sync_starts(model_starts: Sequence[float], stamps: Mapping[int, float]) -> list[float]:
    """Step start times with the stamped steps at their stamps.

    ``model_starts`` are the Timing model's start times (step ``i`` at ``model_starts[i]``).
    Between two stamped steps the model's spacing is stretched or squeezed to fit; before
    the first stamp and after the last one the model's spacing continues unchanged.  With
    no stamps the model's times are returned.
    """
    n = len(model_starts)
    known = sorted((i, float(t)) for i, t in stamps.items() if 0 <= i < n)
    if not known:
        return [float(s) for s in model_starts[:n]]
    out = [0.0] * n
    k0, s0 = known[0]
    for i in range(0, k0 + 1):
        out[i] = s0 - (model_starts[k0] - model_starts[i])
    for (a, sa), (b, sb) in zip(known, known[1:]):
        span = model_starts[b] - model_starts[a]
        for i in range(a, b + 1):
            f = (model_starts[i] - model_starts[a]) / span if span > 0 else (i - a) / (b - a)
            out[i] = sa + f * (sb - sa)
    kl, sl = known[-1]
    for i in range(kl, n):
        out[i] = sl + (model_starts[i] - model_starts[kl])
    return out


# --------------------------------------------------------------------------- frames


class FrameSource:
    """The overlay at output time ``T``: ``scene(step)`` rasterised at the step's local time.

    Scenes are built once per step (a small LRU: frames are asked for in order) with the
    given view, theme and timing at ``size``.  Pure: the same arguments give the same pixels.
    """

    def __init__(
        self,
        steps: Sequence[GameState],
        schedule: Schedule,
        *,
        view: View | None = None,
        theme: Theme | None = None,
        timing: Timing | None = None,
        title: str | None = None,
        size: tuple[int, int],
        assets: Assets | None = None,
        match: MatchData | None = None,
        images: Callable[[Sequence[str]], dict[str, bytes]] | None = None,
        stats: Callable[[int], MatchStats] | None = None,
        analysis: Callable[[int], AnalysisFrame] | None = None,
        public: bool = False,
    ) -> None:
        """``match`` and the view's extras are drawn as a channel's page draws them; ``images``
        reads the bytes of the uploaded images a scene names (the caller's files: this module
        reads none but the video it writes), and without it images draw nothing, as on a page
        that cannot load them; ``stats`` gives the statistics extras the game's statistics
        at a step (:class:`renderer.statboard.StatsBook`), without it they draw nothing.
        ``analysis`` gives each step's :class:`AnalysisFrame`: its layer is drawn from the
        step's start (``public``: as on the clean output)."""
        self.steps = steps
        self._stats = stats
        self.match, self._read_images = match, images
        self.analysis, self.public = analysis, public
        self.schedule = schedule
        self.view, self.theme, self.timing, self.title = view, theme, timing, title
        self.size = size
        # own caches (their memory goes with the export); they change speed, never pixels
        self.assets = assets or Assets.load()
        self._scenes: OrderedDict[int, tuple[Scene, float]] = OrderedDict()
        self._last: tuple[tuple[int, float], skia.Image] | None = None

    def scene(self, step: int) -> Scene:
        return self._scene(step)[0]

    def _scene(self, step: int) -> tuple[Scene, float]:
        hit = self._scenes.get(step)
        if hit is None:
            wants = self._stats is not None and self.view is not None and needs_stats(self.view.extras)
            scene = build_broadcast_scene(
                self.steps[step], self.view, self.theme, self.timing, self.match, title=self.title, size=self.size,
                stats=self._stats(step) if wants and self._stats is not None else None,
            )
            if self.analysis is not None:
                layer = build_analysis_layer(
                    self.steps[step], self.view or default_view(), self.analysis(step), self.theme, self.timing, self.match, size=self.size, public=self.public
                )
                scene = compose(scene, layer)
            missing = [i for i in scene.images if i not in self.assets.bitmaps]
            if missing and self._read_images is not None:
                for image_id, data in self._read_images(missing).items():
                    self.assets.add_image(image_id, data)
            hit = (scene, still_from(scene))
            self._scenes[step] = hit
            if len(self._scenes) > 4:
                self._scenes.popitem(last=False)
        else:
            self._scenes.move_to_end(step)
        return hit

    def image(self, time: float) -> skia.Image | None:
        """The overlay at output time ``time`` (``None``: nothing on screen)."""
        step, local = self.schedule.locate(time)
        if step is None:
            return None
        scene, still = self._scene(step)
        # a held (still) scene gives the same picture: draw it once
        key = (step, min(local, still))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        img = raster(scene, key[1], self.assets)
        self._last = (key, img)
        return img


def still_from(scene: Scene) -> float:
    """The time from which no track of ``scene`` changes (as the page player's ``isStill``)."""
    still = 0.0
    for track in scene.tracks:
        if track:
            still = max(still, float(track[-1][0]))
    return min(still, scene.duration)


def composite_over(frame: RGBA, overlay: skia.Image | None) -> RGBA:
    """Draw ``overlay`` (premultiplied) over the opaque RGBA ``frame`` in place (src-over).

    Skia blends with SIMD: at 1080p this is a few milliseconds, far quicker than numpy.
    """
    if overlay is None:
        return frame
    h, w = frame.shape[:2]
    surf = skia.Surface(frame, colorType=skia.kRGBA_8888_ColorType, alphaType=skia.kPremul_AlphaType)
    canvas = surf.getCanvas()
    if overlay.width() == w and overlay.height() == h:
        canvas.drawImage(overlay, 0, 0)
    else:
        canvas.drawImageRect(overlay, skia.Rect.MakeWH(w, h), skia.SamplingOptions(skia.FilterMode.kLinear))
    surf.flushAndSubmit()
    return frame


# --------------------------------------------------------------------------- writer


class VideoWriter:
    """Encodes frames into ``path`` with one of :data:`CODECS`.

    ``container_format`` overrides the muxer chosen from the file name.
    ``write(image)`` takes a premultiplied skia image (or ``None`` for an empty frame);
    frames are numbered in order at ``fps``.  ``close()`` flushes the encoder and finishes
    the container; ``abort(keep=True)`` does the same after an interruption (the file plays
    up to the last frame written) and ``abort(keep=False)`` removes the output.
    """

    def __init__(
        self,
        path: str | Path,
        codec: str | Codec,
        *,
        fps: Fraction,
        size: tuple[int, int],
        background: str | None = None,
        container_format: str | None = None,
    ) -> None:
        import av

        self.codec = codec if isinstance(codec, Codec) else CODECS[codec]
        self.path = Path(path)
        self.fps = fps
        self.size = size
        self.frames = 0
        self._encoded = 0  # frames the encoder thread took (the truth after an interruption)
        self.closed = False
        self._last_image: Any = _NOTHING
        self._last_name = ""
        self._error: BaseException | None = None
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=8)
        self._thread: threading.Thread | None = None
        w, h = size
        if self.codec.encoder in ("libx264", "libvpx-vp9") or self.codec.pix_fmt.startswith("yuv"):
            if w % 2 or h % 2:
                raise ValueError(f"{self.codec.name} needs an even width and height, got {w}x{h}")
        bg = background if background is not None else (None if self.codec.alpha else "#000000")
        self._bg = parse_colour(bg) if bg else None
        self._bg_surface = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(w, h)) if self._bg is not None else None
        self._blank: RGBA = np.zeros((h, w, 4), np.uint8)
        if self._bg is not None:
            self._blank[...] = _rgba_of(self._bg)
        if not self.codec.encoder:
            self.path.mkdir(parents=True, exist_ok=True)
            self._container: Any = None
            self._stream: Any = None
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._container = av.open(str(self.path), "w", format=container_format)
        stream = self._container.add_stream(self.codec.encoder, rate=fps, options=dict(self.codec.options))
        stream.width, stream.height = w, h
        stream.pix_fmt = self.codec.pix_fmt
        if self.codec.encoder == "libvpx-vp9":
            # webm: tell players the stream has alpha (the muxer writes the AlphaMode element)
            stream.metadata["alpha_mode"] = "1"
        self._stream = stream
        self._thread = threading.Thread(target=self._work, name="video-writer", daemon=True)
        self._thread.start()

    def rgba(self, image: skia.Image | None) -> RGBA:
        """The straight-alpha RGBA the encoder gets for ``image`` (background applied)."""
        if image is None:
            return self._blank
        if self._bg_surface is not None:
            canvas = self._bg_surface.getCanvas()
            canvas.clear(self._bg)
            canvas.drawImage(image, 0, 0)
            image = self._bg_surface.makeImageSnapshot()
        return to_rgba(image)

    def over_background(self, rgba: RGBA) -> RGBA:
        """A straight-alpha frame (e.g. a page screenshot) over the background, if any."""
        if self._bg is None:
            return rgba
        a = rgba[..., 3:4].astype(np.uint16)
        bg = np.array(_rgba_of(self._bg)[:3], np.uint16)
        out = np.empty_like(rgba)
        out[..., :3] = ((rgba[..., :3] * a + bg * (255 - a) + 127) // 255).astype(np.uint8)
        out[..., 3] = 255
        return out

    def write(self, image: skia.Image | None) -> None:
        """Append ``image``; the same image again (a held step) reuses the converted frame."""
        if self.frames and image is self._last_image:
            self._put(None)
            return
        self.write_rgba(self.rgba(image))
        self._last_image = image

    def write_rgba(self, rgba: RGBA) -> None:
        """Append a straight-alpha RGBA frame (the array must not change afterwards)."""
        self._last_image = _NOTHING
        self._put(rgba)

    def _put(self, rgba: RGBA | None) -> None:
        """Queue frame number ``self.frames`` (``None``: the previous picture again)."""
        if self._container is None:
            name = f"frame_{self.frames:06d}.png"
            if rgba is None:
                os.link(self.path / self._last_name, self.path / name)
            else:
                from PIL import Image

                Image.fromarray(rgba, "RGBA").save(self.path / name, compress_level=1)
                self._last_name = name
        else:
            self._check()
            self._queue.put((rgba, self.frames))
        self.frames += 1

    def _work(self) -> None:
        """The encoder thread: converts, encodes and muxes (PyAV releases the GIL there, so
        rasterising the next frame overlaps with encoding this one)."""
        import av

        last: Any = None
        try:
            while True:
                item = self._queue.get()
                if item is _NOTHING:
                    return
                rgba, pts = item
                if rgba is not None:
                    last = av.VideoFrame.from_ndarray(rgba, format="rgba").reformat(format=self.codec.pix_fmt)
                last.pts = pts  # in 1/fps units: the encoder's time base
                for packet in self._stream.encode(last):
                    self._container.mux(packet)
                self._encoded += 1
        except BaseException as exc:  # noqa: BLE001 - handed to the writing thread
            self._error = exc
            while self._queue.get() is not _NOTHING:  # unblock the producer
                pass

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def _finish(self) -> None:
        """Stop the encoder thread after the queued frames."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(_NOTHING)
            self._thread.join()

    def close(self) -> None:
        """Flush and finish the file."""
        if self.closed:
            return
        self.closed = True
        if self._container is not None:
            self._finish()
            self._check()
            for packet in self._stream.encode(None):
                self._container.mux(packet)
            self._container.close()

    def abort(self, *, keep: bool) -> None:
        """After an interruption: finish what was written (``keep``) or remove it."""
        if keep:
            self.close()
            if self._container is not None:
                # Ctrl+C may land between queueing a frame and counting it: say what the file has
                self.frames = self._encoded
            return
        self.closed = True
        if self._container is not None:
            self._finish()
            try:
                self._container.close()
            except Exception:  # noqa: BLE001 - a half-written container may refuse to close
                pass
            self.path.unlink(missing_ok=True)
        else:
            shutil.rmtree(self.path, ignore_errors=True)


_NOTHING = object()


def _rgba_of(colour: int) -> tuple[int, int, int, int]:
    return ((colour >> 16) & 255, (colour >> 8) & 255, colour & 255, (colour >> 24) & 255)
