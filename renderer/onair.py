"""What is on air: the one description of a moment that every output draws.

At any moment an output shows three parts, and every output draws the same three:

* the **scene** of the step on screen: the view's elements and extras, the match data, the
  deal transition (:func:`step_scene`, :func:`renderer.extras.build_broadcast_scene`);
* the **analysis layer** of that step when analysis is on: a scene of its own, on a clock
  of its own (:func:`analysis_layer`, :func:`renderer.analysis.build_analysis_layer`);
* the **uploaded images** both name (logo and sponsor slots, photo badges, the stinger
  image): :attr:`OnAir.images`, read by the caller (this package reads no files).

:class:`OnAir` holds them.  Its layer starts at ``layer_start`` seconds of the scene's clock:
0 where every step's analysis is known at once (a video), later on a page, where the layer
arrives when a worker has it and runs on the wall clock from then (``layer_t`` of
:func:`draw`).  The executors:

==========================  ===========================================================
output                      gets its :class:`OnAir` from, and draws it with
==========================  ===========================================================
the OBS page                the page socket: a ``scene`` message (``scene``) and an
                            ``analysis`` message (``layer``); the page's player
                            (``setScene``/``setLayer``/``renderAt(t, layerT)``), images
                            from ``/media/``
``inject``                  the same two messages (:class:`overlay.browser.inject.LiveOverlay`);
                            :func:`draw`, images from the server's ``/media/``
``render``, ``composite``,  :meth:`renderer.frames.FrameSource.on_air` per step;
``render --ray``, ``frame`` :func:`draw`, images from the uploads folder
``capture``                 :meth:`~renderer.frames.FrameSource.on_air` per step as JSON
                            (:meth:`OnAir.dumps`) to the OGraf graphic
                            (``player.setOnAir``), images served from the uploads folder
==========================  ===========================================================

``tests/video/test_onair_conformance.py`` draws one moment with a logo, a photo and analysis
through every output and holds them to the design's parity tolerance.
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import skia  # type: ignore[import-not-found]

from engine.state import GameState
from engine.stats import MatchStats

from .altline import AltLine
from .analysis import AnalysisFrame, build_analysis_layer
from .extras import build_broadcast_scene
from .gametitle import MatchGame
from .matchdata import MatchData
from .ops import SceneError
from .raster import Assets, raster
from .scene import Scene
from .theme import Theme
from .timing import Timing
from .view import View, default_view

__all__ = ["OnAir", "Views", "ImageReader", "step_scene", "analysis_layer", "build_on_air", "still_from", "load_images", "draw"]

log = logging.getLogger("renderer.onair")

#: reads uploaded images by id: ``ids -> {id: bytes}`` (ids it cannot read are left out)
ImageReader = Callable[[Sequence[str]], dict[str, bytes]]


def still_from(scene: Scene) -> float:
    """The time from which no track of ``scene`` changes (as the page player's ``isStill``)."""
    still = 0.0
    for track in scene.tracks:
        if track:
            still = max(still, float(track[-1][0]))
    return min(still, scene.duration)


@dataclass(frozen=True)
class OnAir:
    """The parts on air over one step: its scene, its analysis layer (if any) and, through
    them, the images they name.  ``layer_start``: the scene time at which the layer's own
    clock starts (0: with the step)."""

    scene: Scene
    layer: Scene | None = None
    layer_start: float = 0.0

    @property
    def images(self) -> list[str]:
        """Every uploaded image the scene and the layer draw (sorted)."""
        ids = set(self.scene.images)
        if self.layer is not None:
            ids.update(self.layer.images)
        return sorted(ids)

    @property
    def still(self) -> float:
        """Scene time from which nothing on air moves (the layer's tracks included)."""
        still = still_from(self.scene)
        if self.layer is not None:
            still = max(still, self.layer_start + still_from(self.layer))
        return still

    @property
    def duration(self) -> float:
        """Scene time at which both the scene and the layer have run their course (the settled frame)."""
        end = self.scene.duration
        if self.layer is not None:
            end = max(end, self.layer_start + self.layer.duration)
        return end

    def with_layer(self, layer: Scene | None, start: float = 0.0) -> OnAir:
        """The same scene with ``layer`` on it from scene time ``start``."""
        return OnAir(self.scene, layer, start)

    def to_json(self) -> dict[str, Any]:
        """``{"scene": ..., "layer": ... | null, "layerStart": s}``: what the page player's
        ``setOnAir`` takes."""
        return {"scene": self.scene.to_json(), "layer": None if self.layer is None else self.layer.to_json(), "layerStart": self.layer_start}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str = "on air") -> OnAir:
        """An :class:`OnAir` from :meth:`to_json`'s data; a bare scene is a scene without layer.

        Raises:
            SceneError: the scene or the layer breaks the op table.
        """
        if "scene" not in data:
            return cls(Scene.from_json(data, source=source))
        layer = data.get("layer")
        return cls(
            Scene.from_json(data["scene"], source=source),
            None if layer is None else Scene.from_json(layer, source=f"{source} layer"),
            float(data.get("layerStart") or 0.0),
        )


