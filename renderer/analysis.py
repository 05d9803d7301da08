"""Analysis on air: the typed input (:class:`AnalysisFrame`) and the analysis layer scene.

The renderer stays a function of its inputs: the analysis of a step (``analyse --json``'s step
object, :meth:`engine.analysis.StepAnalysis.to_json`), the previous one (the win-probability
bar moves from its value) and the match graph's points are one explicit argument,
:class:`AnalysisFrame`.  :func:`build_analysis_layer` draws the analysis extras of a view
(:data:`ANALYSIS_TYPES`, drawn by :mod:`renderer.insights`) into a scene of their own, with the
existing ops through the Builder; its time 0 is when the analysis is shown:

* a video (``render --analysis``) has the analysis of every step at once: :func:`compose`
  appends the layer to the step's scene, so it starts with the step;
* a page gets its step scene at once and the layer when a worker has the analysis; the page
  player draws the layer over the step scene on a clock of its own, so the step's animation
  is not restarted (``overlay/service/analysis.py`` says why the layer is a separate scene).

A view that places none of the analysis extras gets :func:`default_extras` (turning analysis
on shows it without editing the view; the studio adds them to move or hide them).  An output
that hides hole cards (``public=True``) draws only the win probability (labelled "EST.") and
the graph, whatever the frame holds: never a best-card mark, a loss badge or a bidding table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.analysis import Analyst, deal_ends
from engine.ruleset import Ruleset
from engine.state import GameState

from .context import Ctx
from .insights import draw_insight
from .matchdata import MatchData, apply_match
from .reading import ANALYSIS_SIZES, ANALYSIS_TYPES, AnalysisFrame, CallRow, Reading
from .scene import Builder, Fit, Op, Scene
from .theme import DEFAULT_THEME, Theme
from .timing import DEFAULT_TIMING, Timing
from .view import Extra, ExtraType, View

__all__ = [
    "ANALYSIS_TYPES",
    "ANALYSIS_SIZES",
    "CallRow",
    "Reading",
    "AnalysisFrame",
    "default_extras",
    "analysis_extras",
    "build_analysis_layer",
    "compose",
    "GameAnalysis",
]

#: where the defaults sit on the 1920x1080 default view (free space, inside title-safe)
_DEFAULT_PLACES: dict[ExtraType, tuple[float, float]] = {
    ExtraType.WIN_BAR: (96.0, 244.0),
    ExtraType.WIN_GRAPH: (1464.0, 176.0),  # under the title grown for an event subtitle, over the BEST tabs of the east hand
    ExtraType.BEST_PLAY: (1220.0, 610.0),
    ExtraType.PLAY_QUALITY: (1220.0, 684.0),
    ExtraType.BIDDING_TABLE: (96.0, 640.0),
}


def default_extras() -> tuple[Extra, ...]:
    """The analysis extras at their default places on the default view."""
    return tuple(Extra(id=t.value, type=t, x=x, y=y) for t, (x, y) in _DEFAULT_PLACES.items())


def analysis_extras(view: View) -> tuple[Extra, ...]:
    """The visible analysis extras of ``view``; :func:`default_extras` when it places none
    (scaled to the view's size)."""
    own = [e for e in view.extras if e.type in ANALYSIS_TYPES]
    if not own:
        sx, sy = view.width / 1920, view.height / 1080
        s = min(sx, sy)
        own = [e.model_copy(update={"x": e.x * sx, "y": e.y * sy, "scale": s}) for e in default_extras()]
    return tuple(e for e in own if e.visible)


def build_analysis_layer(
    state: GameState,
    view: View,
    frame: AnalysisFrame,
    theme: Theme | None = None,
    timing: Timing | None = None,
    match: MatchData | None = None,
    *,
    size: tuple[int, int] | None = None,
    public: bool = False,
) -> Scene:
    """The analysis extras of ``view`` for ``state``, as a transparent scene of their own
    (time 0: when the analysis is shown).  ``public``: the output hides hole cards (the clean
    output): only the win probability and the graph are drawn.  Pure."""
    theme = theme or DEFAULT_THEME
    timing = timing or DEFAULT_TIMING
    shown = apply_match(state, match)
    teams = tuple(t.name for t in match.teams) if match is not None else ()
    ctx = Ctx(shown, view, theme, timing, None, Builder(), teams=teams)
    out_w, out_h = size or (view.width, view.height)
    fit = Fit.of(view.width, view.height, out_w, out_h)
    ctx.out_scale = fit.scale
    b = ctx.b
    boxes: list[dict[str, Any]] = []
    b.save()
    b.translate(fit.ox, fit.oy)
    b.scale(fit.scale)
    for ex in analysis_extras(view):
        if public and ex.type not in (ExtraType.WIN_BAR, ExtraType.WIN_GRAPH):
            continue
        boxes.append(fit.box(ex.id, ex.type.value, ex.x, ex.y, ANALYSIS_SIZES[ex.type], ex.scale))
        draw_insight(ctx, ex, frame, public=public)
    b.restore()
    return b.scene(out_w, out_h, background=None, duration=b.duration, elements=boxes)


def _shift(op: Op, by: int) -> Op:
    return [{"k": v["k"] + by} if isinstance(v, dict) and "k" in v else v for v in op]


def compose(scene: Scene, layer: Scene) -> Scene:
    """``layer`` drawn over ``scene`` from the scene's time 0 (its tracks renumbered after the
    scene's), as one scene: what a video shows.  Pure."""
    if not layer.ops:
        return scene
    n = len(scene.tracks)
    defs = dict(scene.defs)
    defs.update(layer.defs)
    return Scene(
        width=scene.width,
        height=scene.height,
        background=scene.background,
        duration=max(scene.duration, layer.duration),
        fonts=sorted(set(scene.fonts) | set(layer.fonts)),
        tracks=scene.tracks + layer.tracks,
        defs=defs,
        ops=scene.ops + [_shift(op, n) for op in layer.ops],
        elements=scene.elements + layer.elements,
        images=sorted(set(scene.images) | set(layer.images)),
    )


class GameAnalysis:
    """The :class:`AnalysisFrame` of every step of one game, computed synchronously (a video:
    ``render --analysis``): the step's analysis, the previous step's, and the graph up to the
    step.  ``public``: from public information only (what the clean output may show).  Pure:
    the same steps give the same frames."""

    def __init__(self, steps: Sequence[GameState], rules: Ruleset | None = None, *, public: bool = False) -> None:
        self.steps = steps
        self.public = public
        self.analyst = Analyst(rules or Ruleset())
        self._readings: dict[int, dict[str, Any]] = {}

    def reading(self, step: int) -> dict[str, Any]:
        """The ``analyse --json`` step object of ``step`` (kept: frames ask for each twice)."""
        hit = self._readings.get(step)
        if hit is None:
            hit = self._readings[step] = self.analyst.analyse(self.steps[step], public=self.public).to_json()
        return hit

    def __call__(self, step: int) -> AnalysisFrame:
        previous = self.reading(step - 1) if step > 0 else None
        graph = [p.to_json() for p in self.analyst.graph(self.steps[0], deal_ends(self.steps[: step + 1]))]
        # through JSON, as the live message carries them: video and page draw the same values
        return AnalysisFrame.from_json(self.reading(step), previous, graph)
