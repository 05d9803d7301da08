"""Table elements: the four hands (with name plates, dealer button, badges and bid callouts),
the play area (up-card, trick, trick gathering) and the flying cards between them."""

from __future__ import annotations

import math
from typing import Any

from engine.cards import Suit
from engine.state import StepKind, UpCardState

from .altline import alt_card
from .callout import gather_times
from .cardart import suit_colour, suit_path
from .context import HAND_TYPES, Ctx
from .contrast import ink_on
from .fonts import measure
from .linemarks import draw_card_mark
from .photo import plate_photo
from .scene import Num, Op, keep
from .view import Element, ElementType

__all__ = ["HAND_W", "HAND_H", "PLAY_W", "PLAY_H", "SUIT_WORD", "card", "draw_hand", "draw_play_area", "draw_flights"]

HAND_W, HAND_H = 420.0, 196.0
PLAY_W, PLAY_H = 460.0, 400.0
CS = 0.96  # card scale in hands and the trick: 96 x 134.4 px
CW, CH = 100 * CS, 140 * CS
STEP = 60.0
# the name plate: as wide as a fanned hand and a little more, so a long name fits whole
PLATE_X, PLATE_Y, PLATE_W, PLATE_H = 30.0, 146.0, 360.0, 46.0
#: the status tab (MAKER, PASS...) sits on the plate's top edge at its right end, so the name
#: has the plate's whole width: beside the name it cut "ROBERT EDWARDSON-MACALLISTER" short
TAB_H = 26.0

# trick slots (card centre) and tilt per screen position: south, west, north, east
SLOTS = ((230.0, 288.0), (118.0, 200.0), (230.0, 112.0), (342.0, 200.0))
TILT = (0.035, -0.06, -0.03, 0.055)
CENTRE = (230.0, 200.0)

SUIT_WORD = {"s": "SPADES", "h": "HEARTS", "d": "DIAMONDS", "c": "CLUBS", "n": "NO TRUMP", "x": "?"}


def hand_slots(n: int) -> list[float]:
    """Centre x of each card of an ``n``-card hand."""
    step = STEP if n <= 6 else (HAND_W - CW) / max(1, n - 1)
    total = CW + (n - 1) * step
    x0 = HAND_W / 2 - total / 2 + CW / 2
    return [x0 + i * step for i in range(n)]


def card(ctx: Ctx, sid: str, cx: Num, cy: Num, *, s: float = CS, rot: Num = 0.0, alpha: Num = 1.0, shadow: float = 0.0, mark: bool = False) -> None:
    """A card centred on (cx, cy), card scale ``s``, tilted by ``rot``; optional drop shadow;
    ``mark``: a card of the alternative line on air (:mod:`renderer.altline`).

    A card standing still (no animated value) is the same ops every time it is drawn: they
    are made once and shared (see ``renderer.scene._RRECTS``)."""
    b = ctx.b
    still = not mark and not isinstance(cx, dict) and not isinstance(cy, dict) and not isinstance(rot, dict) and not isinstance(alpha, dict)
    if still:
        key = (sid, cx, cy, s, rot, alpha, shadow, ctx.theme.shadow, ctx.theme.cards.radius, ctx.theme.cards.face)
        ops = _STILL.get(key)
        if ops is None:
            mark_at = len(b.ops)
            _card(ctx, sid, cx, cy, s, rot, alpha, shadow, mark)
            keep(_STILL, key, b.ops[mark_at:], 8192)
        else:
            b.ops.extend(ops)
        return
    _card(ctx, sid, cx, cy, s, rot, alpha, shadow, mark)


#: the ops of still cards by their arguments (:func:`card`)
_STILL: dict[tuple[Any, ...], list[Op]] = {}


