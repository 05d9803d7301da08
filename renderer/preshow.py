"""The pre-show picture: a channel whose players are seated but whose first deal has not begun.

A channel with players and no deals used to be a blank page.  The pre-show state is an
ordinary :class:`~engine.state.GameState` with ``deal = -1`` (see
:func:`renderer.context.is_preshow`): every element draws what it can from it (title with
"STARTING SOON", team names and the score bug at the match's initial score, name plates
without cards, an empty table) and nothing it cannot (no dealer button, no up-card, no trump).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.state import GameState, StepKind, UpCardState

__all__ = ["preshow_state"]


def preshow_state(
    players: Sequence[str], *, score: Sequence[int] = (0, 0), num_players: int = 4, lowest_rank: int = 9, joker: bool = False
) -> GameState:
    """The state drawn before the first deal of a game with ``players`` (seat order).

    ``score`` is the score the game starts from (a match's ``initialScore``); only the first
    two teams are shown.  ``lowest_rank`` and ``joker``: the deck its rules deal (the
    timeline's), which the cards-played panel shows.
    """
    n = num_players if 2 <= num_players <= 10 else 4
    s = (list(score) + [0, 0])[:2]
    return GameState(
        step=-1,
        kind=StepKind.DEAL_START,
        action=None,
        deal=-1,
        deal_number=-1,
        num_players=n,
        players=tuple(players),
        dealer=-1,
        up_card=None,
        up_card_state=UpCardState.FACE_UP,
        hands=tuple(() for _ in range(n)),
        score=(int(s[0]), int(s[1])),
        lowest_rank=lowest_rank,
        joker=joker,
    )
