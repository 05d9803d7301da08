"""Tables other than four players, and the joker as the up-card."""

from __future__ import annotations

import pytest

from engine.generate import generate_game
from engine.validate import validate_document
from engine.replay import replay
from tests.engine.test_rules import deal, game


@pytest.mark.parametrize("n", [0, -3, 11, 10**9])
def test_an_unsupported_table_size_replays_as_four_players_with_a_warning(n: int) -> None:
    doc = generate_game(5, deals=2)
    doc["metadata"]["ruleset"] = {"num_players": n}
    tl = replay(validate_document(doc), source="n.egn")  # 10**9 players: seated as 4, never dealt to
    assert tl.steps[0].num_players == 4
    assert any("num_players" in str(p) and repr(n) in p.message for p in tl.problems)
    plain = replay(validate_document(generate_game(5, deals=2)), source="n.egn")
    assert tl.to_json()["deals"] == plain.to_json()["deals"]


@pytest.mark.parametrize("n", [2, 3, 5, 6, 8, 10])
def test_other_supported_table_sizes_replay_without_crashing(n: int) -> None:
    doc = generate_game(5, deals=3)
    doc["metadata"]["ruleset"] = {"num_players": n}
    tl = replay(validate_document(doc), source="n.egn")
    assert tl.steps[0].num_players == n and len(tl.steps[0].hands) == n
    assert not any("num_players" in p.message for p in tl.problems)


def test_joker_up_card_ordered_leaves_trump_unknown_with_a_warning() -> None:
    tl = game(deal(0, "B", ["Order"], [["Ah", "Kh", "Qh", "Th"]], discard="9s"), joker=True)
    assert tl.deals[0].trump is None and tl.deals[0].maker == 1
    assert any("joker" in p.message and p.place.call == 0 for p in tl.problems)


def test_joker_up_card_dealer_may_name_trump_in_round_1() -> None:
    # the joker turned up: a suit letter in round 1 names trump; the dealer still takes the joker
    tl = game(deal(0, "B", ["Pass", "Pass", "Pass", "s"], [["Js", "Jc", "As", "B"]], discard="9d"), joker=True)
    d = tl.deals[0]
    assert d.trump == "s" and d.maker == 0
    assert d.tricks[0].winner == 0  # the joker (dealer, seat 0) beats the right bower
    assert tl.problems == ()
