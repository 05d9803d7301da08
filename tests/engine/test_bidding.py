"""The GameState during and right after bidding (alone, sitting out, up-card, whose turn)."""

from __future__ import annotations

from typing import Any

from engine.state import StepKind, UpCardState
from tests.engine.test_rules import deal, game


def _calls(tl: Any) -> list[Any]:
    return [s for s in tl.steps if s.kind is StepKind.CALL]


def test_the_making_call_step_already_shows_the_loner_and_who_sits_out() -> None:
    # dealer 0; seat 1 orders alone: seat 3 sits out from the call on
    tl = game(deal(0, "9h", ["Order"], [["Ah"]], isAlone=True, discard="9s"))
    order = _calls(tl)[0]
    assert order.alone and order.sit_out == frozenset({3}) and order.maker == 1


def test_the_making_call_step_shows_the_lone_defender() -> None:
    tl = game(deal(0, "9h", ["Pass", "Pass", "Pass", "Pass", "s"], [], isAlone=True, aloneDefender=0), defend_alone=True)
    call = _calls(tl)[-1]
    assert call.alone and call.alone_defender == 0 and call.sit_out == frozenset({3, 2})


def test_whose_turn_after_the_last_call_and_after_the_discard() -> None:
    # round-1 order: the dealer (seat 0) discards next, then seat 1 leads
    tl = game(deal(0, "9h", ["Order"], [["Ah"]], discard="9s"))
    assert _calls(tl)[-1].to_act == 0
    discard = next(s for s in tl.steps if s.kind is StepKind.DISCARD)
    assert discard.to_act == 1
    # round-2 call by seat 2 (dealer 0): seat 1 leads
    tl = game(deal(0, "9h", ["Pass"] * 4 + ["Pass", "s"], [["As"]]))
    assert _calls(tl)[-1].to_act == 1
    # loner left of the dealer under LEFT_OF_LONER: the seat after the loner leads
    tl = game(deal(0, "9h", ["Pass", "Pass", "Pass", "Pass", "s"], [], isAlone=True), loner_lead="LEFT_OF_LONER")
    assert _calls(tl)[-1].to_act == 2


def test_nobody_is_to_act_after_a_throw_in() -> None:
    tl = game(deal(0, "9h", ["Pass"] * 8, []), std=False)
    assert _calls(tl)[-1].to_act is None
    assert tl.steps[-1].kind is StepKind.DEAL_SCORED and tl.steps[-1].to_act is None


def test_a_sitting_out_dealer_never_takes_the_up_card() -> None:
    # dealer 0 is the partner of the loner (seat 2): no discard recorded, the card stays down
    tl = game(deal(0, "9h", ["Pass", "Order"], [["Ah", "Kh", "Qh"]], isAlone=True))
    order = _calls(tl)[-1]
    assert order.sit_out == frozenset({0})
    assert order.up_card_state is UpCardState.TURNED_DOWN
    assert order.to_act == 1  # nobody discards: seat 1 leads


def test_a_call_after_the_bidding_ended_does_not_undo_the_pick_up() -> None:
    # the dealer orders (call 3); a stray Pass follows: still a round-1 order, the dealer picks up
    tl = game(deal(0, "9h", ["Pass", "Pass", "Pass", "Order", "Pass"], [["Ah"]], discard="9s"))
    assert any(s.kind is StepKind.DISCARD for s in tl.steps)
    assert not any("round-2 call" in p.message for p in tl.problems)
    assert any("bidding already ended" in p.message for p in tl.problems)


def test_canadian_is_judged_on_the_making_call_not_a_stray_call_after_it() -> None:
    tl = game(deal(0, "9s", ["Pass", "Order", "Pass", "Pass", "Pass"], [["Ad", "Kd", "Qd"]]), canadian=True)
    assert tl.deals[0].alone and tl.deals[0].sit_out == (0,)


def test_every_stray_call_names_the_call_that_ended_the_bidding() -> None:
    # call 1 ("Order") ends the bidding; calls 2 and 3 are stray: both name call 1, not the call before them
    tl = game(deal(0, "9s", ["Pass", "Order", "Pass", "h"], [["Ad", "Kd", "Qd"]]))
    stray = [p for p in tl.problems if "bidding already ended" in p.message]
    assert [p.place.call for p in stray] == [2, 3]
    assert all("with call 1 ('Order')" in p.message for p in stray), [p.message for p in stray]
