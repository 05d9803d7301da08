"""Frames of a timeline as a pure function of output time.

Two pieces, both pure (no clock, no random, no file but the images a caller reads):

* :class:`Schedule` says which step is on screen at output time ``T`` and how far into it:
  the step start times come from the caller (the overlay's Director track: the Timing
  model's ``run_time + hold`` per step), or from a match video's timing file
  (:func:`overlay.video.sync.sync_starts` fills the steps without a stamp from the Timing
  model).
* :class:`FrameSource` draws what is on air over the step (:class:`renderer.onair.OnAir`:
  scene, analysis layer, images) at the local time: the same game and settings give the
  same pixels on every run (no clock, no random).

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

from .analysis import AnalysisFrame
from .gametitle import MatchGame
from .matchdata import MatchData
from .onair import ImageReader, OnAir, Views, build_on_air, draw, load_images, still_from
from .raster import Assets
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

    ``skip`` (seconds, a whole number of frames) leaves out the start of the video
    (``--from``, :meth:`window`): frame ``n`` is the frame ``n + skip * fps`` of the video
    without it, at the very same output time, so a window's frames are that video's frames.
    """

    starts: tuple[float, ...]
    durations: tuple[float, ...]
    first: int
    last: int
    t0: float
    t1: float
    skip: Fraction = Fraction(0)

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
        """Seconds of video (after ``skip``)."""
        return self.t1 - self.t0 - float(self.skip)

    def frames(self, fps: Fraction) -> int:
        """Frames in ``[t0 + skip, t1)`` at ``fps`` (at least one when there is a step)."""
        if self.last < self.first:
            return 0
        return max(1, math.ceil((self.t1 - self.t0) * fps - 1e-9) - math.ceil(self.skip * fps))

    def time_of(self, n: int, fps: Fraction) -> float:
        """Output time of frame ``n``."""
        return self.t0 + float(Fraction(n) / fps + self.skip)

    def window(self, fps: Fraction, start: float | None = None, end: float | None = None) -> Schedule:
        """This video from ``start`` to ``end`` (seconds into it; ``None``: its start, its end):
        the frames ``k`` with ``start <= k / fps < end``, the first of them frame 0.

        The steps shown are narrowed to those on screen in the window, so a piece of a
        render (a Ray segment, a deal label) starts from the window's first step.

        Raises:
            ValueError: ``start`` is not before ``end``, or not before the end of the video.
        """
        total = self.frames(fps)
        if total == 0:
            raise ValueError("the video has no frame")
        before = math.ceil(self.skip * fps)
        lo = 0 if start is None else max(0, math.ceil(Fraction(start) * fps - Fraction(1, 10**9)))
        hi = total if end is None else min(total, max(0, math.ceil(Fraction(end) * fps - Fraction(1, 10**9))))
        if start is not None and end is not None and end <= start:
            raise ValueError(f"the window ends ({end:g} s) before it starts ({start:g} s)")
        if lo >= total:
            raise ValueError(f"the window starts at {start:g} s, after the video's end ({float(Fraction(total) / fps):g} s, {total} frames)")
        if hi <= lo:
            raise ValueError(f"the window from {start or 0:g} s to {end:g} s holds no frame at {float(fps):g} fps")
        skip = Fraction(before + lo) / fps
        t1 = self.t1 if hi == total else self.t0 + float(Fraction(before + hi) / fps)
        # the window's first and last frames are this video's frames lo and hi - 1, at the same times
        a, _ = self.locate(self.time_of(lo, fps))
        b, _ = self.locate(self.time_of(hi - 1, fps))
        first = self.first if a is None else a
        last = self.last if b is None else b
        return Schedule(self.starts, self.durations, first, last, self.t0, t1, skip)

    def locate(self, time: float) -> tuple[int | None, float]:
        """``(step, seconds into it)`` on screen at output time ``time``; ``None`` = empty."""
        if self.last < self.first or time < self.starts[self.first] - 1e-9:
            return None, 0.0
        i = bisect.bisect_right(self.starts, time + 1e-9, self.first, self.last + 1) - 1
        i = min(max(i, self.first), self.last)
        return i, max(0.0, time - self.starts[i])