def _card(ctx: Ctx, sid: str, cx: Num, cy: Num, s: float, rot: Num, alpha: Num, shadow: float, mark: bool) -> None:
    b = ctx.b
    b.save()
    b.alpha(alpha)
    b.translate(cx, cy)
    b.rotate(rot)
    w, h = 100 * s, 140 * s
    if shadow:
        b.save()
        b.shadow(ctx.theme.shadow, 12 * shadow, 0, 4 * shadow)
        b.rrect(-w / 2, -h / 2, w, h, w * ctx.theme.cards.radius, ctx.theme.cards.face)
        b.restore()
    b.sprite(sid, -w / 2, -h / 2, s)
    if mark:
        draw_card_mark(ctx, w, h)
    b.restore()


def _dev(ctx: Ctx, el: Element | None) -> float:
    return ctx.out_scale * (el.scale if el is not None else 1.0)


# hands -----------------------------------------------------------------------------------
def draw_hand(ctx: Ctx, el: Element, pos: int) -> None:
    st, b = ctx.state, ctx.b
    seat = ctx.seat_at(pos)
    if seat >= ctx.players:
        return
    hand = list(st.hands[seat]) if seat < len(st.hands) else []
    cards = ctx.sorted_hand(hand)
    face = ctx.face_up(seat)
    outline = el.style.show_card_outlines
    sitting = seat in st.sit_out
    act = st.action
    xs = hand_slots(len(cards))

    # where each card was before this step (to close the gap when one leaves)
    old_xs = xs
    if act is not None and act.seat == seat and act.card is not None and st.kind in (StepKind.CARD, StepKind.DISCARD):
        before = ctx.sorted_hand(hand + [act.card])
        gone = ctx.leaving_slot(seat, before, act.card)
        prev = hand_slots(len(before))
        old_xs = [prev[i if i < gone else i + 1] for i in range(len(cards))]

    dev = _dev(ctx, el)
    b.save()
    for i, c in enumerate(cards):
        known = face and c.known
        sid = ctx.sprite_id(c, face=known, outline=outline)
        x: Num = xs[i]
        y: Num = CH / 2
        a: Num = 1.0
        if st.kind is StepKind.DEAL_START:
            t0 = 0.06 * i + 0.03 * pos
            d = max(0.05, ctx.run * 0.45)
            y = b.tween(t0, t0 + d, CH / 2 - 26, CH / 2, "out")
            a = b.tween(t0, t0 + d * 0.7, 0.0, 1.0, "out")
        elif old_xs[i] != xs[i]:
            x = b.tween(0.0, ctx.run, old_xs[i], xs[i], "inout")
        elif (
            st.kind is StepKind.CALL
            and act is not None
            and act.call == "Order"
            and seat == st.dealer
            and st.up_card is not None
            and c.same(st.up_card)
        ):
            a = b.tween(ctx.run * 0.75, ctx.run, 0.0, 1.0, "linear")
        card(ctx, sid, x, y, alpha=a)
    b.restore()

    if sitting and cards:
        left = xs[0] - CW / 2 - 4
        b.rrect(left, -4, xs[-1] + CW / 2 + 4 - left, CH + 8, 10, "#0b0f18b8", None, 0)
        _pill(ctx, HAND_W / 2, CH / 2 + 12, "SITTING OUT", ctx.theme.muted, "#0b0f18f0", size=22)
    if el.style.show_player_names:
        _plate(ctx, el, seat)
    _callout(ctx, seat)


def _pill(ctx: Ctx, cx: float, baseline: float, text: str, fg: str, bg: str, *, size: float = 20, ls: float = 1.0, font: str | None = None) -> float:
    font = font or ctx.theme.font_heading
    w = measure(font, size, text, ls) + size * 1.1
    h = size * 1.45
    ctx.b.rrect(cx - w / 2, baseline - size * 1.06, w, h, h / 2, bg, None, 0)
    ctx.label(font, size, cx, baseline, text, fg, align="center", ls=ls)
    return w


