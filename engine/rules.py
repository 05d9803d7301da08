"""The rules of Euchre under a :class:`~engine.ruleset.Ruleset`: seats, leads, trick winner, score.

Pure functions of values; suit is judged only by :func:`engine.cards.effective_suit`
(through :func:`engine.cards.trick_power`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .cards import Card, Suit, effective_suit, trick_power
from .pickling import init_values
from .ruleset import LonerLead, Ruleset

__all__ = [
    "Table",
    "trick_winner",
    "led_suit",
    "can_follow",
    "reneges",
    "DealResult",
    "score_deal",
]


@dataclass(frozen=True)
class Table:
    """Seating of one deal: P players clockwise, teams of partners across the table."""

    players: int = 4
    #: Number of teams: P/2 partnerships for an even table, everyone alone otherwise
    #: (worked out once: the replay asks for every trick).
    teams: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        p = self.players
        object.__setattr__(self, "teams", p // 2 if p % 2 == 0 and p >= 4 else p)

    def team(self, seat: int) -> int:
        return seat % self.teams

    def partner(self, seat: int) -> int | None:
        if self.teams == self.players:
            return None
        return (seat + self.teams) % self.players

    def left_of(self, seat: int, sit_out: frozenset[int] = frozenset()) -> int:
        """Next seat clockwise that is playing."""
        for step in range(1, self.players + 1):
            nxt = (seat + step) % self.players
            if nxt not in sit_out:
                return nxt
        return (seat + 1) % self.players

    def order_from(self, leader: int, sit_out: frozenset[int] = frozenset()) -> list[int]:
        """Active seats clockwise starting at ``leader``."""
        return [(leader + i) % self.players for i in range(self.players) if (leader + i) % self.players not in sit_out]

    def sit_out(self, maker: int | None, alone: bool, alone_defender: int) -> frozenset[int]:
        out: set[int] = set()
        if maker is not None and alone:
            p = self.partner(maker)
            if p is not None:
                out.add(p)
            if alone_defender >= 0:
                q = self.partner(alone_defender)
                if q is not None:
                    out.add(q)
        return frozenset(out)

    def first_leader(self, rules: Ruleset, dealer: int, maker: int | None, alone: bool, sit_out: frozenset[int]) -> int:
        """Leader of trick 1: left of the dealer, or left of the loner under ``LEFT_OF_LONER``."""
        if alone and maker is not None and rules.loner_lead is LonerLead.LEFT_OF_LONER:
            return self.left_of(maker, sit_out)
        return self.left_of(dealer, sit_out)

    def __reduce__(self) -> tuple[type[Table], tuple[object, ...]]:
        return (Table, init_values(self))


def led_suit(cards: Sequence[Card], trump: Suit | None) -> Suit | None:
    """Suit led (the left bower and joker lead trump)."""
    return effective_suit(cards[0], trump) if cards else None


def trick_winner(cards: Sequence[Card], trump: Suit | None) -> int | None:
    """Position (0-based, table order) of the winning card; ``None`` if no card can be judged."""
    led = led_suit(cards, trump)
    best, best_power = None, 0
    for i, card in enumerate(cards):
        power = trick_power(card, trump, led)
        if power > best_power:
            best, best_power = i, power
    return best


def can_follow(hand: Sequence[Card], led: Suit | None, trump: Suit | None) -> bool:
    """True when the hand holds a card of the led suit (as judged with trump)."""
    return led is not None and any(effective_suit(c, trump) is led for c in hand)


def reneges(suit: Suit | None, held: Sequence[Suit | None], led: Suit | None) -> bool:
    """A card of ``suit`` does not follow ``led`` although the hand could.

    ``suit`` is the played card's effective suit, ``held`` those of the hand before it was
    played (each from :func:`engine.cards.effective_suit` under the deal's trump: the
    replay works them out once per card).
    """
    if led is None or suit is led or suit is None:
        return False
    return led in held


@dataclass(frozen=True)
class DealResult:
    points: tuple[int, ...]
    tokens: tuple[int, ...]
    euchred: bool
    march: bool
    fast_break: bool

    def __reduce__(self) -> tuple[type[DealResult], tuple[object, ...]]:
        return (DealResult, init_values(self))


def score_deal(
    rules: Ruleset,
    table: Table,
    *,
    maker: int,
    alone: bool,
    alone_defender: int,
    winners: Sequence[int],
    tokens: Sequence[int],
) -> DealResult:
    """Points per team for a finished deal (``winners``: seat that took each trick)."""
    teams = table.teams
    maker_team = table.team(maker)
    won = [table.team(w) == maker_team for w in winners]
    taken = sum(won)
    total = len(winners)
    points = [0] * teams
    new_tokens = list(tokens) + [0] * (teams - len(tokens))
    euchred = taken * 2 < total
    march = taken == total
    fast = (
        rules.fast_break
        and total == 5
        and won == [False, False, True, True, True]
    )
    if fast:
        pass
    elif not euchred:
        if march:
            points[maker_team] = rules.loner_march_score if alone else 2
        else:
            points[maker_team] = 1
            if rules.four_trick_tokens and not alone and taken == 4:
                new_tokens[maker_team] += 1
                if new_tokens[maker_team] >= 4:
                    new_tokens[maker_team] -= 4
                    points[maker_team] += 1
    else:
        if alone and alone_defender >= 0:
            gain = 4
        elif alone:
            gain = rules.loner_euchred_score
        else:
            gain = 2
        for t in range(teams):
            if t != maker_team:
                points[t] = gain
    return DealResult(tuple(points), tuple(new_tokens), euchred, march, fast)
