"""Statistics extras: the match statistics panel, the statistics lower third and the
deal-history strip; and :class:`StatsBook`, the per-game cache of the statistics they show.

The numbers are :func:`engine.stats.match_stats` of the game up to the step on screen (the
caller passes them: the renderer reads no timeline); deals count once they are scored.  The
panel shows per team and per player the tricks, points, calls by round, euchres made and
suffered, loners made of tried, marches and bowers held, and the current streak; the lower
third one team's or one player's line (the match data's ``stats`` picks whose, as ``intro``
picks the player intro); the strip one cell per deal (dealer, trump, maker, alone, points).
Drawn with the ordinary ops, so the page and the skia executor draw them alike.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.cards import Suit
from engine.state import Timeline, team_of
from engine.stats import MatchStats, Tally, match_stats

from .cardart import suit_colour, suit_path
from .view import Extra, ExtraType

if TYPE_CHECKING:
    from .context import Ctx
    from .matchdata import MatchData

__all__ = ["STATS_TYPES", "STATS_SIZES", "StatsBook", "stats_book", "needs_stats", "draw_stats_extra", "subject_of"]

#: the extras that show statistics (the caller computes them only when one is visible)
STATS_TYPES = frozenset({ExtraType.MATCH_STATS, ExtraType.STATS_LOWER_THIRD, ExtraType.DEAL_HISTORY})

STATS_SIZES: dict[ExtraType, tuple[float, float]] = {
    ExtraType.MATCH_STATS: (1100.0, 420.0),
    ExtraType.STATS_LOWER_THIRD: (1000.0, 112.0),
    ExtraType.DEAL_HISTORY: (1240.0, 150.0),
}


def needs_stats(extras: tuple[Extra, ...]) -> bool:
    """Whether any visible extra of a view shows statistics."""
    return any(e.visible and e.type in STATS_TYPES for e in extras)


class StatsBook:
    """The statistics of one game at any step, computed once per distinct answer.

    The statistics at a step depend only on how many deals have started by then and whether
    the last of them is scored, so a game of N deals has at most 2N distinct answers: each is
    computed once (``match_stats``, linear in the deals) and every other step is a lookup
    (a bisect over the deals' step boundaries).
    """

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._firsts = [d.first_step for d in timeline.deals]
        self._scored = [d.last_step if d.points is not None else None for d in timeline.deals]
        self._memo: dict[tuple[int, bool], MatchStats] = {}
        self.computed = 0

    def key(self, step: int) -> tuple[int, bool]:
        started = bisect.bisect_right(self._firsts, step)
        if started == 0:
            return (0, False)
        done = self._scored[started - 1]
        return (started, done is not None and done <= step and self.timeline.steps[done].deal_points is not None)

    def at(self, step: int) -> MatchStats:
        """The statistics of the deals scored by ``step`` and the history up to it."""
        key = self.key(step)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = match_stats(self.timeline, step=step)
            self.computed += 1
        return hit


_books: dict[int, tuple[weakref.ref[Timeline], StatsBook]] = {}


def stats_book(timeline: Timeline) -> StatsBook:
    """The :class:`StatsBook` of ``timeline`` (one per timeline object while it lives)."""
    entry = _books.get(id(timeline))
    if entry is not None and entry[0]() is timeline:
        return entry[1]
    book = StatsBook(timeline)
    key = id(timeline)
    # the callback holds the dict's own ``pop``: at interpreter exit the module's globals may be gone
    _books[key] = (weakref.ref(timeline, lambda _ref, k=key, pop=_books.pop: pop(k, None)), book)  # type: ignore[misc]
    return book


def subject_of(match: MatchData | None) -> tuple[str, int] | None:
    """``("team", n)`` or ``("seat", n)`` from the match data's ``stats`` pick, or None."""
    pick = match.stats if match is not None else None
    if not pick:
        return None
    kind, _, n = pick.partition("-")
    return kind, int(n)


# drawing -----------------------------------------------------------------------------------


def draw_stats_extra(ctx: Ctx, ex: Extra, stats: MatchStats | None, match: MatchData | None, panel: Callable[[Ctx, Extra, float, float], None]) -> None:
    """Draw one statistics extra in its own frame (``panel`` draws the extras' shared panel)."""
    if stats is None:
        return
    w, h = STATS_SIZES[ex.type]
    if ex.type is not ExtraType.STATS_LOWER_THIRD:
        # these sit over the table: an opaque backing, so no card shows through the panel
        ctx.b.rrect(0, 0, w, h, ex.style.radius if ex.style.radius is not None else 10.0, ctx.theme.panel[:7] + "f2", None, 0)
    if ex.type is ExtraType.MATCH_STATS:
        _match_panel(ctx, ex, stats, w, h, panel)
    elif ex.type is ExtraType.STATS_LOWER_THIRD:
        _lower_third(ctx, ex, stats, match, w, h, panel)
    elif ex.type is ExtraType.DEAL_HISTORY:
        _history(ctx, ex, stats, w, h, panel)


#: (heading, width): euchres made ("EUCHRED", the other side) and suffered ("EUCHRED BY");
#: loners made of tried
_COLUMNS = (("TRICKS", 80), ("PTS", 64), ("CALLS R1", 84), ("CALLS R2", 84), ("EUCHRED", 90), ("EUCHRED BY", 104), ("ALONE", 76), ("MARCH", 76), ("BOWERS", 84))


def _cells(t: Tally, *, team: bool) -> tuple[str, ...]:
    """A row's values; points are a team's (a player's row shows a dash)."""
    return (
        str(t.tricks),
        str(t.points) if team else "\u2013",
        str(t.calls_round1),
        str(t.calls_round2),
        str(t.euchres_made),
        str(t.euchres_suffered),
        f"{t.loners_made}/{t.loners_tried}",
        str(t.marches),
        str(t.bowers),
    )


def _streak(ctx: Ctx, stats: MatchStats, font: str, width: float) -> str:
    team, deals = stats.streak
    if team is None or deals == 0:
        return "NO STREAK YET"
    return f"STREAK: {ctx.team_label(team, font, 20, width - 110, ls=1.0)} \u00d7{deals}"


def _match_panel(ctx: Ctx, ex: Extra, stats: MatchStats, w: float, h: float, panel: Callable[[Ctx, Extra, float, float], None]) -> None:
    th = ctx.theme
    panel(ctx, ex, w, h)
    ctx.b.rrect(0, 0, w, 8, 4, th.accent, None, 0)
    text = ex.style.text_colour or th.text
    ctx.label(th.font_title, ex.style.font_size or 30, 24, 50, "MATCH STATISTICS", text, width=380, ls=1.5)
    ctx.label(th.font_body, 20, w - 24, 48, _streak(ctx, stats, th.font_body, w - 440), th.accent, align="right", width=w - 440, ls=1.0)
    name_w = w - 24 - sum(cw for _, cw in _COLUMNS) - 16
    x0 = 24 + name_w
    y = 88.0
    x = x0
    for head, cw in _COLUMNS:
        ctx.label(th.font_body, 20, x + cw / 2, y, head, th.muted, align="center", width=cw - 4, ls=0.8)
        x += cw
    rows: list[tuple[str, Tally, int, bool]] = []
    for team in range(2):
        rows.append((ctx.team_label(team, th.font_title, 22, name_w - 20, ls=0.5), stats.teams[team], team, True))
        for seat in range(min(ctx.players, len(stats.players))):
            if team_of(seat) == team:
                rows.append((ctx.name(seat), stats.players[seat], team, False))
    row_h = min(48.0, (h - y - 14) / max(1, len(rows)))
    for i, (name, tally, team, is_team) in enumerate(rows):
        top = y + 10 + i * row_h
        if is_team:
            ctx.b.rrect(16, top, w - 32, row_h - 4, 6, "#ffffff14", None, 0)
        ctx.b.rrect(16, top, 8, row_h - 4, 3, ctx.team_colour(team), None, 0)
        base = top + row_h / 2 + 7
        font = th.font_title if is_team else th.font_body
        size = 22 if is_team else 20
        ctx.label(font, size, 34 if is_team else 50, base, name.upper(), text if is_team else th.muted, width=name_w - (20 if is_team else 36), ls=0.5)
        x = x0
        for value, (_, cw) in zip(_cells(tally, team=is_team), _COLUMNS):
            ctx.label(font, size, x + cw / 2, base, value, text, align="center", width=cw - 4)
            x += cw


def _lower_third(
    ctx: Ctx, ex: Extra, stats: MatchStats, match: MatchData | None, w: float, h: float, panel: Callable[[Ctx, Extra, float, float], None]
) -> None:
    """One team's or one player's line; slides up and fades in over the step's run, as the
    player intro does."""
    pick = subject_of(match)
    if pick is None:
        return
    kind, n = pick
    if kind == "team":
        if n > 1:
            return
        tally, team, name = stats.teams[n], n, ctx.team_label(n, ctx.theme.font_title, ex.style.font_size or 38, w - 260, ls=0.5)
    else:
        if n >= min(ctx.players, len(stats.players)):
            return
        tally, team, name = stats.players[n], team_of(n), ctx.name(n)
    th, b = ctx.theme, ctx.b
    b.save()
    b.alpha(b.tween(0.0, 0.35, 0.0, 1.0, "out"))
    b.translate(0, b.tween(0.0, 0.45, 24.0, 0.0, "out"))
    panel(ctx, ex, w, h)
    b.rrect(0, 0, 14, h, 6, ctx.team_colour(team), None, 0)
    text = ex.style.text_colour or th.text
    ctx.label(th.font_title, ex.style.font_size or 38, 36, 50, name.upper(), text, width=w - 260, ls=0.5)
    tag = "TEAM STATISTICS" if kind == "team" else "PLAYER STATISTICS"
    ctx.label(th.font_body, 20, w - 24, 44, tag, th.muted, align="right", width=220, ls=1.5)
    calls = tally.calls_round1 + tally.calls_round2
    parts = [
        f"TRICKS {tally.tricks}",
        *([f"PTS {tally.points}"] if kind == "team" else []),  # points are a team's
        f"CALLS {calls} (R1 {tally.calls_round1}, R2 {tally.calls_round2})",
        f"EUCHRED OTHERS {tally.euchres_made}",
        f"EUCHRED {tally.euchres_suffered}",
        f"ALONE {tally.loners_made}/{tally.loners_tried}",
        f"MARCHES {tally.marches}",
        f"BOWERS {tally.bowers}",
    ]
    ctx.label(th.font_body, 21, 36, 92, "  \u00b7  ".join(parts), th.accent, width=w - 60, ls=0.8)
    b.restore()


#: the least width of a deal-history cell: its lines are 20 px (13 px at 720p) and need it;
#: a game with more deals than fit shows its latest ones
MIN_CELL = 100.0


def _history(ctx: Ctx, ex: Extra, stats: MatchStats, w: float, h: float, panel: Callable[[Ctx, Extra, float, float], None]) -> None:
    th, b = ctx.theme, ctx.b
    panel(ctx, ex, w, h)
    text = ex.style.text_colour or th.text
    ctx.label(th.font_title, 20, 20, 40, "DEALS", th.muted, width=90, ls=1.5)
    cells = stats.history
    if not cells:
        ctx.label(th.font_body, 20, 120, 70, "NO DEAL YET", th.muted, width=w - 140)
        return
    left, gap = 112.0, 6.0
    room = w - left - 12
    fit = max(1, int((room + gap) // (MIN_CELL + gap)))
    first = max(0, len(cells) - fit)
    shown = cells[first:]
    cw = min(150.0, (room - gap * (len(shown) - 1)) / len(shown))
    for i, cell in enumerate(shown):
        x = left + i * (cw + gap)
        b.save()
        b.translate(x, 12)
        ch = h - 24
        scorer = None if cell.points is None else next((t for t in range(len(cell.points)) if cell.points[t] > 0), None)
        b.rrect(0, 0, cw, ch, 8, "#ffffff12", "#ffffff26", 1.0)
        if scorer is not None and scorer < 2:
            b.rrect(0, ch - 6, cw, 6, 3, ctx.team_colour(scorer), None, 0)
        mid = cw / 2
        ctx.label(th.font_body, 20, mid, 24, f"DEAL {first + i + 1}", th.muted, align="center", width=cw - 8, ls=0.5)
        ctx.label(th.font_body, 20, mid, 48, f"D {_short(ctx, cell.dealer)}", th.muted, align="center", width=cw - 8)
        # trump: the suit on a white tile (readable on the dark panel), NT for no-trump, - for
        # a throw-in; the deal's points beside it
        if cell.trump in ("s", "h", "d", "c"):
            b.rrect(8, 56, 30, 30, 6, "#f4f1e8ff", None, 0)
            suit = Suit(cell.trump)
            b.path(suit_path(suit, 12, 60, 22), suit_colour(suit, th.cards))
        else:
            ctx.label(th.font_title, 22, 23, 80, "NT" if cell.trump == "n" else "\u2013", text, align="center", width=30)
        if cell.points is None:
            pts = "\u2026"
        elif scorer is None:
            pts = "0"
        else:
            pts = f"+{cell.points[scorer]} {_team_short(ctx, scorer)}"
        ctx.label(th.font_title, 22, cw - 8, 80, pts, text, align="right", width=cw - 52)
        maker = "" if cell.maker is None else _short(ctx, cell.maker) + (" ALONE" if cell.alone else "")
        if not maker and cell.points is not None:
            maker = "THROWN IN"
        if maker:
            ctx.label(th.font_body, 20, mid, 110, maker, text, align="center", width=cw - 8)
        b.restore()


def _short(ctx: Ctx, seat: int) -> str:
    """A seat's name as short as a history cell needs: the last word, upper case."""
    name = ctx.name(seat).split()
    return name[-1].upper() if name else str(seat + 1)


def _team_short(ctx: Ctx, team: int) -> str:
    if team < len(ctx.teams) and ctx.teams[team]:
        return ctx.teams[team].upper()
    return "NS" if team == 0 else "EW"