def _status(ctx: Ctx, seat: int) -> tuple[str, str, Suit | None]:
    """(text, colour, suit icon) of the plate's status tag."""
    st, th = ctx.state, ctx.theme
    if st.trump_code is not None and st.maker == seat and st.kind not in (StepKind.DEAL_START,):
        return ("ALONE" if st.alone else "MAKER"), th.accent, st.trump
    if st.alone_defender == seat:
        return "DEFENDS ALONE", th.accent, None
    if st.trump_code is None and not st.thrown_in:
        mine = [c for c in st.calls if c.seat == seat]
        if mine:
            last = mine[-1].call
            if last == "Pass":
                return "PASS", th.muted, None
            if last == "Order":
                return "ORDER UP", th.good, None
    return "", th.muted, None


def _plate(ctx: Ctx, el: Element, seat: int) -> None:
    st = ctx.state
    turn = st.to_act == seat and not st.game_over and st.kind in (StepKind.CALL, StepKind.CARD, StepKind.DEAL_START, StepKind.TRICK_TAKEN, StepKind.DISCARD)
    # still, and redrawn at every action of a live game: kept by what it shows
    status = _status(ctx, seat)
    key = ("plate", seat, ctx.name(seat), turn, status, seat == st.dealer, ctx.photo(seat))
    ctx.still(key, el, lambda: _plate_drawn(ctx, el, seat, turn, status))


def _plate_drawn(ctx: Ctx, el: Element, seat: int, turn: bool, status: tuple[str, str, Suit | None]) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    x, y, w, h = PLATE_X, PLATE_Y, PLATE_W, PLATE_H
    team = seat % 2
    ctx.panel(x, y, w, h, el=el, r=8)
    b.rrect(x, y, 7, h, 3.5, ctx.team_colour(team), None, 0)
    if turn:
        b.rrect(x - 1.5, y - 1.5, w + 3, h + 3, 9.5, None, th.accent, 3)
    name_x = x + 22 + plate_photo(ctx, x, y, h, seat)
    size = el.style.font_size or 27.0
    ctx.label(th.font_heading, size, name_x, y + 33, ctx.name(seat).upper(), ctx.text_colour(el), width=x + w - 14 - name_x, ls=0.5)
    _status_tab(ctx, status, x + w - 10, y - TAB_H / 2)
    if seat == st.dealer:
        cx, cy = x - 4, y + h / 2
        b.save()
        b.shadow(th.shadow, 8 * _dev(ctx, el), 0, 2 * _dev(ctx, el))
        b.path(_circle(cx, cy, 17), th.accent, "#00000055", 1.5)
        b.restore()
        ctx.label(th.font_title, 22, cx, cy + 8, "D", ink_on(th.accent), align="center")


def _status_tab(ctx: Ctx, status: tuple[str, str, Suit | None], right: float, top: float) -> None:
    """The plate's status (MAKER with the trump suit, PASS, ORDER UP...: :func:`_status`) as
    a tab on the plate's top edge, right-aligned at ``right``: its own fill, ink chosen
    against it."""
    text, colour, icon = status
    if not text:
        return
    th, b = ctx.theme, ctx.b
    size, ls = 20.0, 1.0
    tw = measure(th.font_heading, size, text, ls)
    iw = 25.0 if icon is not None else 0.0
    w = tw + iw + 20
    left = right - w
    fill = colour if colour != th.muted else "#2a3142ff"
    b.rrect(left, top, w, TAB_H, 6, fill, "#00000040" if fill != "#2a3142ff" else "#ffffff33", 1.0)
    x = left + 10
    if icon is not None:
        b.rrect(x - 2, top + 3, 20, 20, 10, "#ffffffff", None, 0)
        b.path(suit_path(icon, x + 2, top + 7, 12), suit_colour(icon, th.cards), None, 0)
        x += iw
    ctx.label(th.font_heading, size, x, top + 20, text, ink_on(fill) if fill != "#2a3142ff" else th.muted, ls=ls)


