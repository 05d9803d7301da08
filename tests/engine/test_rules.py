"""The subtle cases of the rules, one test each, on small hand-written deals."""

from __future__ import annotations

from typing import Any

import pytest

from engine.cards import Suit, parse_card
from engine.validate import validate_document
from engine.replay import replay
from engine.rules import Table, score_deal
from engine.ruleset import Ruleset, preset
from engine.state import StepKind, Timeline


def game(*deals: dict[str, Any], **ruleset: Any) -> Timeline:
    doc = {
        "fileType": "Euchre Game Notation",
        "version": "1.4",
        "metadata": {"players": ["Ann", "Ben", "Cat", "Dan"], "initialScore": [0, 0], "ruleset": ruleset},
        "deals": list(deals),
    }
    return replay(validate_document(doc), source="case.egn")


def deal(dealer: int, up: str, calls: list[str], tricks: list[list[str]], *, hands: list[list[str]] | None = None, **bid: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"dealer": dealer, "upCard": up}
    if hands:
        state["playerCards"] = hands
    phases: list[dict[str, Any]] = [{"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": calls, **bid}]
    if tricks:
        phases.append({"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": tricks})
    return {"dealNumber": 0, "initialState": state, "phases": phases}


def test_left_bower_led_leads_trump() -> None:
    tl = game(deal(3, "9h", ["Order"], [["Jd", "Ah", "Kd", "9h"]]))
    trick = tl.deals[0].tricks[0]
    assert tl.deals[0].trump == "h"
    assert trick.led is Suit.HEARTS  # the jack of diamonds leads hearts
    assert trick.winner == 0  # left bower beats the ace of trump
    # Kd is not a heart: seat 2 may play it only if it held no heart (unknown here: no breach)
    assert not [p for p in tl.problems if "renege" in p.message]


def test_left_bower_cannot_follow_its_printed_suit_and_must_follow_trump() -> None:
    hands = [
        ["Ad", "Ah", "Kh", "Qs", "Ts"],
        ["Jd", "9c", "Tc", "Qc", "Kc"],
        ["9d", "Td", "Js", "Ks", "As"],
        ["Jh", "Qh", "Th", "9s", "Qd"],
    ]
    tl = game(deal(3, "9h", ["Order"], [["Ad", "9c", "9d", "9s"], ["Ah", "Tc", "Td", "Jh"]], hands=hands, discard="Qd"))
    reneges = [p for p in tl.problems if "renege" in p.message]
    # trick 0: diamonds led; the Jd is a heart now, so 9c is legal
    # trick 1: trump led; seat 1's only trump is the Jd, so Tc is a renege
    assert [(p.place.trick, p.place.card) for p in reneges] == [(1, 1)]
    assert str(reneges[0]).startswith("case.egn: deal 0, phase 1 (TRICK_PLAY), trick 1, card 1: 'Tc'")
    assert tl.deals[0].tricks[1].winner == 3  # right bower


@pytest.mark.parametrize("loner_lead, leader", [("LEFT_OF_DEALER", 2), ("LEFT_OF_LONER", 0)])
def test_loner_whose_partner_sits_left_of_the_dealer(loner_lead: str, leader: int) -> None:
    # dealer 0; seat 3 orders alone, so seat 1 (left of the dealer) sits out
    tl = game(deal(0, "9s", ["Pass", "Pass", "Order"], [["Ad", "Kd", "Qd"]], isAlone=True), loner_lead=loner_lead)
    d = tl.deals[0]
    assert d.sit_out == (1,)
    assert d.tricks[0].leader == leader
    assert 1 not in d.tricks[0].seats and len(d.tricks[0].seats) == 3


def test_stick_the_dealer_must_name() -> None:
    tl = game(deal(0, "9s", ["Pass"] * 7 + ["c"], [["Ac", "Kc", "Qc", "Tc"]]), std=True)
    assert tl.deals[0].trump == "c" and tl.deals[0].maker == 0
    assert tl.problems == ()
    all_pass = game(deal(0, "9s", ["Pass"] * 8, []), std=True)
    assert any("stick the dealer" in p.message for p in all_pass.problems)


def test_throw_in_scores_nothing_and_the_deal_passes_on() -> None:
    first = deal(0, "9s", ["Pass"] * 8, [])
    second = deal(1, "Ah", ["Order"], [])
    tl = game(first, second, std=False)
    d0 = tl.deals[0]
    assert (d0.trump, d0.maker, d0.points) == (None, None, (0, 0))
    assert tl.problems == ()
    assert tl.steps[tl.deals[0].last_step].thrown_in
    assert tl.deals[1].dealer == 1


