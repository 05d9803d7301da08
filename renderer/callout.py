"""The trick-taken callout's content and the gather's timing: "RAMAN TAKES IT WITH THE A♠".

Pure content, no drawing (``renderer.panels`` draws the ``trick-callout`` element from it),
so that the table, the panels and the tests share one definition of what the callout says
and when the winning card is marked.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.cards import Card, Rank
from engine.state import GameState, StepKind

__all__ = ["gather_times", "trick_winner", "callout_text"]


def gather_times(run: float) -> tuple[float, float, float]:
    """(mark, gathered, gone) of a trick-taken step, seconds into its run.

    The winning card is marked first, with the cards still where they were played (a viewer
    sees which card won before anything moves); then the others slide under it on the
    winner's side of the table; then the pile, winning card on top, leaves towards the
    winner.  Each flight is about a third of the run (0.4 s or more with the default timing),
    slow enough to follow on television; the callout appears at the mark.
    """
    return run * 0.3, run * 0.62, run


def trick_winner(state: GameState) -> tuple[int, Card] | None:
    """(seat, card) that took the trick of a trick-taken step, else None."""
    trick = state.trick
    if state.kind is not StepKind.TRICK_TAKEN or trick is None or trick.winner is None or trick.winner not in trick.seats:
        return None
    return trick.winner, trick.cards[trick.seats.index(trick.winner)]


def callout_text(state: GameState, name: str, fits: Callable[[str], bool]) -> str | None:
    """The callout's words for a trick-taken state (the card's suit is drawn as a shape after
    them), or None.  ``name`` is the winner's display name; ``fits`` says whether a text fits
    the callout at the least text size: the name is used whole when it fits, else its first
    word (a name, never a cut).

    The card is named as a card ("THE A" and the spade shape: the ace of spades), the way
    the scene names the joker ("THE JOKER"): "WITH A♠" read as "with a spade"."""
    won = trick_winner(state)
    if won is None:
        return None
    c = won[1]
    if c.joker:
        what = "THE JOKER"
    elif c.rank is None:
        what = "?"
    else:
        what = "THE " + ("10" if c.rank == Rank.TEN else c.rank.letter)
    upper = name.upper()
    for who in (upper, (upper.split() or [upper])[0]):
        text = f"{who} TAKES IT WITH {what}"
        if fits(text):
            return text
    return f"TAKES IT WITH {what}"
