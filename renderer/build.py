"""``build_scene``: the display list of one game state in one view, theme and timing.

Pure: a function of its arguments.  Scene time 0 is the start of the state's step; its
animation runs for the step kind's ``run_time`` and the scene is still after ``run + hold``.
"""

from __future__ import annotations

from engine.state import GameState

from .altline import AltLine
from .context import HAND_TYPES, Ctx
from .gametitle import MatchGame
from .panels import SIZES, draw_panel, title_size
from .scene import Fit, Scene
from .table import HAND_H, HAND_W, PLAY_H, PLAY_W, draw_flights, draw_hand, draw_play_area
from .theme import DEFAULT_THEME, Theme
from .timing import DEFAULT_TIMING, Timing
from .view import Element, ElementType, View, default_view

__all__ = ["build_scene", "element_size"]

_DEFAULT_VIEW: View | None = None


def element_size(t: ElementType) -> tuple[float, float]:
    """Unscaled box of an element type, in view pixels."""
    if t in HAND_TYPES:
        return HAND_W, HAND_H
    if t is ElementType.PLAY_AREA:
        return PLAY_W, PLAY_H
    return SIZES[t.value]


def build_scene(
    state: GameState,
    view: View | None = None,
    theme: Theme | None = None,
    timing: Timing | None = None,
    *,
    title: str | None = None,
    size: tuple[int, int] | None = None,
    teams: tuple[str, ...] = (),
    photos: tuple[str | None, ...] = (),
    line: AltLine | None = None,
    subtitle: str = "",
    game: MatchGame | None = None,
) -> Scene:
    """Compute the scene of ``state``.

    ``size`` is the output canvas in pixels (default: the view's own size); the view is scaled
    uniformly to fit it and centred.  ``teams`` are the match data's team names (the scorebug
    and name plates prefer them to the players' surnames; empty = those); ``photos`` per seat
    an image id drawn on the name plate (:mod:`renderer.photo`); ``line`` the alternative
    line on air, whose cards are marked (:mod:`renderer.altline`); ``subtitle`` the event's
    subtitle, which the title element shows on a line of its own; ``game`` which game of a
    match this is ("Game 2 of 3", :mod:`renderer.gametitle`), on the title's last line.
    """
    global _DEFAULT_VIEW
    if view is None:
        if _DEFAULT_VIEW is None:
            _DEFAULT_VIEW = default_view()
        view = _DEFAULT_VIEW
    ctx = Ctx(state, view, theme or DEFAULT_THEME, timing or DEFAULT_TIMING, title, teams=tuple(teams), photos=tuple(photos), line=line, subtitle=subtitle, game=game)
    out_w, out_h = size or (view.width, view.height)
    fit = Fit.of(view.width, view.height, out_w, out_h)
    ctx.out_scale = fit.scale
    b = ctx.b
    b.save()
    b.translate(fit.ox, fit.oy)
    b.scale(fit.scale)
    boxes = []
    for el in view.elements:
        if not el.visible:
            continue
        box = title_size(ctx) if el.type is ElementType.TITLE else element_size(el.type)
        boxes.append(fit.box(el.id, el.type.value, el.x, el.y, box, el.scale))
        _draw(ctx, el)
    draw_flights(ctx)
    b.restore()
    return b.scene(out_w, out_h, background=view.background, duration=max(ctx.st.total, b.duration), elements=boxes)


def _draw(ctx: Ctx, el: Element) -> None:
    b = ctx.b
    b.save()
    b.translate(el.x, el.y)
    b.scale(el.scale)
    if el.type in HAND_TYPES:
        draw_hand(ctx, el, HAND_TYPES.index(el.type))
    elif el.type is ElementType.PLAY_AREA:
        draw_play_area(ctx, el)
    else:
        draw_panel(ctx, el)
    b.restore()