@dataclass(frozen=True)
class Views:
    """The view an output shows at each step: its own (``base``), and from each switch's
    step on the view that switch puts on air (``switches``: ``(step, view)`` by step).

    Values, so a render's worker process gets them as they are (the service resolves the
    same switches per step in :meth:`overlay.service.outputs.RenderSettings.view`)."""

    base: View | None = None
    switches: tuple[tuple[int, View], ...] = ()

    def at(self, step: int) -> View | None:
        """The view on air at ``step``."""
        if not self.switches:
            return self.base
        i = bisect.bisect_right([s for s, _ in self.switches], step) - 1
        return self.base if i < 0 else self.switches[i][1]

    def all(self) -> list[View]:
        """Every view this output may show (the images they name travel with a render)."""
        out = [v for _, v in self.switches]
        return out if self.base is None else [self.base, *out]


def step_scene(
    state: GameState,
    view: View | None,
    theme: Theme | None,
    timing: Timing | None,
    match: MatchData | None,
    *,
    title: str | None,
    size: tuple[int, int] | None,
    line: AltLine | None = None,
    stats: MatchStats | None = None,
    game: MatchGame | None = None,
) -> Scene:
    """The scene of ``state`` as an output shows it: the view's elements and extras, the
    match data, the deal transition (``line``: an alternative line on air; ``stats``: the
    statistics extras' numbers; ``game``: which game of a match).  Pure."""
    return build_broadcast_scene(state, view, theme, timing, match, title=title, size=size, line=line, stats=stats, game=game)


def analysis_layer(
    state: GameState,
    view: View | None,
    frame: AnalysisFrame,
    theme: Theme | None,
    timing: Timing | None,
    match: MatchData | None,
    *,
    size: tuple[int, int] | None,
    public: bool,
) -> Scene:
    """The analysis layer of ``state`` (``public``: what an output that hides hole cards may
    show).  Pure."""
    return build_analysis_layer(state, view or default_view(), frame, theme, timing, match, size=size, public=public)


def build_on_air(
    state: GameState,
    view: View | None,
    theme: Theme | None,
    timing: Timing | None,
    match: MatchData | None,
    *,
    title: str | None,
    size: tuple[int, int] | None,
    line: AltLine | None = None,
    stats: MatchStats | None = None,
    analysis: AnalysisFrame | None = None,
    public: bool = False,
    game: MatchGame | None = None,
) -> OnAir:
    """Everything on air over ``state``'s step, the layer from the step's start: what a
    video shows.  Pure."""
    scene = step_scene(state, view, theme, timing, match, title=title, size=size, line=line, stats=stats, game=game)
    layer = None
    if analysis is not None:
        layer = analysis_layer(state, view, analysis, theme, timing, match, size=size, public=public)
        if not layer.ops:
            layer = None
    return OnAir(scene, layer)


def load_images(on_air: OnAir, assets: Assets, read: ImageReader | None) -> list[str]:
    """Decode the images ``on_air`` names that ``assets`` lacks, through ``read``; returns the
    ids still missing.  An image that cannot be read or decoded draws nothing (as on a page
    whose image fails to load): it never stops the picture."""
    missing = [i for i in on_air.images if i not in assets.bitmaps]
    if not missing or read is None:
        return missing
    for image_id, data in read(missing).items():
        try:
            assets.add_image(image_id, data)
        except SceneError as exc:
            log.warning("%s", exc)
    return [i for i in missing if i not in assets.bitmaps]


def draw(on_air: OnAir | None, t: float, assets: Assets | None = None, *, layer_t: float | None = None) -> skia.Image | None:
    """``on_air`` at scene time ``t`` with skia: the scene, then the layer over it at
    ``layer_t`` (default ``t - layer_start``), as the page player draws them; ``None`` when
    nothing is on air.  The images must be in ``assets`` (:func:`load_images`)."""
    if on_air is None:
        return None
    lt = t - on_air.layer_start if layer_t is None else layer_t
    return raster(on_air.scene, t, assets, layer=on_air.layer, layer_t=lt)
