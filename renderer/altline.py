"""An alternative line on air: the "ALTERNATIVE LINE" banner and the marks on the line's cards.

A channel may play one of a file's alternative lines (``alternativeLines``: what else could
have been played) as a "what if" segment.  Viewers must never take it for the real game, so
the picture says it twice: a banner across the top of the view for the whole segment, and
an outline with an "ALT" tag on every card the line plays (cards of the same trick played on
the main line before the deviation stay plain).  Both are drawn with the ordinary ops, so
the page and the skia executor draw them alike.

Pure: the caller (the overlay, which knows which line it plays) passes an :class:`AltLine`;
:mod:`renderer.linemarks` draws the banner and the marks.  :class:`LineInfo` describes a
line for a picker (the studio's; the service lists a game's lines,
:func:`overlay.service.branching.line_list`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.state import GameState

__all__ = ["AltLine", "LineInfo", "alt_card"]


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


@dataclass(frozen=True)
class LineInfo:
    """One alternative line as the studio's picker lists it: how to name it in ``branch``
    (``game``, ``deal``, ``line``, from 1 as people count) and what it changes: the action
    where it leaves the main line (``at``: ``call``, ``discard`` or ``card``; the deal's
    ``call`` number, or the ``trick`` and the ``card`` within it, from 1), who acts, what the
    line plays there and what the main line played (``instead``: None where the main line has
    no such action), its ``steps`` (0: the line cannot be played, see the game's problems) and
    the deal's points at its end (None: the line stops before the deal is scored)."""

    game: int | None
    deal: int
    line: int
    at: str | None
    call: int | None
    trick: int | None
    card: int | None
    seat: int | None
    player: str | None
    play: str | None
    instead: str | None
    steps: int
    points: tuple[int, ...] | None

    def to_json(self) -> dict[str, object]:
        return {
            "game": self.game,
            "deal": self.deal,
            "line": self.line,
            "at": self.at,
            "call": self.call,
            "trick": self.trick,
            "card": self.card,
            "seat": self.seat,
            "player": self.player,
            "play": self.play,
            "instead": self.instead,
            "steps": self.steps,
            "points": None if self.points is None else list(self.points),
        }


def alt_card(line: AltLine | None, state: GameState, trick: int, index: int, per: int) -> bool:
    """Whether card ``index`` of trick ``trick`` (from 0, ``per`` cards a trick) is the line's."""
    if line is None or state.branch is None or state.deal != line.deal:
        return False
    return trick * per + index >= line.first_card