def _circle(cx: float, cy: float, r: float) -> str:
    k = 0.5523 * r

    def f(v: float) -> str:
        return f"{v:.2f}".rstrip("0").rstrip(".")

    return (
        f"M{f(cx)} {f(cy - r)}C{f(cx + k)} {f(cy - r)} {f(cx + r)} {f(cy - k)} {f(cx + r)} {f(cy)}"
        f"C{f(cx + r)} {f(cy + k)} {f(cx + k)} {f(cy + r)} {f(cx)} {f(cy + r)}"
        f"C{f(cx - k)} {f(cy + r)} {f(cx - r)} {f(cy + k)} {f(cx - r)} {f(cy)}"
        f"C{f(cx - r)} {f(cy - k)} {f(cx - k)} {f(cy - r)} {f(cx)} {f(cy - r)}Z"
    )


def _callout(ctx: Ctx, seat: int) -> None:
    """The big bid callout over the hand: pops in, holds, fades out at the end of the step."""
    st, th, b = ctx.state, ctx.theme, ctx.b
    act = st.action
    if st.kind is not StepKind.CALL or act is None or act.seat != seat or act.call is None:
        return
    call = act.call
    if call == "Pass":
        text, fg, bg, icon = "PASS", "#ffffffff", "#2a3142f2", None
    elif call == "Order":
        text, fg, bg, icon = "ORDER UP", "#16181dff", th.good + "f2", None
    else:
        suit = Suit(call) if call in "shdc" else None
        text, fg, bg, icon = SUIT_WORD.get(call, call.upper()), "#16181dff", "#ffffffff", suit
        if suit is not None:
            fg = suit_colour(suit, th.cards)
    total = ctx.st.total
    sc, al = ctx.pop(0.0, max(0.05, ctx.run))
    fade = b.track([(0.0, 1.0), (max(0.0, total - 0.3), 1.0), (total, 0.0, "in")]) if call == "Pass" else 1.0
    size = 34.0
    tw = measure(th.font_title, size, text, 1.5)
    iw = 40.0 if icon is not None else 0.0
    w, h = tw + iw + 40, 56.0
    cx, cy = HAND_W / 2, CH / 2
    b.save()
    b.alpha(al)
    b.alpha(fade)
    b.translate(cx, cy)
    b.scale(sc)
    b.save()
    b.shadow(th.shadow, 18 * _dev(ctx, None), 0, 5 * _dev(ctx, None))
    b.rrect(-w / 2, -h / 2, w, h, h / 2, bg, "#ffffff40", 1.5)
    b.restore()
    x0 = -w / 2 + 20
    if icon is not None:
        b.path(suit_path(icon, x0, -16, 32), suit_colour(icon, th.cards), None, 0)
        x0 += iw
    b.text(th.font_title, size, x0, 12, text, fg, 1.5)
    alone = st.alone and st.maker == seat
    if alone:
        _pill(ctx, 0, h / 2 + 34, "GOING ALONE", "#16181dff", th.accent, size=22)
    b.restore()


# play area -------------------------------------------------------------------------------
def draw_play_area(ctx: Ctx, el: Element) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    pad = el.style.padding if el.style.padding is not None else 0
    felt = el.style.background or th.felt
    r = el.style.radius if el.style.radius is not None else 28
    b.rrect(pad * 0, 0, PLAY_W, PLAY_H, r, felt, "#ffffff1f", 1.5)
    dev = _dev(ctx, el)
    # up-card during bidding
    if st.up_card is not None and not st.tricks and (st.trick is None or not st.trick.cards):
        _up_card(ctx, dev)
    trick = st.trick
    if trick is None or st.kind in (StepKind.DEAL_SCORED, StepKind.GAME_OVER):
        return
    flying = st.kind is StepKind.CARD and st.action is not None and st.action.card is not None
    n = len(trick.cards)
    gathering = st.kind is StepKind.TRICK_TAKEN and trick.winner is not None
    order = list(range(n))
    per = max(1, ctx.players - len(st.sit_out))
    if gathering:
        # the winning card last: it stays on top of the pile through the gather
        order.sort(key=lambda i: trick.seats[i] == trick.winner)
    for i in order:
        seat, c = trick.seats[i], trick.cards[i]
        if flying and i == n - 1:
            continue  # drawn in flight, on top of everything
        pos = ctx.pos_of(seat)
        sid = ctx.sprite_id(c)
        cx, cy = SLOTS[pos]
        mark = alt_card(ctx.line, st, trick.number, i, per)
        if gathering and trick.winner is not None:
            _gather(ctx, sid, pos, ctx.pos_of(trick.winner), seat == trick.winner, dev, mark)
        else:
            card(ctx, sid, cx, cy, rot=TILT[pos], shadow=dev, mark=mark)


