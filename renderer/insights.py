"""The analysis elements: win-probability bar and match graph, best-play marks and badge, the
bidding table.  Each draws one placed extra from an :class:`renderer.analysis.AnalysisFrame`
with the existing ops; times are the layer's (0: the analysis is shown), motion from
``Timing.analysis``.

What is drawn where hole cards are hidden: the best-card marks only on a hand drawn face up
(and never with ``public``); the bar and the graph say "EST." when the reading comes from
public information only, and the bar "HINDSIGHT" when it comes from hands rebuilt from the
deal's play (the file does not list them).
"""

from __future__ import annotations

from engine.analysis import GraphPoint
from engine.cards import Suit, card_name, parse_card
from engine.state import StepKind, team_of

from .reading import ANALYSIS_SIZES, AnalysisFrame, CallRow, Reading
from .cardart import suit_colour, suit_path
from .context import HAND_TYPES, Ctx
from .fonts import measure
from .panels import extra_panel, ink_on
from .scene import Num
from .table import CH, CW, hand_slots
from .view import Extra, ExtraType

__all__ = ["draw_insight", "win_text"]


def win_text(p: float) -> str:
    """A chance as people read it on screen: whole percent, never 0 or 100 before the end."""
    v = round(p * 100)
    if 0.0 < p < 1.0:
        v = min(99, max(1, v))
    return f"{v}%"


def draw_insight(ctx: Ctx, ex: Extra, frame: AnalysisFrame, *, public: bool) -> None:
    """Draw the analysis extra ``ex`` (at its place, scaled) from ``frame``."""
    b = ctx.b
    if ex.type is ExtraType.BEST_PLAY:
        if not public:
            _best_marks(ctx, frame.now)  # on the hand element, not in the extra's box
    b.save()
    b.translate(ex.x, ex.y)
    b.scale(ex.scale)
    if ex.type is ExtraType.WIN_BAR:
        _win_bar(ctx, ex, frame)
    elif ex.type is ExtraType.WIN_GRAPH:
        _win_graph(ctx, ex, frame)
    elif public:
        pass  # nothing derived from hidden cards on an output that hides them
    elif ex.type is ExtraType.BEST_PLAY:
        _best_caption(ctx, ex, frame.now)
    elif ex.type is ExtraType.PLAY_QUALITY:
        _quality(ctx, ex, frame)
    elif ex.type is ExtraType.BIDDING_TABLE:
        _bidding(ctx, ex, frame.now)
    b.restore()


def _fade_in(ctx: Ctx) -> None:
    at = ctx.timing.analysis
    ctx.b.alpha(ctx.b.tween(0.0, max(0.05, at.run_time * 0.6), 0.0, 1.0, "out"))


# -- win probability -----------------------------------------------------------------------


def _win_bar(ctx: Ctx, ex: Extra, frame: AnalysisFrame) -> None:
    now = frame.now
    if now.win is None:
        return
    th, b = ctx.theme, ctx.b
    at = ctx.timing.analysis
    w, h = ANALYSIS_SIZES[ex.type]
    extra_panel(ctx, ex, w, h)
    head = "WIN PROBABILITY" + (" \u00b7 EST." if now.estimate else " \u00b7 HINDSIGHT" if now.hands == "reconstructed" else "")
    size = ex.style.font_size or 20.0
    # the heading in the middle, the team names share the rest of the row
    hw = ctx.label(th.font_body, size, w / 2, 27, head, th.muted, align="center", width=w * 0.4, ls=1.0)
    side = (w - 32 - hw) / 2 - 12
    for team, x, align in ((0, 16.0, "left"), (1, w - 16, "right")):
        name = ctx.team_label(team, th.font_heading, size, side, ls=0.5)
        ctx.label(th.font_heading, size, x, 27, name, ctx.ink(ctx.team_colour(team)), align=align, width=side, ls=0.5)
    bx, by, bw, bh = 16.0, 38.0, w - 32, h - 50
    p = now.win[0]
    before = frame.previous.win[0] if frame.previous is not None and frame.previous.win is not None else p
    b.save()
    b.clip(bx, by, bw, bh, bh / 2)
    b.rrect(bx, by, bw, bh, 0, ctx.team_colour(1), None, 0)
    b.save()
    b.translate(b.tween(0.0, at.run_time, bx + bw * before, bx + bw * p, at.ease), 0)
    b.rrect(-bw, by, bw, bh, 0, ctx.team_colour(0), None, 0)
    b.rrect(-1.5, by, 3, bh, 0, "#ffffffff", None, 0)
    b.restore()
    b.restore()
    # the numbers: the old ones fade out over the first half of the move, the new ones in
    # over the second (never both half-drawn on top of each other)
    mid = by + bh / 2 + 7
    half = at.run_time / 2
    fades: list[tuple[float, Num]] = [(p, 1.0)]
    if win_text(before) != win_text(p):
        fades = [(before, b.tween(0.0, half, 1.0, 0.0, "linear")), (p, b.tween(half, at.run_time, 0.0, 1.0, "linear"))]
    for value, fade in fades:
        b.save()
        b.alpha(fade)
        ctx.label(th.font_title, 20, bx + 12, mid, win_text(value), ink_on(ctx.team_colour(0)))
        ctx.label(th.font_title, 20, bx + bw - 12, mid, win_text(1 - value), ink_on(ctx.team_colour(1)), align="right")
        b.restore()


