"""The deal state machine (engine.deal) and the values it builds.

The replay builds states, tricks, actions and calls from complete field mappings instead
of their constructors (``engine.state.build``): these tests hold every such value equal to
the one the constructor makes from the same fields, and check the typed deal outcome the
game loop and the alternative lines read.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from engine.deal import DealContext, DealOutcome, replay_deal
from engine.generate import generate_game
from engine.model import Deal
from engine.replay import replay
from engine.rules import Table
from engine.ruleset import Ruleset
from engine.state import Action, Call, DealSummary, GameState, TrickState, evolve_state
from engine.validate import validate_document
from tests.engine.test_summary import _breaches


def _rebuilt(value: Any) -> Any:
    """The same value made by its class's constructor."""
    cls = type(value)
    return cls(**{f.name: getattr(value, f.name) for f in fields(cls) if f.init})


def _values(state: GameState) -> list[Any]:
    out: list[Any] = [state, *state.calls, *state.tricks]
    if state.trick is not None:
        out.append(state.trick)
    if state.action is not None:
        out.append(state.action)
    return out


@pytest.mark.parametrize("seed", [1, 7])
def test_built_values_equal_constructed_ones(seed: int) -> None:
    doc = _breaches(generate_game(seed, ruleset={"defend_alone": True}), seed)
    tl = replay(validate_document(doc, reference=False), source="b.egn")
    states = list(tl.steps) + [s for b in tl.branches for s in b.steps]
    kinds: set[type] = set()
    for value in [*tl.deals, *(v for state in states for v in _values(state))]:
        assert set(vars(value)) == {f.name for f in fields(type(value))}, type(value).__name__
        copy = _rebuilt(value)
        assert copy == value and hash(copy) == hash(value) and repr(copy) == repr(value)
        kinds.add(type(value))
    assert kinds == {DealSummary, GameState, Call, TrickState, Action}


def test_evolve_state_refuses_unknown_fields() -> None:
    state = replay(validate_document(generate_game(2, deals=1)), source="e.egn").steps[3]
    moved = evolve_state(state, step=99)
    assert moved.step == 99 and _rebuilt(moved) == moved and state.step == 3
    with pytest.raises(TypeError):
        evolve_state(state, stepp=1)


def test_one_deal_outcome_is_typed_and_consistent() -> None:
    doc = generate_game(11, deals=1)
    deal = Deal.model_validate(doc["deals"][0])
    ctx = DealContext(source="d.egn", rules=Ruleset(), table=Table(4), players=("a", "b", "c", "d"))
    out = replay_deal(ctx, deal, 0, score=(3, 4), tokens=(0, 0), first_step=10)
    assert isinstance(out, DealOutcome)
    assert out.step_count == len(out.states) and [s.step for s in out.states] == list(range(10, 10 + out.step_count))
    assert out.summary.first_step == 10 and out.summary.last_step == 10 + out.step_count - 1
    assert out.score == tuple(a + b for a, b in zip((3, 4), out.summary.points or ()))
    calls = len(deal.bidding.calls) if deal.bidding else 0
    cards = sum(len(t) for t in deal.play.tricks) if deal.play else 0
    assert len(out.action_steps) == calls + cards
    assert [out.states[i].kind.value for i in out.action_steps] == ["call"] * calls + ["card"] * cards
    quiet = replay_deal(ctx.fresh(), deal, 0, score=(3, 4), tokens=(0, 0), first_step=10, states=False)
    assert quiet.states == () and quiet.summary == out.summary and quiet.action_steps == out.action_steps


def test_problems_are_shown_on_the_step_where_they_are_found() -> None:
    doc = generate_game(4, deals=1)
    play = next(p for p in doc["deals"][0]["phases"] if p["type"] == "TRICK_PLAY")
    play["tricks"][1][2] = play["tricks"][0][0]  # a card played twice
    deal = Deal.model_validate(doc["deals"][0])
    ctx = DealContext(source="p.egn", rules=Ruleset(), table=Table(4), players=("a", "b", "c", "d"))
    out = replay_deal(ctx, deal, 0, score=(0, 0), tokens=(0, 0), first_step=0)
    assert out.problems and list(out.problems) == ctx.problems
    for problem, at in zip(out.problems, out.shown_at):
        assert problem in out.states[at].problems
    twice = next(p for p in out.problems if "already played" in p.message)
    assert (twice.place.trick, twice.place.card) == (1, 2)
