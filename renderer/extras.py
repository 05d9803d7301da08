"""Broadcast extras drawn over the game elements: the event title, the player-intro lower
third and the deal transition; and :func:`build_broadcast_scene`, the scene of a channel
output with its match data applied.

Extras are placed like elements (``View.extras``: x, y, scale, style) but live apart from
``View.elements``, so :func:`renderer.build.build_scene` and every other caller of it draw
views with extras unchanged.  The extras' ops are appended after the scene's own with the
same fit-to-output transform; they use only the existing op set, so both executors draw them.
"""

from __future__ import annotations

from engine.state import GameState, StepKind, team_of
from engine.stats import MatchStats

from .altline import AltLine
from .reading import ANALYSIS_SIZES, ANALYSIS_TYPES
from .build import build_scene
from .context import Ctx
from .contrast import ink_on
from .fonts import measure
from .gametitle import MatchGame
from .linemarks import draw_banner
from .matchdata import MatchData, apply_match
from .panels import extra_panel
from .scene import Builder, Fit, Scene
from .statboard import STATS_SIZES, STATS_TYPES, draw_stats_extra
from .theme import DEFAULT_THEME, Theme
from .timing import DEFAULT_TIMING, Timing
from .view import Extra, ExtraType, View, default_view

__all__ = ["EXTRA_SIZES", "extra_size", "build_broadcast_scene", "draw_extras"]

EXTRA_SIZES: dict[ExtraType, tuple[float, float]] = {
    ExtraType.EVENT_TITLE: (560.0, 100.0),
    ExtraType.PLAYER_INTRO: (600.0, 132.0),  # fits beside the south hand on the default view
    ExtraType.LOGO: (320.0, 180.0),
    **STATS_SIZES,
    **ANALYSIS_SIZES,  # drawn by renderer.analysis, from an AnalysisFrame
}


def extra_size(t: ExtraType) -> tuple[float, float]:
    """Unscaled box of an extra, in view pixels."""
    return EXTRA_SIZES[t]


def build_broadcast_scene(
    state: GameState,
    view: View | None = None,
    theme: Theme | None = None,
    timing: Timing | None = None,
    match: MatchData | None = None,
    *,
    title: str | None = None,
    size: tuple[int, int] | None = None,
    line: AltLine | None = None,
    stats: MatchStats | None = None,
    game: MatchGame | None = None,
) -> Scene:
    """The scene of one output: ``build_scene`` with the match's display names, team names,
    photos and event title, then the view's extras and the deal transition on top
    (``game``: which game of a match, :func:`renderer.build.build_scene`).

    ``line``: the alternative line on air (the banner and the line's card marks,
    :mod:`renderer.altline`); ``stats``: the game's statistics up to ``state`` for the
    statistics extras (:mod:`renderer.statboard`; they draw nothing without)."""
    view = view or default_view()
    theme = theme or DEFAULT_THEME
    timing = timing or DEFAULT_TIMING
    shown = apply_match(state, match)
    title = match.title_for(title) if match is not None else title
    teams = tuple(t.name for t in match.teams) if match is not None else ()
    photos = tuple(p.photo for p in match.players) if match is not None else ()
    subtitle = match.event_subtitle if match is not None else ""
    scene = build_scene(shown, view, theme, timing, title=title, size=size, teams=teams, photos=photos, line=line, subtitle=subtitle, game=game)
    return draw_extras(scene, shown, view, theme, timing, match, title=title, line=line, stats=stats)


