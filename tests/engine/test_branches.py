"""Alternative lines (a deal's ``alternativeLines``) as branches: parent step, steps, problem places."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from tests.engine.test_rules import deal, game

HANDS = [["Ah", "Ks", "9c", "Tc", "Jc"], ["Kh", "As", "9d", "Td", "Jd"], ["Qh", "Qs", "9s", "Ts", "Js"], ["9h", "Th", "Qc", "Kc", "Ac"]]


def test_branch_problems_are_not_repeats_and_name_the_lines_own_positions() -> None:
    # dealer 3, seat 0 orders; trick 0: seat 2 reneges (holds Qh) on the main line
    tricks = [["Ah", "Kh", "9s", "9h"], ["Ks", "As", "Qs", "Qc"]]
    # branch after card 1 of trick 1 (b = 1 call + 4 + 1): seat 1 plays 9d holding spades
    alt = [{"branchIndex": 6, "phases": [{"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": [["9d", "Ts", "Kc"]]}]}]
    d = deal(3, "Th", ["Order"], tricks, hands=HANDS, discard="Th")
    d["alternativeLines"] = alt
    tl = game(d)
    texts = [str(p) for p in tl.problems]
    assert texts.count("case.egn: deal 0, phase 1 (TRICK_PLAY), trick 0, card 2: '9s': renege — seat 2 holds Hearts and must follow Hearts") == 1
    assert not any("alternative line 0" in t and "trick 0, card 2" in t and "'9s'" in t for t in texts)
    # the branch's own renege: alternativeLines[0].phases[0].tricks[0][0]
    assert "case.egn: deal 0, alternative line 0, phase 0 (TRICK_PLAY), trick 0, card 0: '9d': renege — seat 1 holds Spades and must follow Spades" in texts


def test_bidding_branch_problems_count_calls_from_the_deviation() -> None:
    # main: seat 0 passes, seat 1 orders; branch at call 1: seat 1 passes, seat 2 says 'n'
    # (not a round-1 call): a problem at the line's call 1 (the deal's call 2)
    d = deal(3, "Th", ["Pass", "Order"], [], discard="Th")
    d["alternativeLines"] = [{"branchIndex": 1, "phases": [{"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": ["Pass", "n"], "discard": "Th"}]}]
    tl = game(d)
    got = [str(p) for p in tl.problems if p.place.line == 0]
    assert got == ["case.egn: deal 0, alternative line 0, phase 0 (EUCHRE_BIDDING), call 1: 'n': round 1 only orders up the up-card's suit"]


def _combined_steps(doc: dict[str, Any], d: int, combined: dict[str, Any]) -> list[Any]:
    doc = json.loads(json.dumps(doc))
    doc["deals"][d] = combined
    doc["deals"] = doc["deals"][: d + 1]
    tl = load_game(json.dumps(doc), source="c.egn").timeline
    return [s for s in tl.steps if s.deal == d and s.kind is not StepKind.GAME_OVER]


@pytest.mark.parametrize("seed", range(6))
def test_branch_steps_equal_the_combined_line_replayed(seed: int) -> None:
    doc = generate_game(700 + seed, deals=2, ruleset={"defend_alone": True} if seed % 2 else {})
    target = doc["deals"][1]
    calls = target["phases"][0]["calls"]
    if len(target["phases"]) < 2:
        pytest.skip("thrown in")
    tricks = target["phases"][1]["tricks"]
    per = len(tricks[0])
    flat = [c for t in tricks for c in t]
    lines = []
    combos = []
    # (1) mid-trick: replay trick 2 from its second card with the rest reversed
    p = 2 * per + 1
    rest = tricks[2][1:][::-1]
    lines.append({"branchIndex": len(calls) + p, "phases": [{"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": [rest] + tricks[3:]}]})
    combos.append(tricks[:2] + [[tricks[2][0]] + rest] + tricks[3:])
    # (2) at a trick boundary
    lines.append({"branchIndex": len(calls) + 3 * per, "phases": [{"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": tricks[3:][::-1]}]})
    combos.append(tricks[:3] + tricks[3:][::-1])
    target["alternativeLines"] = lines
    tl = load_game(json.dumps(doc), source="g.egn").timeline
    branches = [b for b in tl.branches if b.deal == 1]
    assert len(branches) == 2
    for br, combo in zip(branches, combos):
        combined = dict(target, phases=[target["phases"][0], dict(target["phases"][1], tricks=combo)])
        combined.pop("alternativeLines")
        full = _combined_steps(doc, 1, combined)
        first = tl.deals[1].first_step
        k = br.parent_step - first  # the parent is the step before the deviating action
        assert tl.steps[br.parent_step].action == full[k].action
        want = [replace(s, step=br.parent_step + 1 + i, branch=f"1:{br.line}", problems=()) for i, s in enumerate(full[k + 1 :])]
        got = [replace(s, problems=()) for s in br.steps]
        assert got == want
        assert br.steps[0].action is not None and br.steps[0].action.index == br.branch_index - (len(calls) if br.steps[0].kind is StepKind.CARD else 0)
