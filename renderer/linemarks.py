"""The drawing of an alternative line on air (:mod:`renderer.altline`): the banner across
the top of the view and the mark on each of the line's cards."""

from __future__ import annotations

from .altline import AltLine
from .context import Ctx

__all__ = ["ALT_COLOUR", "BANNER_W", "BANNER_H", "draw_card_mark", "draw_banner"]

#: the colour of the line's marks: magenta, unlike any team, suit or theme accent colour
ALT_COLOUR = "#ff3fd2ff"
BANNER_W, BANNER_H = 540.0, 76.0  # its bottom clears the north hand of the default view


def draw_card_mark(ctx: Ctx, w: float, h: float) -> None:
    """The mark of a line's card, in the card's own frame (centred on the origin, ``w`` x ``h``):
    a thick outline and an "ALT" tag on its top edge, so it moves and turns with the card."""
    b = ctx.b
    b.rrect(-w / 2 - 4, -h / 2 - 4, w + 8, h + 8, 12, None, ALT_COLOUR, 5)
    b.rrect(-28, -h / 2 - 17, 56, 28, 14, ALT_COLOUR, None, 0)
    ctx.label(ctx.theme.font_title, 21, 0, -h / 2 + 4, "ALT", "#16181dff", align="center", width=48, ls=1.0)


def draw_banner(ctx: Ctx, line: AltLine) -> None:
    """The banner at the top of the view, a little right of centre: in the default layout it
    sits above the north hand, between the trump tracker and the title.

    A dark panel with a magenta frame and stripe, "ALTERNATIVE LINE" and which line it is."""
    b, th = ctx.b, ctx.theme
    x = (ctx.view.width - BANNER_W) / 2 + ctx.view.width / 16
    y = ctx.view.height * 0.05 - 32
    b.save()
    b.translate(x, y)
    b.save()
    b.shadow(th.shadow, 14 * ctx.out_scale, 0, 4 * ctx.out_scale)
    b.rrect(0, 0, BANNER_W, BANNER_H, 12, "#16060fee", ALT_COLOUR, 3)
    b.restore()
    b.rrect(0, 0, 16, BANNER_H, 6, ALT_COLOUR, None, 0)
    b.rrect(BANNER_W - 16, 0, 16, BANNER_H, 6, ALT_COLOUR, None, 0)
    ctx.label(th.font_title, 36, BANNER_W / 2, 40, "ALTERNATIVE LINE", "#ffffffff", align="center", width=BANNER_W - 50, ls=2.5)
    ctx.label(th.font_body, 20, BANNER_W / 2, 66, line.label(), "#ffc4f1ff", align="center", width=BANNER_W - 50, ls=1.2)
    b.restore()
