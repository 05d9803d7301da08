"""Games with legal alternative lines, for the tests of alternative lines on air.

A line is made the way an annotator makes one: at a chosen card of the main line, the seat
to play plays another legal card, and the deal is played out from there with every seat
playing its first legal card (hands as the replay knows them).  The engine then replays it
as a branch without a problem, so the game loads strictly, as a logger's PUT does.
"""

from __future__ import annotations

import json
from typing import Any

from engine.cards import Card, card_name, effective_suit
from engine.generate import generate_game
from engine.load import load_game
from engine.rules import led_suit, trick_winner
from engine.state import GameState, StepKind

__all__ = ["lined_game", "deviation"]


def _legal(hand: list[Card], trick: list[Card], trump: Any) -> list[Card]:
    led = led_suit(trick, trump)
    follow = [c for c in hand if led is not None and effective_suit(c, trump) is led]
    return sorted(follow or hand, key=card_name)


def deviation(doc: dict[str, Any], deal: int, card: int) -> dict[str, Any] | None:
    """An alternative line of deal position ``deal`` leaving the main line at its ``card``-th
    card (deal-wide, from 0) with another legal card; None when the seat has no other."""
    tl = load_game(json.dumps(doc), source="lines.egn").timeline
    steps = [s for s in tl.steps if s.deal == deal and s.kind is StepKind.CARD]
    if card >= len(steps):
        return None
    played = steps[card]
    parent: GameState = tl.steps[played.step - 1]
    if parent.trump is None or played.action is None or played.action.card is None:
        return None
    trump = parent.trump
    hands = [list(h) for h in parent.hands]
    if any(not c.known for h in hands for c in h):
        return None
    seats = [s for s in range(parent.num_players) if s not in parent.sit_out]
    per = len(seats)
    cur = parent.trick
    trick = list(cur.cards) if cur is not None and not cur.complete else []
    order = list(cur.seats) if cur is not None and not cur.complete else []
    seat = played.action.seat
    assert seat is not None
    others = [c for c in _legal(hands[seat], trick, trump) if c != played.action.card]
    if not others:
        return None
    tricks: list[list[str]] = [[]]
    calls = len(parent.calls)
    first = True
    while any(hands[s] for s in seats):
        c = others[0] if first else _legal(hands[seat], trick, trump)[0]
        first = False
        hands[seat].remove(c)
        trick.append(c)
        order.append(seat)
        tricks[-1].append(card_name(c))
        if len(trick) == per:
            w = trick_winner(trick, trump)
            assert w is not None
            seat = order[w]
            trick, order = [], []
            if any(hands[s] for s in seats):
                tricks.append([])
        else:
            seat = seats[(seats.index(seat) + 1) % per]
    return {"branchIndex": calls + card, "phases": [{"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": tricks}]}


def lined_game(seed: int = 7, *, deals: int = 3, deal: int = 1, cards: tuple[int, ...] = (5, 12)) -> dict[str, Any]:
    """A generated game whose deal position ``deal`` has one legal alternative line per entry
    of ``cards`` (the deal-wide card each leaves at), in that order; seeds are tried from
    ``seed`` on until every line can be made."""
    for s in range(seed, seed + 50):
        doc = generate_game(s, deals=deals)
        lines = [deviation(doc, deal, c) for c in cards]
        if all(line is not None for line in lines):
            doc["deals"][deal]["alternativeLines"] = lines
            return doc
    raise AssertionError(f"no seed from {seed} gives lines at cards {cards} of deal {deal}")