def test_defend_alone_seating_and_scoring() -> None:
    # dealer 0, seat 1 orders alone (partner 3 out); seat 2 defends alone (partner 0 out)
    tricks = [["As", "Js"], ["Ah", "Kh"], ["Ks", "Qs"], ["Ad", "Kd"], ["Ac", "Kc"]]
    tl = game(deal(0, "9s", ["Order"], tricks, isAlone=True, aloneDefender=2), defend_alone=True)
    d = tl.deals[0]
    assert d.sit_out == (0, 3)
    assert [t.seats for t in d.tricks][0] == (1, 2)
    # seat 2's Js is the right bower (trump spades): defender wins trick 0, and leads on
    assert d.tricks[0].winner == 2 and d.tricks[1].leader == 2
    assert d.tricks_per_team == (5, 0)
    assert d.points == (4, 0)  # a successful lone defence scores 4


def test_joker_led_makes_the_led_suit_trump() -> None:
    tl = game(deal(3, "9s", ["Order"], [["B", "Js", "Ah", "Ks"]]), joker=True)
    trick = tl.deals[0].tricks[0]
    assert trick.led is Suit.SPADES
    assert trick.winner == 0  # above the right bower
    assert not [p for p in tl.problems if p.severity == "error"]


def test_32_card_deck_low_ranks() -> None:
    tl = game(deal(3, "7s", ["Order"], [["7h", "8h", "9h", "Ah"], ["8d", "7s", "Ad", "Kd"]]), min_rank=7)
    t0, t1 = tl.deals[0].tricks
    assert t0.winner == 3  # Ah
    assert t1.leader == 3 and t1.winner == 0  # seat 0's 7 of trump beats the ace of diamonds


def test_no_trump_has_no_bowers() -> None:
    tl = game(deal(3, "9s", ["Pass"] * 4 + ["n"], [["Qd", "Jd", "Jh", "Ad"], ["Jc", "Js", "Ac", "9c"]]), allow_no_trump=True)
    d = tl.deals[0]
    assert d.trump == "n"
    assert d.tricks[0].winner == 3  # Ad: jacks rank as jacks
    assert d.tricks[1].leader == 3 and d.tricks[1].winner == 1  # Jc led, Ac (seat 1) wins
    assert tl.problems == ()


def test_no_trump_refused_when_not_allowed() -> None:
    tl = game(deal(3, "9s", ["Pass"] * 4 + ["n"], []))
    assert any("no-trump is not allowed" in p.message for p in tl.problems)


@pytest.mark.parametrize(
    "won, alone, defender, rules, points",
    [
        ([1, 1, 1, 0, 0], False, -1, {}, (1, 0)),
        ([1, 1, 1, 1, 1], False, -1, {}, (2, 0)),
        ([1, 1, 1, 1, 1], True, -1, {}, (4, 0)),
        ([1, 1, 1, 1, 1], True, -1, {"loner_march_score": 5}, (5, 0)),
        ([1, 1, 1, 1, 0], True, -1, {"loner_march_score": 5}, (1, 0)),
        ([1, 1, 0, 0, 0], False, -1, {}, (0, 2)),
        ([1, 1, 0, 0, 0], True, -1, {}, (0, 2)),
        ([1, 1, 0, 0, 0], True, -1, {"loner_euchred_score": 3}, (0, 3)),
        ([1, 1, 0, 0, 0], True, 1, {"loner_euchred_score": 3, "defend_alone": True}, (0, 4)),
        ([0, 0, 1, 1, 1], False, -1, {"fast_break": True}, (0, 0)),
        ([0, 0, 1, 1, 1], False, -1, {}, (1, 0)),
        ([1, 0, 1, 0, 1], False, -1, {"fast_break": True}, (1, 0)),
    ],
)
def test_scoring(won: list[int], alone: bool, defender: int, rules: dict[str, Any], points: tuple[int, int]) -> None:
    winners = [0 if w else 1 for w in won]  # maker is seat 0 (team 0)
    result = score_deal(Ruleset.model_validate(rules), Table(4), maker=0, alone=alone, alone_defender=defender, winners=winners, tokens=(0, 0))
    assert result.points == points


