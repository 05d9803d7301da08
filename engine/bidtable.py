"""The bidding table: the double-dummy value of every call open to the player to act, and
the dealer's discard table after an order-up.

A commentator's question at the bidding is "what is each call worth?".  Each call is valued
by :class:`engine.solve.Solver` on the whole deal with all hands known, in the order the
decisions are taken at the table: the maker names trump (alone or not); if the ruleset lets a
defender defend alone against a loner, the defenders take whichever of their choices is best
for them; after a round-1 order-up the dealer keeps the discard that is best for the dealer's
team.  ``Pass`` has no double-dummy value (it hands the decision to the next player) and is
listed without one.  Pure: states in, values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card, Suit, card_name, resolve
from .rules import Table
from .ruleset import Ruleset
from .solve import CardValue, PlayAnalysis, Position, Solver, value_of
from .state import GameState, StepKind, UpCardState, team_of

__all__ = ["CallValue", "BiddingTable", "bidding_table", "agreed_table", "discard_table", "call_value"]

_TABLE4 = Table(4)


@dataclass(frozen=True)
class CallValue:
    """One call open to the player: its whole-deal tricks and points per team under best
    play (``None`` for ``Pass``), the dealer's best discard after an order-up, and the lone
    defender the defenders would choose (-1: none)."""

    call: str
    alone: bool
    tricks: tuple[int, int] | None
    points: tuple[int, int] | None
    discard: Card | None = None
    alone_defender: int = -1

    @property
    def label(self) -> str:
        return self.call + (" alone" if self.alone else "")

    def to_json(self) -> dict[str, object]:
        return {
            "call": self.call,
            "alone": self.alone,
            "ddTricks": list(self.tricks) if self.tricks is not None else None,
            "points": list(self.points) if self.points is not None else None,
            "discard": card_name(self.discard) if self.discard is not None else None,
            "aloneDefender": self.alone_defender,
        }


@dataclass(frozen=True)
class BiddingTable:
    """The calls open to ``seat`` in bidding ``round`` (1 or 2), and the best of them for its
    team (by points, then tricks)."""

    seat: int
    round: int
    calls: tuple[CallValue, ...]
    best: tuple[CallValue, ...]


def _known(hands: Sequence[Sequence[Card]]) -> bool:
    return len(hands) == 4 and all(len(h) == 5 and all(c.known for c in h) for h in hands)


def call_value(
    solver: Solver,
    rules: Ruleset,
    *,
    hands: Sequence[Sequence[Card]],
    dealer: int,
    up_card: Card,
    maker: int,
    trump: Suit | None,
    alone: bool,
    round: int,
    tokens: tuple[int, int] = (0, 0),
) -> CallValue:
    """The value of one call (``trump`` None: no-trump), with the defenders' and the dealer's
    best answers.  ``hands`` are the four hands as dealt (five cards each)."""
    defenders = [-1]
    if alone and rules.defend_alone:
        defenders += [(maker + 1) % 4, (maker + 3) % 4]
    maker_team = team_of(maker)
    sign = 1 if maker_team == 0 else -1  # the makers maximise sign * value
    best: tuple[int, Card | None, int] | None = None
    for defender in defenders:
        sit_out = _TABLE4.sit_out(maker, alone, defender)
        v, discard = _after_pick_up(solver, rules, hands, dealer, up_card, maker, trump, alone, defender, sit_out, round, tokens)
        if best is None or sign * v < sign * best[0]:  # defenders choose what hurts the makers most
            best = (v, discard, defender)
    assert best is not None
    tricks, points = value_of(best[0])
    call = "n" if trump is None else ("Order" if round == 1 and not up_card.joker else trump.value)
    return CallValue(call, alone, tricks, points, best[1], best[2])


def _after_pick_up(
    solver: Solver,
    rules: Ruleset,
    hands: Sequence[Sequence[Card]],
    dealer: int,
    up_card: Card,
    maker: int,
    trump: Suit | None,
    alone: bool,
    defender: int,
    sit_out: frozenset[int],
    round: int,
    tokens: tuple[int, int],
) -> tuple[int, Card | None]:
    """Value once the dealer (picking up in round 1 unless sitting out) keeps its best discard."""
    leader = _TABLE4.first_leader(rules, dealer, maker, alone, sit_out)

    def position(seat_hands: Sequence[Sequence[Card]]) -> Position:
        cards = tuple(tuple(resolve(c, trump) for c in h) if s not in sit_out else () for s, h in enumerate(seat_hands))
        return Position(rules, trump, maker, alone, defender, sit_out, cards, leader, (), (), tokens)

    if round != 1 or dealer in sit_out:
        return solver.value(position(hands)), None
    sign = 1 if team_of(dealer) == 0 else -1
    best: tuple[int, Card | None] | None = None
    six = list(hands[dealer]) + [up_card]
    for i, discard in enumerate(six):
        kept = six[:i] + six[i + 1 :]
        v = solver.value(position([kept if s == dealer else h for s, h in enumerate(hands)]))
        if best is None or sign * v > sign * best[0]:
            best = (v, discard)
    assert best is not None
    return best


def bidding_table(state: GameState, rules: Ruleset, solver: Solver) -> BiddingTable | None:
    """The bidding table for the player to act at a bidding step, or ``None`` when the step is
    not in the bidding, the table is not four players, or a hand or the up-card is unknown."""
    if state.num_players != 4 or state.maker is not None or state.thrown_in or state.to_act is None:
        return None
    if state.kind not in (StepKind.DEAL_START, StepKind.CALL) or state.up_card is None or not state.up_card.known:
        return None
    if not _known(state.hands):
        return None
    seat = state.to_act
    rnd = 1 if len(state.calls) < 4 else 2
    up = state.up_card
    options: list[tuple[Suit | None, bool]] = []
    if rnd == 1:
        suits: list[Suit | None] = list(Suit) if up.joker else [up.suit]
    else:
        suits = [s for s in Suit if s is not up.suit]
        if rules.allow_no_trump:
            suits.append(None)
    forced_alone = rules.canadian and rnd == 1 and seat == _TABLE4.partner(state.dealer)
    for trump in suits:
        for alone in (False, True):
            if forced_alone and not alone:
                continue
            options.append((trump, alone))
    calls: list[CallValue] = []
    stuck = rnd == 2 and rules.std and seat == state.dealer
    if not stuck:
        calls.append(CallValue("Pass", False, None, None))
    for trump, alone in options:
        calls.append(call_value(solver, rules, hands=state.hands, dealer=state.dealer, up_card=up, maker=seat, trump=trump, alone=alone, round=rnd, tokens=state.tokens))
    team = team_of(seat)
    valued = [c for c in calls if c.points is not None and c.tricks is not None]
    if not valued:
        return BiddingTable(seat, rnd, tuple(calls), ())

    def worth(c: CallValue) -> tuple[int, int]:
        assert c.points is not None and c.tricks is not None
        return (c.points[team] - c.points[1 - team], c.tricks[team])

    top = max(worth(c) for c in valued)
    return BiddingTable(seat, rnd, tuple(calls), tuple(c for c in valued if worth(c) == top))


def agreed_table(tables: Sequence[BiddingTable]) -> BiddingTable | None:
    """What several tables of one bidding decision agree on (the same calls valued on hands
    that differ in one card nobody saw, :func:`engine.hindsight.discard_options`): a call
    keeps its value where every table gives it the same tricks and points, and has none
    otherwise (as ``Pass``); the dealer's best discard and the lone defender are kept where
    they agree too.  The best calls are those best in every table and valued here (none, when
    no call is).  ``None`` without tables."""
    if not tables:
        return None
    first = tables[0]
    calls: list[CallValue] = []
    for i, c in enumerate(first.calls):
        rows = [t.calls[i] for t in tables]
        if any(r.tricks != c.tricks or r.points != c.points for r in rows):
            calls.append(CallValue(c.call, c.alone, None, None))
            continue
        same_discard = all((r.discard is None) == (c.discard is None) and (r.discard is None or c.discard is None or r.discard.same(c.discard)) for r in rows)
        same_defender = all(r.alone_defender == c.alone_defender for r in rows)
        calls.append(CallValue(c.call, c.alone, c.tricks, c.points, c.discard if same_discard else None, c.alone_defender if same_defender else -1))
    everywhere = set.intersection(*({(b.call, b.alone) for b in t.best} for t in tables))
    best = tuple(c for c in calls if (c.call, c.alone) in everywhere and c.tricks is not None)
    return BiddingTable(first.seat, first.round, tuple(calls), best)


def discard_table(state: GameState, rules: Ruleset, solver: Solver) -> PlayAnalysis | None:
    """After a round-1 order-up, before the discard: the value of each of the dealer's six
    cards as the discard, in the shape of a play analysis (``best``: the best discards)."""
    if state.num_players != 4 or state.kind is not StepKind.CALL or state.maker is None or state.up_card_state is not UpCardState.TAKEN:
        return None
    if state.up_card is None or not state.up_card.known or not _known(state.hands):
        return None
    trump = None if state.no_trump else state.trump
    if trump is None and not state.no_trump:
        return None
    dealer, up = state.dealer, state.up_card
    leader = _TABLE4.first_leader(rules, dealer, state.maker, state.alone, state.sit_out)
    six = list(state.hands[dealer]) + [up]
    values: list[tuple[Card, int]] = []
    for i, discard in enumerate(six):
        kept = six[:i] + six[i + 1 :]
        cards = tuple(tuple(resolve(c, trump) for c in (kept if s == dealer else h)) if s not in state.sit_out else () for s, h in enumerate(state.hands))
        p = Position(rules, trump, state.maker, state.alone, state.alone_defender, state.sit_out, cards, leader, (), (), state.tokens)
        values.append((discard, solver.value(p)))
    team = team_of(dealer)
    sign = 1 if team == 0 else -1
    top = max(sign * v for _, v in values)
    best_tricks, best_points = value_of(sign * top)
    out: list[CardValue] = []
    for card, v in values:
        tricks, points = value_of(v)
        out.append(CardValue(card, tricks, points, best_tricks[team] - tricks[team], (best_points[team] - best_points[1 - team]) - (points[team] - points[1 - team])))
    return PlayAnalysis(best_tricks, best_points, dealer, tuple(c for c, v in values if sign * v == top), tuple(out))