def _gather(ctx: Ctx, sid: str, pos: int, wpos: int, winner: bool, dev: float, mark: bool = False) -> None:
    b, run = ctx.b, ctx.run
    sx, sy = SLOTS[pos]
    wx, wy = SLOTS[wpos]
    dx, dy = [(0, 1), (-1, 0), (0, -1), (1, 0)][wpos]
    ex, ey = wx + dx * 150, wy + dy * 150
    t0, t1, t2 = gather_times(run)
    x = b.track([(t0, sx), (t1, wx, "inout"), (t2, ex, "in")])
    y = b.track([(t0, sy), (t1, wy, "inout"), (t2, ey, "in")])
    rot = b.track([(t0, TILT[pos]), (t1, TILT[wpos], "inout")])
    a = b.track([(t1 + (t2 - t1) * 0.4, 1.0), (t2, 0.0, "in")])
    if winner:
        # the outline rides with the winning card until the pile has left
        glow = b.track([(0.0, 0.0), (max(0.05, t0 * 0.6), 1.0, "out")])
        b.save()
        b.alpha(a)
        b.alpha(glow)
        b.translate(x, y)
        b.rotate(rot)
        b.rrect(-CW / 2 - 6, -CH / 2 - 6, CW + 12, CH + 12, 12, None, ctx.theme.accent, 5)
        b.restore()
    card(ctx, sid, x, y, rot=rot, alpha=a, shadow=dev, mark=mark)


def _up_card(ctx: Ctx, dev: float) -> None:
    st, b = ctx.state, ctx.b
    up = st.up_card
    assert up is not None
    cx, cy = CENTRE
    state = st.up_card_state
    act = st.action
    if state is UpCardState.FACE_UP:
        card(ctx, ctx.sprite_id(up), cx, cy, shadow=dev)
        _caption(ctx, "UP CARD", cy + CH / 2 + 30)
    elif state is UpCardState.TURNED_DOWN:
        # every viewer saw the card: it stays face up, turned a quarter and dimmed
        turning = st.kind is StepKind.CALL and act is not None and act.call == "Pass" and len(st.calls) == ctx.players
        run = ctx.run if turning and ctx.run > 0 else 0.0
        rot: Num = b.tween(0.0, run, 0.0, TURNED_ROT, "inout") if run else TURNED_ROT
        dim: Num = b.tween(0.0, run, 0.0, 1.0, "inout") if run else 1.0
        b.save()
        b.translate(cx, cy)
        b.rotate(rot)
        card(ctx, ctx.sprite_id(up), 0, 0, shadow=dev)
        b.alpha(dim)
        b.rrect(-CW / 2, -CH / 2, CW, CH, CW * ctx.theme.cards.radius, "#0b0f1880", None, 0)
        b.restore()
        _caption(ctx, "TURNED DOWN", cy + CH / 2 + 34)


#: tilt of a turned-down up-card (radians): a quarter turn, the way a dealer turns it over
TURNED_ROT = math.pi / 2


def _caption(ctx: Ctx, text: str, baseline: float) -> None:
    """A caption under the up-card, on its own dark pill (the felt is translucent: text on it
    alone would lose contrast over a bright picture)."""
    _pill(ctx, CENTRE[0], baseline, text, ctx.theme.muted, "#0b0f18eb", size=20, ls=2.0)