def draw_extras(
    scene: Scene,
    state: GameState,
    view: View,
    theme: Theme,
    timing: Timing,
    match: MatchData | None,
    *,
    title: str | None,
    line: AltLine | None = None,
    stats: MatchStats | None = None,
) -> Scene:
    """``scene`` with the extras of ``view``, the deal transition and, with ``line``, the
    alternative-line banner appended (pure)."""
    style = timing.transition.style
    wipe = style != "cut" and state.kind is StepKind.DEAL_START and state.deal > 0
    extras = [e for e in view.extras if e.visible and e.type not in ANALYSIS_TYPES]
    if not extras and not wipe and line is None:
        return scene
    b = Builder()
    b.tracks = list(scene.tracks)
    b.defs = dict(scene.defs)
    b.fonts = set(scene.fonts)
    b.images = set(scene.images)
    teams = tuple(t.name for t in match.teams) if match is not None else ()
    ctx = Ctx(state, view, theme, timing, title, b, teams=teams)
    fit = Fit.of(view.width, view.height, scene.width, scene.height)
    ctx.out_scale = fit.scale
    boxes = list(scene.elements)
    b.save()
    b.translate(fit.ox, fit.oy)
    b.scale(fit.scale)
    for ex in extras:
        size = _event_title_size(match) if ex.type is ExtraType.EVENT_TITLE else extra_size(ex.type)
        boxes.append(fit.box(ex.id, ex.type.value, ex.x, ex.y, size, ex.scale))
        b.save()
        b.translate(ex.x, ex.y)
        b.scale(ex.scale)
        if ex.type is ExtraType.EVENT_TITLE:
            _event_title(ctx, ex, match, title)
        elif ex.type is ExtraType.PLAYER_INTRO:
            _player_intro(ctx, ex, match)
        elif ex.type is ExtraType.LOGO:
            _logo(ctx, ex)
        elif ex.type in STATS_TYPES:
            draw_stats_extra(ctx, ex, stats, match, extra_panel)
        b.restore()
    if wipe and style == "stinger":
        _stinger(ctx, view)
    elif wipe:
        _wipe(ctx, view)
    if line is not None:
        draw_banner(ctx, line)  # over everything, the transition included
    b.restore()
    return b.scene(scene.width, scene.height, background=scene.background, duration=max(scene.duration, b.duration),
                   elements=boxes, under=scene.ops)


def _team_label(ctx: Ctx, match: MatchData | None, team: int, font: str, size: float, width: float, *, ls: float = 1.0) -> str:
    """The match data's team name, else the context's fallback (whole names that fit)."""
    name = match.teams[team].name if match is not None and team < len(match.teams) else ""
    return name or ctx.team_label(team, font, size, width, ls=ls)


#: how much taller the event title is with a subtitle (a line of its own)
EVENT_GROWTH = 30.0


def _event_title_size(match: MatchData | None) -> tuple[float, float]:
    w, h = EXTRA_SIZES[ExtraType.EVENT_TITLE]
    return w, h + (EVENT_GROWTH if match is not None and match.event_subtitle else 0.0)


def _event_title(ctx: Ctx, ex: Extra, match: MatchData | None, title: str | None) -> None:
    """The event title, its subtitle on a line of its own (the panel grows for it) and the
    teams."""
    th = ctx.theme
    w, h = _event_title_size(match)
    extra_panel(ctx, ex, w, h)
    ctx.b.rrect(0, 0, 8, h, 4, th.accent, None, 0)
    text = ctx.text_colour(None) if ex.style.text_colour is None else ex.style.text_colour
    head = (match.event_title if match is not None and match.event_title else title or "Euchre").upper()
    ctx.label(th.font_title, ex.style.font_size or 34, 28, 44, head, text, width=w - 48, ls=1.0)
    sub = match.event_subtitle if match is not None else ""
    y = 80.0
    if sub:
        ctx.label(th.font_body, 22, 28, 76, sub.upper(), text, width=w - 48, ls=1.0)
        y += EVENT_GROWTH
    half = (w - 48) / 2 - 40
    teams = f"{_team_label(ctx, match, 0, th.font_body, 20, half)}  vs  {_team_label(ctx, match, 1, th.font_body, 20, half)}"
    ctx.label(th.font_body, 20, 28, y, teams.upper(), th.muted, width=w - 48, ls=1.5)
    ctx.b.rrect(w - 20, 14, 6, h / 2 - 18, 3, th.team_ns, None, 0)
    ctx.b.rrect(w - 20, h / 2 + 4, 6, h / 2 - 18, 3, th.team_ew, None, 0)