def test_four_trick_tokens_make_a_point() -> None:
    rules = Ruleset(four_trick_tokens=True)
    tokens: tuple[int, ...] = (0, 0)
    got = []
    for _ in range(4):
        r = score_deal(rules, Table(4), maker=0, alone=False, alone_defender=-1, winners=[0, 0, 0, 0, 1], tokens=tokens)
        tokens = r.tokens
        got.append(r.points[0])
    assert got == [1, 1, 1, 2] and tokens == (0, 0)


def test_canadian_loner() -> None:
    # dealer 0; seat 2 (dealer's partner) orders up: must go alone
    forced = game(deal(0, "9s", ["Pass", "Order"], [["Ad", "Kd", "Qd"]]), canadian=True)
    d = forced.deals[0]
    assert d.alone and d.sit_out == (0,)
    assert any("canadian" in p.message for p in forced.problems)
    declared = game(deal(0, "9s", ["Pass", "Order"], [["Ad", "Kd", "Qd"]], isAlone=True), canadian=True)
    assert declared.deals[0].alone and declared.problems == ()
    plain = game(deal(0, "9s", ["Pass", "Order"], [["Ad", "Kd", "Qd", "Ac"]]))
    assert not plain.deals[0].alone


def test_card_played_twice_names_the_place() -> None:
    tl = game(deal(3, "9h", ["Order"], [["Jd", "Ah", "Kd", "9h"], ["Jd", "As", "Ks", "Qs"]]))
    dup = [str(p) for p in tl.problems if "already played" in p.message]
    assert dup == ["case.egn: deal 0, phase 1 (TRICK_PLAY), trick 1, card 0: 'Jd' was already played in trick 0"]


def test_live_deal_stops_mid_trick() -> None:
    tl = game(deal(3, "9h", ["Pass", "Order"], [["Jd", "Ah", "Kd", "9h"], ["As", "Ks"]]))
    last = tl.steps[-1]
    assert last.kind is StepKind.CARD
    assert last.trick is not None and len(last.trick.cards) == 2 and not last.trick.complete
    assert last.to_act == 2  # seat 0 took trick 0 with the left bower, led again; seat 1 played; seat 2 is next
    assert tl.deals[0].points is None and tl.winner is None


def test_regional_presets() -> None:
    assert preset("us-canada").winning_score == 10 and not preset("us-canada").joker
    assert preset("british").winning_score == 11 and preset("british").joker
    assert preset("australia").joker and preset("australia").deck_size == 25
    assert preset("new-zealand").deck_size == 32
    assert preset("us-canada", target=5, stick_the_dealer=False).winning_score == 5
    assert not preset("us-canada", stick_the_dealer=False).std
    with pytest.raises(KeyError):
        preset("mars")


def test_hands_back_calculated_for_a_finished_deal() -> None:
    tricks = [["Ad", "9c", "9d", "9s"], ["Ah", "Kc", "Td", "Jh"], ["Qh", "Kh", "Ts", "Js"], ["Th", "Qs", "Ks", "9h"], ["Tc", "Qc", "As", "Ac"]]
    tl = game(deal(3, "9h", ["Order"], tricks, discard="Qd"))
    start = tl.steps[0]
    assert all(start.hands_known)
    # dealer 3: played Jh? no: trick 1 seat 3 is Jh; its dealt hand lacks the 9h it picked up and has the Qd it threw away
    dealer_hand = {c.text for c in start.hands[3]}
    assert "9h" not in dealer_hand and "Qd" in dealer_hand and len(dealer_hand) == 5
    assert all(len(h) == 0 for h in tl.steps[-1].hands)


def test_unknown_cards_stay_unknown() -> None:
    tl = game(deal(3, "9h", ["Order"], [["Xx", "Ah", "Kd", "9h"]]))
    assert not tl.steps[0].hands_known[0]
    assert parse_card("Xx").known is False


@pytest.mark.parametrize("text", ["9s", "Jd", "Ah", "7c", "Xx", "R", "L", "B", "Tt", "Qn", "Kg"])
def test_a_card_pickles_and_copies_as_itself(text: str) -> None:
    """In either mode (compiled, its class has no instance dictionary): what a process pool
    and Ray send, and a deep copy, is the same card, spelling and identity included."""
    import copy
    import pickle

    card = parse_card(text)
    for back in (pickle.loads(pickle.dumps(card)), copy.deepcopy(card)):
        assert back == card and back.text == card.text and back.identity == card.identity and back.known == card.known