# --------------------------------------------------------------------------- frames


class FrameSource:
    """The overlay at output time ``T``: what is on air over the step on screen
    (:class:`renderer.onair.OnAir`: scene, analysis layer, images) drawn at the step's local
    time.

    Each step's :class:`OnAir` is built once (a small LRU: frames are asked for in order) with
    the view on air at that step (``view``: one view, or :class:`renderer.onair.Views` with
    the view switches), theme and timing at ``size``.  Pure: the same arguments give the
    same pixels.
    """

    def __init__(
        self,
        steps: Sequence[GameState],
        schedule: Schedule,
        *,
        view: View | Views | None = None,
        theme: Theme | None = None,
        timing: Timing | None = None,
        title: str | None = None,
        size: tuple[int, int],
        assets: Assets | None = None,
        match: MatchData | None = None,
        images: ImageReader | None = None,
        stats: Callable[[int], MatchStats] | None = None,
        analysis: Callable[[int], AnalysisFrame] | None = None,
        public: bool = False,
        game: MatchGame | None = None,
    ) -> None:
        """``match`` and the view's extras are drawn as a channel's page draws them; ``images``
        reads the bytes of the uploaded images a scene names (the caller's files: this module
        reads none but the video it writes), and without it images draw nothing, as on a page
        that cannot load them; ``stats`` gives the statistics extras the game's statistics
        at a step (:class:`renderer.statboard.StatsBook`), without it they draw nothing.
        ``analysis`` gives each step's :class:`AnalysisFrame`: its layer is drawn from the
        step's start (``public``: as on the clean output).  ``game``: which game of a match
        (the title element's last line), as the channel's pages draw it."""
        self.steps = steps
        self._stats = stats
        self.match, self._read_images = match, images
        self.analysis, self.public = analysis, public
        self.schedule = schedule
        self.views = view if isinstance(view, Views) else Views(view)
        self.theme, self.timing, self.title, self.game = theme, timing, title, game
        self.size = size
        # own caches (their memory goes with the export); they change speed, never pixels
        self.assets = assets or Assets.load()
        self._on_air: OrderedDict[int, tuple[OnAir, float]] = OrderedDict()
        self._last: tuple[tuple[int, float], skia.Image] | None = None

    @property
    def view(self) -> View | None:
        """The output's own view (before any view switch)."""
        return self.views.base

    def on_air(self, step: int) -> OnAir:
        """What is on air over ``step`` (its images loaded into :attr:`assets`)."""
        return self._entry(step)[0]

    def scene(self, step: int) -> Scene:
        """The scene of ``step`` (without its analysis layer)."""
        return self._entry(step)[0].scene

    def _entry(self, step: int) -> tuple[OnAir, float]:
        hit = self._on_air.get(step)
        if hit is None:
            view = self.views.at(step)
            wants = self._stats is not None and needs_stats((view or default_view()).extras)
            on_air = build_on_air(
                self.steps[step], view, self.theme, self.timing, self.match, title=self.title, size=self.size,
                stats=self._stats(step) if wants and self._stats is not None else None,
                analysis=None if self.analysis is None else self.analysis(step),
                public=self.public,
                game=self.game,
            )
            load_images(on_air, self.assets, self._read_images)
            hit = (on_air, on_air.still)
            self._on_air[step] = hit
            if len(self._on_air) > 4:
                self._on_air.popitem(last=False)
        else:
            self._on_air.move_to_end(step)
        return hit

    def key(self, time: float) -> tuple[int, float] | None:
        """What the frame at output time ``time`` shows: ``(step, local time)`` with the local
        time held at the step's still point, so two times with the same key give the same
        picture (``None``: nothing on screen)."""
        step, local = self.schedule.locate(time)
        if step is None:
            return None
        return (step, min(local, self._entry(step)[1]))

    def image(self, time: float) -> skia.Image | None:
        """The overlay at output time ``time`` (``None``: nothing on screen); the same key
        (:meth:`key`: a held frame) gives the same image object, drawn once."""
        key = self.key(time)
        if key is None:
            return None
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        img = draw(self._entry(key[0])[0], key[1], self.assets)
        assert img is not None
        self._last = (key, img)
        return img


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