def _circle(cx: float, cy: float, r: float) -> str:
    k = 0.5523 * r
    return (
        f"M{cx:.2f} {cy - r:.2f}C{cx + k:.2f} {cy - r:.2f} {cx + r:.2f} {cy - k:.2f} {cx + r:.2f} {cy:.2f}"
        f"C{cx + r:.2f} {cy + k:.2f} {cx + k:.2f} {cy + r:.2f} {cx:.2f} {cy + r:.2f}"
        f"C{cx - k:.2f} {cy + r:.2f} {cx - r:.2f} {cy + k:.2f} {cx - r:.2f} {cy:.2f}"
        f"C{cx - r:.2f} {cy - k:.2f} {cx - k:.2f} {cy - r:.2f} {cx:.2f} {cy - r:.2f}Z"
    )


def _win_graph(ctx: Ctx, ex: Extra, frame: AnalysisFrame) -> None:
    """Team 0's chance after each deal (the public score model) and now; euchres ("E") and
    loners ("L") marked in the colour of the team they went to."""
    th, b = ctx.theme, ctx.b
    now = frame.now
    points: list[GraphPoint] = list(frame.graph)
    if not points and now.win is None:
        return
    w, h = ANALYSIS_SIZES[ex.type]
    extra_panel(ctx, ex, w, h)
    head = "WIN PROBABILITY \u00b7 MATCH" + (" \u00b7 EST." if now.estimate else "")
    ctx.label(th.font_body, ex.style.font_size or 20.0, 16, 28, head, th.muted, width=w - 32, ls=1.0)
    x0, y0, pw, ph = 24.0, 46.0, w - 48, h - 66
    current = None
    scored = ctx.state.kind in (StepKind.DEAL_SCORED, StepKind.GAME_OVER)
    if now.win is not None and not (scored and points):
        current = GraphPoint(len(points), now.win[0])
    last = max(4, (current.deals if current is not None else points[-1].deals if points else 0))

    def at(g: GraphPoint) -> tuple[float, float]:
        return x0 + pw * g.deals / last, y0 + ph * (1.0 - g.p)

    # team halves and the 50% line
    b.rrect(x0, y0, pw, ph / 2, 0, ctx.team_colour(0)[:7] + "1f", None, 0)
    b.rrect(x0, y0 + ph / 2, pw, ph / 2, 0, ctx.team_colour(1)[:7] + "1f", None, 0)
    b.rrect(x0, y0 + ph / 2 - 0.75, pw, 1.5, 0, th.panel_edge, None, 0)
    line = points + ([current] if current is not None else [])
    if len(line) >= 2:
        d = "M" + " L".join(f"{x:.2f} {y:.2f}" for x, y in (at(g) for g in line))
        b.path(d, None, th.text, 3.0)
    for g in points:
        x, y = at(g)
        if g.mark is not None and g.team is not None:
            b.path(_circle(x, y, 14), ctx.team_colour(g.team), "#ffffffff", 2.0)
            ctx.label(th.font_title, 20, x, y + 7, "E" if g.mark == "euchre" else "L", ink_on(ctx.team_colour(g.team)), align="center")
        else:
            b.path(_circle(x, y, 4.5), th.text, None, 0)
    if current is not None:
        x, y = at(current)
        b.save()
        _fade_in(ctx)
        b.path(_circle(x, y, 7), th.panel, th.accent, 3.0)
        b.restore()


# -- best play -------------------------------------------------------------------------------


