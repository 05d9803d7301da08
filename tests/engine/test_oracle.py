"""Differential test: the engine's ``inspect --json`` against a tiny independent Euchre oracle.

The oracle below is written from the rules text alone (it imports nothing from engine/
except the seeded game generator), with its own rank tables, so a bower or lead mistake in
the engine cannot hide behind the same mistake in the check.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.generate import generate_game
from engine.validate import validate_document
from engine.replay import replay

SAME_COLOUR = {"s": "c", "c": "s", "h": "d", "d": "h"}
ORDER = "789TJQKA"


def _suit(card: str, trump: str | None) -> str | None:
    if card == "B":
        return trump
    if trump and card[0] == "J" and card[1] == SAME_COLOUR[trump]:
        return trump
    return card[1]


def _power(card: str, trump: str | None, led: str | None) -> int:
    if card == "B":
        return 100
    suit = _suit(card, trump)
    if trump and suit == trump:
        if card == "J" + trump:
            return 90
        if card[0] == "J":
            return 89
        return 60 + ORDER.index(card[0])
    return 20 + ORDER.index(card[0]) if suit == led else 0


def oracle(doc: dict[str, Any]) -> list[dict[str, Any]]:
    rules = {"loner_lead": "LEFT_OF_DEALER", "loner_march_score": 4, "loner_euchred_score": 2, **(doc["metadata"].get("ruleset") or {})}
    out = []
    for deal in doc["deals"]:
        dealer = deal["initialState"]["dealer"]
        bid = deal["phases"][0]
        calls = bid["calls"]
        last = len(calls) - 1
        if calls[last] == "Pass":
            out.append({"trump": None, "points": [0, 0], "winners": []})
            continue
        maker = (dealer + 1 + last) % 4
        trump = deal["initialState"]["upCard"][1] if last < 4 else calls[last]
        trump_suit = None if trump == "n" else trump
        alone = bool(bid.get("isAlone"))
        defender = bid.get("aloneDefender", -1) if alone else -1
        out_seats = set()
        if alone:
            out_seats.add((maker + 2) % 4)
            if defender is not None and defender >= 0:
                out_seats.add((defender + 2) % 4)
        lead = (maker + 1) % 4 if alone and rules["loner_lead"] == "LEFT_OF_LONER" else (dealer + 1) % 4
        while lead in out_seats:
            lead = (lead + 1) % 4
        winners = []
        for trick in deal["phases"][1]["tricks"]:
            seats = [s % 4 for s in range(lead, lead + 4) if s % 4 not in out_seats]
            led = _suit(trick[0], trump_suit)
            best = max(range(len(trick)), key=lambda i: _power(trick[i], trump_suit, led))
            lead = seats[best]
            winners.append(lead)
        mine = [w % 2 == maker % 2 for w in winners]
        points = [0, 0]
        if rules.get("fast_break") and mine == [False, False, True, True, True]:
            pass
        elif sum(mine) == 5:
            points[maker % 2] = rules["loner_march_score"] if alone else 2
        elif sum(mine) >= 3:
            points[maker % 2] = 1
        else:
            points[1 - maker % 2] = 4 if defender is not None and defender >= 0 else rules["loner_euchred_score"] if alone else 2
        out.append({"trump": trump, "points": points, "winners": winners})
    return out


RULESETS: list[dict[str, Any]] = [
    {},
    {"joker": True},
    {"min_rank": 7},
    {"min_rank": 8, "std": False},
    {"allow_no_trump": True},
    {"defend_alone": True, "loner_lead": "LEFT_OF_LONER"},
    {"defend_alone": True},
    {"canadian": True, "loner_lead": "LEFT_OF_LONER"},
    {"fast_break": True},
    {"loner_march_score": 5, "loner_euchred_score": 3, "winning_score": 7},
    {"num_deals": 8},
]


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "defaults")
def test_engine_agrees_with_independent_oracle(rules: dict[str, Any]) -> None:
    for seed in range(25):
        doc = generate_game(1000 + seed, ruleset=rules)
        got = replay(validate_document(doc)).to_json()["deals"]
        want = oracle(doc)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert (g["trump"], g["points"], [t["winner"] for t in g["tricks"]]) == (w["trump"], w["points"], w["winners"]), (seed, i)
