"""Trick play edge cases (unjudgeable tricks, short tricks, decks, the joker)."""

from __future__ import annotations

from engine.state import StepKind
from tests.engine.test_rules import deal, game


def test_a_trick_nobody_can_judge_is_led_on_by_its_assumed_winner() -> None:
    # dealer 0, hearts: seat 0 wins trick 0 with the Jh; trick 1 is all unknown cards, so its
    # leader (seat 0) is assumed to win it and must lead trick 2
    tricks = [["9s", "Ts", "Qs", "Jh"], ["Xx", "Xx", "Xx", "Xx"], ["Ac", "Kc", "Qc", "Tc"]]
    tl = game(deal(0, "9h", ["Order"], tricks, discard="9c"))
    t = tl.deals[0].tricks
    assert t[1].leader == 0 and t[1].winner == 0
    assert t[2].leader == t[1].winner and t[2].seats == (0, 1, 2, 3)
    assert any("assumed to win" in p.message for p in tl.problems)


def test_a_short_trick_followed_by_more_tricks_is_reported_and_kept() -> None:
    tl = game(deal(0, "9h", ["Order"], [["Ah", "Kh", "Qh"], ["As", "Ks", "Qs", "Ts"]], discard="9c"))
    short = [p for p in tl.problems if p.place.trick == 0]
    assert short and "3 cards" in short[0].message and str(short[0]).startswith("case.egn: deal 0, phase 1 (TRICK_PLAY), trick 0: ")
    # the short trick still shows in the summary, in file order, and no step claims it was taken
    assert [len(t.cards) for t in tl.deals[0].tricks] == [3, 4]
    assert [s.trick.number for s in tl.steps if s.kind is StepKind.TRICK_TAKEN and s.trick] == [1]


def test_an_empty_play_phase_after_a_throw_in_is_not_cards_played() -> None:
    thrown = deal(0, "9h", ["Pass"] * 8, [])
    thrown["phases"].append({"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": []})
    tl = game(thrown, std=False)
    assert tl.problems == ()
    thrown["phases"][1]["tricks"] = [["Ah"]]
    assert [str(p) for p in game(thrown, std=False).problems] == ["case.egn: deal 0, phase 1 (TRICK_PLAY): cards played after a throw-in"]


def test_a_deal_after_the_game_is_decided_names_deals_by_position() -> None:
    thrown = deal(0, "9h", ["Pass"] * 8, [])  # dealNumber 0 in every deal
    tl = game(thrown, thrown, thrown, std=False, num_deals=2)
    late = [str(p) for p in tl.problems if "after the game ended" in p.message]
    assert late == ["case.egn: deal 2: this deal is played after the game ended at deal 1"]
    assert tl.deals[2].points == (0, 0) and tl.winner is None  # a tie after two deals: no winner