def _shown_best(ctx: Ctx, now: Reading) -> tuple[int, list[tuple[int, int]]] | None:
    """The seat to act and (slot, of n) of each best card in its hand, where that hand is
    drawn face up here; None when nothing may be marked, or when every legal card is as good
    as any other (a best card is one that is better than some other)."""
    st = ctx.state
    seat = now.to_act
    if seat is None or now.step != st.step or not now.best or now.calls is not None or seat >= ctx.players or not ctx.face_up(seat):
        return None
    el = ctx.placed.get(HAND_TYPES[ctx.pos_of(seat)])
    if el is None or seat >= len(st.hands):
        return None
    if now.losses and all(loss == (0, 0) for loss in now.losses.values()):
        return None  # every legal card is as good as the best: none is "the best"
    hand = ctx.sorted_hand(list(st.hands[seat]))
    names = [card_name(c) if c.known else None for c in hand]
    slots = [(i, len(hand)) for i, n in enumerate(names) if n is not None and n in now.best]
    return (seat, slots) if slots else None


def _best_marks(ctx: Ctx, now: Reading) -> None:
    """An outline and a tab over each best card of the player to act, fading in."""
    found = _shown_best(ctx, now)
    if found is None:
        return
    seat, slots = found
    el = ctx.placed[HAND_TYPES[ctx.pos_of(seat)]]
    th, b = ctx.theme, ctx.b
    r = CW * th.cards.radius
    b.save()
    b.translate(el.x, el.y)
    b.scale(el.scale)
    _fade_in(ctx)
    tab = measure(th.font_heading, 20, "BEST", 1.0) + 16  # adjacent best cards keep a gap between tabs
    for i, n in slots:
        cx = hand_slots(n)[i]
        b.rrect(cx - CW / 2 - 3, -3, CW + 6, CH + 6, r + 3, None, th.good, 4.0)
        b.rrect(cx - tab / 2, -27, tab, 28, 6, th.good, None, 0)
        ctx.label(th.font_heading, 20, cx, -6, "BEST", ink_on(th.good), align="center", ls=1.0)
    b.restore()


def _card_text(ctx: Ctx, x: float, baseline: float, name: str, colour: str) -> float:
    """Rank (in ``colour``) then suit shape of a card name at (x, baseline), on a white
    card-like chip; returns the width drawn."""
    card = parse_card(name)
    rank = name[:-1] if card.suit is not None else name
    rank = "10" if rank == "T" else rank
    w = ctx.label(ctx.theme.font_title, 24, x, baseline, rank, colour)
    if card.suit is None:
        return w
    ctx.b.path(suit_path(card.suit, x + w + 2, baseline - 19, 20), suit_colour(card.suit, ctx.theme.cards), None, 0)
    return w + 24


def _best_caption(ctx: Ctx, ex: Extra, now: Reading) -> None:
    """``BEST · NAME`` and the best cards (only where the hand is face up here)."""
    found = _shown_best(ctx, now)
    if found is None:
        return
    th, b = ctx.theme, ctx.b
    w, h = ANALYSIS_SIZES[ex.type]
    b.save()
    _fade_in(ctx)
    extra_panel(ctx, ex, w, h)
    b.rrect(0, 0, 8, h, 4, th.good, None, 0)
    ctx.label(th.font_heading, 20, 22, 40, "BEST", th.good, ls=1.0)
    x = 90.0
    for name in now.best[:3]:
        b.rrect(x - 6, 12, 64, 40, 6, "#ffffffff", None, 0)
        x += _card_text(ctx, x, 42, name, "#16181dff") + 16
    b.restore()


def _quality(ctx: Ctx, ex: Extra, frame: AnalysisFrame) -> None:
    """What the card just played gave up against the best card (double-dummy), like a chess
    move-quality badge; only when the previous reading is of the step before."""
    st, prev = ctx.state, frame.previous
    act = st.action
    if prev is None or prev.step != st.step - 1 or act is None or act.card is None or st.kind not in (StepKind.CARD, StepKind.DISCARD):
        return
    if act.seat is None or prev.to_act != act.seat:
        return
    name = card_name(act.card)
    loss = prev.losses.get(name)
    if loss is None:
        return
    tricks, points = loss
    th, b = ctx.theme, ctx.b
    if points > 0:
        text, colour = f"\u2212{points} POINT" + ("S" if points > 1 else ""), th.bad
    elif tricks > 0:
        text, colour = f"\u2212{tricks} TRICK" + ("S" if tricks > 1 else ""), th.quality_colours.get("?!", th.accent)
    else:
        text, colour = "BEST PLAY", th.good
    w, h = ANALYSIS_SIZES[ex.type]
    scale, alpha = ctx.pop(0.0, max(0.1, ctx.timing.analysis.run_time))
    b.save()
    b.alpha(alpha)
    b.translate(w / 2, h / 2)
    b.scale(scale)
    b.translate(-w / 2, -h / 2)
    extra_panel(ctx, ex, w, h)
    b.rrect(0, 0, 8, h, 4, ctx.team_colour(team_of(act.seat)), None, 0)
    b.rrect(20, 12, 64, 40, 6, "#ffffffff", None, 0)
    _card_text(ctx, 26, 42, name, "#16181dff")
    pill = w - 104
    b.rrect(96, 12, pill - 12, 40, 20, colour, None, 0)
    ctx.label(th.font_title, 22, 96 + (pill - 12) / 2, 40, text, ink_on(colour), align="center", width=pill - 28, ls=1.0)
    b.restore()


