"""An alternative line on air: the "ALTERNATIVE LINE" banner and the marks on the line's cards.

A channel may play one of a file's alternative lines (``alternativeLines``: what else could
have been played) as a "what if" segment.  Viewers must never take it for the real game, so
the picture says it twice: a banner across the top of the view for the whole segment, and
an outline with an "ALT" tag on every card the line plays (cards of the same trick played on
the main line before the deviation stay plain).  Both are drawn with the ordinary ops, so
the page and the skia executor draw them alike.

Pure: the caller (the overlay, which knows which line it plays) passes an :class:`AltLine`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.state import GameState

if TYPE_CHECKING:
    from .context import Ctx

__all__ = ["AltLine", "ALT_COLOUR", "BANNER_W", "BANNER_H", "alt_card", "draw_card_mark", "draw_banner"]

#: the colour of the line's marks: magenta, unlike any team, suit or theme accent colour
ALT_COLOUR = "#ff3fd2ff"
BANNER_W, BANNER_H = 620.0, 74.0


@dataclass(frozen=True)
class AltLine:
    """Which alternative line is on air, as the picture needs it.

    ``deal`` is the deal's position (from 0) and ``line`` the line's index in that deal's
    ``alternativeLines`` (from 0); the banner shows both counted from 1, as people count.
    ``first_card`` is the deal-wide play index (0 = the first card of the deal) of the first
    card the line plays: cards from there on are the line's (0 when the line leaves the main
    line during the bidding: every card is the line's).
    """

    deal: int
    line: int
    first_card: int = 0
    game: int | None = None  # a match's game (from 0), None for a plain game

    def label(self) -> str:
        where = f"GAME {self.game + 1} \u00b7 " if self.game is not None else ""
        return f"{where}DEAL {self.deal + 1} \u00b7 LINE {self.line + 1} \u00b7 NOT THE REAL PLAY"


def alt_card(line: AltLine | None, state: GameState, trick: int, index: int, per: int) -> bool:
    """Whether card ``index`` of trick ``trick`` (from 0, ``per`` cards a trick) is the line's."""
    if line is None or state.branch is None or state.deal != line.deal:
        return False
    return trick * per + index >= line.first_card


def draw_card_mark(ctx: Ctx, w: float, h: float) -> None:
    """The mark of a line's card, in the card's own frame (centred on the origin, ``w`` x ``h``):
    a thick outline and an "ALT" tag on its top edge, so it moves and turns with the card."""
    b = ctx.b
    b.rrect(-w / 2 - 4, -h / 2 - 4, w + 8, h + 8, 12, None, ALT_COLOUR, 5)
    b.rrect(-24, -h / 2 - 14, 48, 22, 11, ALT_COLOUR, None, 0)
    ctx.label(ctx.theme.font_title, 16, 0, -h / 2 + 3, "ALT", "#16181dff", align="center", width=44, ls=1.0)


def draw_banner(ctx: Ctx, line: AltLine) -> None:
    """The banner, centred at the top of the view (above the north hand, inside title-safe).

    A dark panel with a magenta frame and stripe, "ALTERNATIVE LINE" and which line it is."""
    b, th = ctx.b, ctx.theme
    x = (ctx.view.width - BANNER_W) / 2
    y = ctx.view.height * 0.05 - 28
    b.save()
    b.translate(x, y)
    b.save()
    b.shadow(th.shadow, 14 * ctx.out_scale, 0, 4 * ctx.out_scale)
    b.rrect(0, 0, BANNER_W, BANNER_H, 12, "#16060fee", ALT_COLOUR, 3)
    b.restore()
    b.rrect(0, 0, 16, BANNER_H, 6, ALT_COLOUR, None, 0)
    b.rrect(BANNER_W - 16, 0, 16, BANNER_H, 6, ALT_COLOUR, None, 0)
    ctx.label(th.font_title, 36, BANNER_W / 2, 40, "ALTERNATIVE LINE", "#ffffffff", align="center", width=BANNER_W - 60, ls=3.0)
    ctx.label(th.font_body, 17, BANNER_W / 2, 64, line.label(), "#ffc4f1ff", align="center", width=BANNER_W - 60, ls=1.5)
    b.restore()