def _player_intro(ctx: Ctx, ex: Extra, match: MatchData | None) -> None:
    """The lower third of ``match.intro``'s player: slides up and fades in over the step's run."""
    if match is None or match.intro is None or match.intro >= ctx.players:
        return
    seat = match.intro
    th, b = ctx.theme, ctx.b
    w, h = extra_size(ex.type)
    team = team_of(seat)
    colour = ctx.team_colour(team)
    player = match.players[seat] if seat < len(match.players) else None
    b.save()
    b.alpha(b.tween(0.0, 0.35, 0.0, 1.0, "out"))
    b.translate(0, b.tween(0.0, 0.45, 24.0, 0.0, "out"))
    extra_panel(ctx, ex, w, h)
    b.rrect(0, 0, 14, h, 6, colour, None, 0)
    # the seat badge: the player's photo, else initials, on the team colour
    b.rrect(34, 18, 96, 96, 48, colour, None, 0)
    if player is not None and player.photo is not None:
        b.save()
        b.clip(34, 18, 96, 96, 48)
        b.image(player.photo, 34, 18, 96, 96, "cover")
        b.restore()
    else:
        initials = "".join(p[0] for p in ctx.name(seat).split()[:2]).upper() or str(seat + 1)
        ctx.label(th.font_title, 40, 82, 81, initials, ink_on(colour), align="center", width=84)
    text = ex.style.text_colour or th.text
    ctx.label(th.font_title, ex.style.font_size or 44, 152, 62, ctx.name(seat).upper(), text, width=w - 176, ls=0.5)
    line = (f" \u00b7 {player.line}" if player is not None and player.line else "").upper()
    # the team's name whole (its whole words), the intro line in the room left (cut last)
    room = max((w - 176) / 2, w - 176 - measure(th.font_body, 22, line, 1.0))
    sub = _team_label(ctx, match, team, th.font_body, 22, room).upper() + line
    ctx.label(th.font_body, 22, 152, 100, sub, th.muted, width=w - 176, ls=1.0)
    b.restore()


def _logo(ctx: Ctx, ex: Extra) -> None:
    """A logo or sponsor slot: the uploaded image fitted inside the box, aspect kept (an
    empty slot draws nothing: the editor still shows its box)."""
    if ex.image is None:
        return
    w, h = extra_size(ex.type)
    if ex.style.background:
        ctx.b.rrect(0, 0, w, h, ex.style.radius or 0.0, ex.style.background, None, 0)
    ctx.b.image(ex.image, 0, 0, w, h, "contain")


def _stinger(ctx: Ctx, view: View) -> None:
    """A full-canvas panel in the theme's colours, with the stinger image in its middle, that
    sweeps in from the left, covers the canvas at half the run time (the new deal is drawn
    under it) and sweeps out to the right."""
    tr = ctx.timing.transition
    b, th = ctx.b, ctx.theme
    W, H = float(view.width), float(view.height)
    half = tr.run_time / 2
    x = b.track([(0.0, -W), (half, 0.0, tr.ease), (tr.run_time, W, tr.ease)])
    b.save()
    b.translate(x, 0)
    b.rrect(0, 0, W, H, 0, th.panel[:7], None, 0)  # opaque: nothing of either deal shows through
    b.rrect(0, 0, 16, H, 0, th.accent, None, 0)
    b.rrect(W - 16, 0, 16, H, 0, th.accent, None, 0)
    if tr.image is not None:
        b.image(tr.image, W * 0.25, H * 0.25, W * 0.5, H * 0.5, "contain")
    b.restore()


def _wipe(ctx: Ctx, view: View) -> None:
    """A band in the panel colour sweeping left to right over the transition's run time."""
    tr = ctx.timing.transition
    b = ctx.b
    band = view.width * 0.35
    x = b.tween(0.0, tr.run_time, -band, float(view.width), tr.ease)
    b.save()
    b.alpha(b.track([(0.0, 1.0), (tr.run_time * 0.9, 1.0), (tr.run_time, 0.0, "linear")]))
    b.translate(x, 0)
    b.rrect(0, 0, band, view.height, 0, ctx.theme.panel, None, 0)
    b.rrect(band - 10, 0, 10, view.height, 0, ctx.theme.accent, None, 0)
    b.restore()