# flights between elements ------------------------------------------------------------------
def draw_flights(ctx: Ctx) -> None:
    """Cards moving between elements, drawn in view coordinates on top of everything."""
    st, b = ctx.state, ctx.b
    act = st.action
    play = ctx.placed.get(ElementType.PLAY_AREA)
    if act is None or act.seat is None:
        return
    hand_el = ctx.placed.get(HAND_TYPES[ctx.pos_of(act.seat)])
    pos = ctx.pos_of(act.seat)
    if st.kind is StepKind.CARD and act.card is not None and play is not None:
        before = ctx.sorted_hand(list(st.hands[act.seat]) + [act.card]) if act.seat < len(st.hands) else [act.card]
        idx = ctx.leaving_slot(act.seat, before, act.card)
        ex, ey = ctx.to_view(play, *SLOTS[pos])
        es = CS * play.scale
        if hand_el is not None:
            sx, sy = ctx.to_view(hand_el, hand_slots(len(before))[idx], CH / 2)
            ss = CS * hand_el.scale
        else:
            dx, dy = [(0, 1), (-1, 0), (0, -1), (1, 0)][pos]
            sx, sy, ss = ex + dx * 300, ey + dy * 300, es
        e = ctx.st.ease
        run = max(ctx.run, 1e-3)
        lift = b.track([(0.0, 1.0), (run * 0.5, 1.08, "out"), (run, 1.0, "in")])
        b.save()
        b.translate(b.tween(0, run, sx, ex, e), b.tween(0, run, sy, ey, e))
        b.scale(b.tween(0, run, ss, es, e))
        b.scale(lift)
        dev = ctx.out_scale * play.scale
        trick = st.trick
        mark = trick is not None and alt_card(ctx.line, st, trick.number, len(trick.cards) - 1, max(1, ctx.players - len(st.sit_out)))
        card(ctx, ctx.sprite_id(act.card), 0, 0, s=1.0, rot=b.tween(0, run, 0.0, TILT[pos], e), shadow=dev, mark=mark)
        b.restore()
    elif st.kind is StepKind.DISCARD and act.card is not None and hand_el is not None:
        kit = ctx.placed.get(ElementType.KITTY_TRACKER)
        before = ctx.sorted_hand(list(st.hands[act.seat]) + [act.card])
        idx = ctx.leaving_slot(act.seat, before, act.card)
        sx, sy = ctx.to_view(hand_el, hand_slots(len(before))[idx], CH / 2)
        if kit is not None:
            ex, ey = ctx.to_view(kit, 60, 80)
        elif play is not None:
            ex, ey = ctx.to_view(play, *CENTRE)
        else:
            return
        run = max(ctx.run, 1e-3)
        sid = ctx.sprite_id(act.card, face=ctx.face_up(act.seat))
        a = b.track([(run * 0.6, 1.0), (run, 0.0, "in")])
        card(ctx, sid, b.tween(0, run, sx, ex, "inout"), b.tween(0, run, sy, ey, "inout"), s=CS * hand_el.scale, alpha=a)
    elif st.kind is StepKind.CALL and act.call == "Order" and play is not None and st.up_card is not None:
        dealer_el = ctx.placed.get(HAND_TYPES[ctx.pos_of(st.dealer)])
        sx, sy = ctx.to_view(play, *CENTRE)
        if dealer_el is None:
            return
        ex, ey = ctx.to_view(dealer_el, HAND_W / 2, CH / 2)
        run = max(ctx.run, 1e-3)
        a = b.track([(run * 0.7, 1.0), (run, 0.0, "linear")])
        s = b.tween(0, run, CS * play.scale, CS * dealer_el.scale, "inout")
        b.save()
        b.translate(b.tween(0, run, sx, ex, "inout"), b.tween(0, run, sy, ey, "inout"))
        b.scale(s)
        card(ctx, ctx.sprite_id(st.up_card), 0, 0, s=1.0, alpha=a)
        b.restore()
