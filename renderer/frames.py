"""Frames of a timeline as a pure function of output time.

Two pieces, both pure (no clock, no random, no file but the images a caller reads):

* :class:`Schedule` says which step is on screen at output time ``T`` and how far into it:
  the step start times come from the caller (the overlay's Director track: the Timing
  model's ``run_time + hold`` per step), or from a match video's timing file
  (:func:`overlay.video.sync.sync_starts` fills the steps without a stamp from the Timing
  model).
* :class:`FrameSource` rasterises ``scene(step)`` at the local time: the same game and
  settings give the same pixels on every run (no clock, no random).

The PyAV writer that turns these frames into files lives with the video tools
(:mod:`overlay.video.writer`), as does the timing-file parser (:mod:`overlay.video.sync`).
"""

from __future__ import annotations

import bisect
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import skia  # type: ignore[import-not-found]

from engine.state import GameState
from engine.stats import MatchStats

from .analysis import AnalysisFrame, build_analysis_layer, compose
from .extras import build_broadcast_scene
from .matchdata import MatchData
from .raster import Assets, raster
from .scene import Scene
from .statboard import needs_stats
from .theme import Theme
from .timing import Timing
from .view import View, default_view

__all__ = ["Schedule", "FrameSource", "composite_over", "still_from"]

RGBA = npt.NDArray[np.uint8]


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
