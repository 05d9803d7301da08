"""What the packer and the unpacker of condensed deal streams share (spec sections 6 and 7):
the decks and their min-rank codes, the version the reference writes for a deal, the end
marker, and the pool of cards an alternative line starts from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..cards import SUIT_ORDER, card_name, deck
from .bitstream import WIDTHS

__all__ = [
    "BIDDING",
    "PLAY",
    "MIN_RANK_CODES",
    "SUITS",
    "DECKS",
    "DECK_INDEX",
    "END_MARKER",
    "MAX_POOL",
    "deck_for",
    "rank_code",
    "choose_version",
    "pool_before",
]

BIDDING = "EUCHRE_BIDDING"
PLAY = "TRICK_PLAY"

#: min_rank -> code in the V2/V3 header (spec 7.2); any other value uses code 0.
MIN_RANK_CODES = {9: 0, 8: 1, 7: 2, 6: 3}
SUITS = tuple(s.value for s in SUIT_ORDER)  # s, h, c, d
DECKS: dict[int, tuple[str, ...]] = {
    code: tuple(card_name(c) for c in deck(rank)) for rank, code in MIN_RANK_CODES.items()
}
DECK_INDEX = {code: {c: i for i, c in enumerate(cards)} for code, cards in DECKS.items()}
END_MARKER = 0b1010
MAX_POOL = len(WIDTHS)


def deck_for(code: int) -> tuple[str, ...]:
    """The full deck for a min-rank code, in the reference's order (s, h, c, d per rank)."""
    return DECKS[code]


def rank_code(ruleset: Mapping[str, Any]) -> int:
    """The min-rank code of a ruleset's ``min_rank`` (0, the 24-card deck, for anything else)."""
    rank = ruleset.get("min_rank", 9)
    return MIN_RANK_CODES.get(rank, 0) if isinstance(rank, int) and not isinstance(rank, bool) else 0


def choose_version(deal: Mapping[str, Any], ruleset: Mapping[str, Any]) -> int:
    """Which bitstream version the reference's converter writes for this deal (spec 6)."""
    biddings = [p for p in deal.get("phases") or () if isinstance(p, dict) and p.get("type") == BIDDING]
    alt_biddings = [
        p
        for line in deal.get("alternativeLines") or ()
        if isinstance(line, dict)
        for p in line.get("phases") or ()
        if isinstance(p, dict) and p.get("type") == BIDDING
    ]
    state = deal.get("initialState") or {}
    hands = state.get("playerCards")
    if any("discard" in p for p in biddings + alt_biddings) or (
        isinstance(hands, list) and any(isinstance(h, list) and h for h in hands)
    ):
        return 3
    players = ruleset.get("num_players", 4)
    rank = ruleset.get("min_rank", 9)
    dealer = state.get("dealer", 0)
    defender = any("aloneDefender" in p and p["aloneDefender"] != -1 for p in biddings)
    if players != 4 or rank != 9 or defender or (isinstance(dealer, int) and dealer >= 4):
        return 2
    return 1


def pool_before(full: Sequence[str], phases: Sequence[Any], branch: int) -> list[str]:
    """Full deck minus the main-line cards played before ``branch`` actions (spec 7.2)."""
    pool = list(full)
    left = branch
    for phase in phases:
        if left <= 0 or not isinstance(phase, dict):
            break
        if phase.get("type") == BIDDING:
            left -= len(phase.get("calls") or ())
        elif phase.get("type") == PLAY:
            for trick in phase.get("tricks") or ():
                for card in trick if isinstance(trick, list) else ():
                    if left <= 0:
                        return pool
                    if card in pool:
                        pool.remove(card)
                    left -= 1
    return pool