# -- bidding ---------------------------------------------------------------------------------

_ROWS = ("Order", "s", "h", "d", "c", "n")
#: the pill of a best call worth nothing either way
NEUTRAL = "#3a4256ff"


def _bidding(ctx: Ctx, ex: Extra, now: Reading) -> None:
    """Each call open to the bidder (one row per call, playing and alone): the deal's points
    for the bidder's side under best play (negative: euchred) and its tricks."""
    st = ctx.state
    if now.calls is None or now.to_act is None or now.step != st.step:
        return
    valued = [c for c in now.calls if c.points is not None and c.tricks is not None]
    if not valued:
        return
    th, b = ctx.theme, ctx.b
    w, h = ANALYSIS_SIZES[ex.type]
    team = team_of(now.to_act)

    def score(c: CallRow) -> int:
        assert c.points is not None
        return c.points[team] - c.points[1 - team]

    top = max(score(c) for c in valued)
    # the best call is marked only where some call is worse: when every call is worth the
    # same, none is "the best"
    marked = any(score(c) != top for c in valued)
    rows = [(call, {c.alone: c for c in valued if c.call == call}) for call in _ROWS if any(c.call == call for c in valued)]
    rh = 36.0
    h = min(h, 52 + rh * len(rows))  # the panel fits its rows (round 1 has one)
    b.save()
    _fade_in(ctx)
    extra_panel(ctx, ex, w, h)
    size = 20.0
    head = "BIDDING \u00b7 "
    who = ctx.player_label(now.to_act, th.font_heading, size, w - 180 - measure(th.font_heading, size, head, 0.5), ls=0.5)
    ctx.label(th.font_heading, size, 16, 30, head + who, ctx.ink(ctx.team_colour(team)), width=w - 180, ls=0.5)
    cols = (w - 150, w - 56)
    ctx.label(th.font_body, size, cols[0], 30, "PLAY", th.muted, align="center", ls=1.0)
    ctx.label(th.font_body, size, cols[1], 30, "ALONE", th.muted, align="center", ls=1.0)
    y = 44.0
    for call, by_alone in rows:
        base = y + rh * 0.7
        if call == "Order":
            up = st.up_card
            label = "ORDER UP"
            suit = up.suit if up is not None and up.suit is not None else None
        elif call == "n":
            label, suit = "NO TRUMP", None
        else:
            suit = Suit(call)
            label = {"s": "SPADES", "h": "HEARTS", "d": "DIAMONDS", "c": "CLUBS"}[call]
        x = 16.0
        if suit is not None:
            b.rrect(x - 2, base - 21, 26, 26, 13, "#ffffffff", None, 0)  # black suits read on white
            b.path(suit_path(suit, x + 3, base - 16, 16), suit_colour(suit, th.cards), None, 0)
            x += 32
        ctx.label(th.font_heading, size, x, base, label, ctx.text_colour(None), width=cols[0] - 50 - x)
        for alone, cx in ((False, cols[0]), (True, cols[1])):
            c = by_alone.get(alone)
            if c is None or c.tricks is None:
                ctx.label(th.font_body, size, cx, base, "\u2013", th.muted, align="center")
                continue
            v = score(c)
            # coloured by its value (green gains, red loses), marked by its rank: the best
            # call sits on a pill of its value's colour, so a best call that still loses
            # points reads red, never green
            tone = th.good if v > 0 else th.bad if v < 0 else None
            text = f"{'+' if v > 0 else '' if v == 0 else chr(0x2212)}{abs(v)} ({c.tricks[team]})"
            if marked and v == top:
                fill = tone or NEUTRAL
                b.rrect(cx - 40, base - 21, 80, 28, 8, fill, None, 0)
                colour = ink_on(fill)
            else:
                colour = ctx.ink(tone) if tone is not None else ctx.text_colour(None)
            ctx.label(th.font_title, size, cx, base, text, colour, align="center", width=76)
        y += rh
    b.restore()
