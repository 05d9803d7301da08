"""The trick-taken callout: "RAMAN TAKES IT WITH A♠" over the table while the trick is gathered.

A view element of its own (``trick-callout``), so a layout can move or hide it.  It appears
when the winning card is marked (the first third of the trick-taken run, see
:func:`renderer.table.gather_times`), stays through the hold and fades out at the end of the
step, so it never covers the next card.
"""

from __future__ import annotations

from engine.cards import Rank
from engine.state import StepKind

from .cardart import suit_colour, suit_path
from .context import MIN_TEXT, Ctx
from .fonts import measure
from .view import Element

__all__ = ["draw_trick_callout", "callout_text"]

W, H = 460.0, 64.0
SIZE = 30.0
LS = 1.0


def callout_text(ctx: Ctx, width: float) -> str | None:
    """The callout's words (the card's suit is drawn as a shape after them), or None.

    The winner's display name in full when it fits at :data:`renderer.context.MIN_TEXT`, else
    its first word: a name, never a cut.
    """
    st = ctx.state
    trick = st.trick
    if st.kind is not StepKind.TRICK_TAKEN or trick is None or trick.winner is None:
        return None
    i = trick.seats.index(trick.winner) if trick.winner in trick.seats else -1
    if i < 0:
        return None
    c = trick.cards[i]
    if c.joker:
        what = "THE JOKER"
    elif c.rank is None:
        what = "?"
    else:
        what = "10" if c.rank == Rank.TEN else c.rank.letter
    name = ctx.name(trick.winner).upper()
    for who in (name, (name.split() or [name])[0]):
        text = f"{who} TAKES IT WITH {what}"
        if measure(ctx.theme.font_heading, MIN_TEXT, text, LS) <= width:
            return text
    return f"TAKES IT WITH {what}"


def draw_trick_callout(ctx: Ctx, el: Element) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    suit_w = 30.0
    room = W - 48 - suit_w
    text = callout_text(ctx, room)
    if text is None:
        return
    trick = st.trick
    assert trick is not None and trick.winner is not None
    won = trick.cards[trick.seats.index(trick.winner)]
    suit = None if won.joker else won.suit
    from .table import gather_times

    mark, _, _ = gather_times(ctx.run)
    total = ctx.st.total
    sc, al = ctx.pop(mark, max(0.05, ctx.run * 0.25), start=0.8)
    fade = b.track([(0.0, 1.0), (max(mark + 0.1, total - 0.3), 1.0), (max(mark + 0.2, total), 0.0, "in")])
    size = SIZE
    tw = measure(th.font_heading, size, text, LS)
    if tw > room:
        size = max(MIN_TEXT, size * room / tw)
        tw = measure(th.font_heading, size, text, LS)
    full = tw + (suit_w + 6 if suit is not None else 0)
    b.save()
    b.alpha(al)
    b.alpha(fade)
    b.translate(W / 2, H / 2)
    b.scale(sc)
    b.translate(-W / 2, -H / 2)
    ctx.panel(W / 2 - full / 2 - 24, 0, full + 48, H, el=el, r=H / 2)
    b.rrect(W / 2 - full / 2 - 24, 0, full + 48, H, H / 2, None, ctx.team_colour(trick.winner % 2), 3)
    x0 = W / 2 - full / 2
    ctx.label(th.font_heading, size, x0, H / 2 + size * 0.36, text, ctx.text_colour(el), ls=LS)
    if suit is not None:
        cx, cy, r = x0 + tw + 6 + suit_w / 2, H / 2 - 1, suit_w / 2
        b.rrect(cx - r, cy - r, 2 * r, 2 * r, r, "#ffffffff", None, 0)
        b.path(suit_path(suit, cx - r * 0.62, cy - r * 0.6, r * 1.24), suit_colour(suit, th.cards), None, 0)
    b.restore()
