"""The summary-only replay gives exactly the full replay's deal summaries, problems and result.

``replay(..., summary_only=True)`` (what ``inspect``, statistics and imports use) runs the
same deal state machine without building states; these tests hold it to the full replay
over generated games under every ruleset option, over the same games with rule breaches
put in, and over every reference fixture game.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine.generate import generate_game
from engine.load import LoadedGame, LoadedMatch, load_any
from engine.replay import replay
from engine.state import Timeline
from engine.validate import validate_document
from tests.support import shared_files

RULESETS: list[dict[str, Any]] = [
    {},
    {"std": False},
    {"canadian": True, "loner_lead": "LEFT_OF_LONER"},
    {"defend_alone": True, "joker": True},
    {"allow_no_trump": True, "fast_break": True, "four_trick_tokens": True},
    {"min_rank": 7, "winning_score": 5},
    {"num_deals": 3},
    {"loner_march_score": 5, "loner_euchred_score": 3},
]
TABLES = [2, 3, 6, 12]  # other table sizes, written into a four-player game (12: replayed as 4, a warning)


def _breaches(doc: dict[str, Any], seed: int) -> dict[str, Any]:
    """The game with rule breaches put in: swapped cards, hands left out, odd calls, a short trick."""
    rng = random.Random(seed)
    doc = copy.deepcopy(doc)
    for deal in doc["deals"]:
        state = deal["initialState"]
        if rng.random() < 0.3:
            state.pop("playerCards", None)
        for phase in deal["phases"]:
            if phase["type"] == "TRICK_PLAY":
                cards = [(t, c) for t, trick in enumerate(phase["tricks"]) for c in range(len(trick))]
                if len(cards) > 1 and rng.random() < 0.5:
                    (a, b), (c, d) = rng.sample(cards, 2)
                    phase["tricks"][a][b], phase["tricks"][c][d] = phase["tricks"][c][d], phase["tricks"][a][b]
                if cards and rng.random() < 0.2:
                    t, c = rng.choice(cards)
                    phase["tricks"][t][c] = rng.choice(["Xx", "R", "L", "Kt", "9n", "B"])
                if phase["tricks"] and rng.random() < 0.15:
                    phase["tricks"][-1].pop()
            else:
                if phase["calls"] and rng.random() < 0.2:
                    phase["calls"][rng.randrange(len(phase["calls"]))] = rng.choice(["Pass", "Order", "s", "n", "x"])
                if rng.random() < 0.15:
                    phase.pop("discard", None)
                if rng.random() < 0.1:
                    phase["isAlone"], phase["aloneDefender"] = True, rng.randrange(4)
    return doc


def _same(full: Timeline, summary: Timeline, what: str) -> None:
    assert summary.steps == () and summary.branches == (), what
    assert summary.deals == full.deals, what
    assert summary.problems == full.problems, what
    assert (summary.final_score, summary.winner) == (full.final_score, full.winner), what


@pytest.mark.parametrize("rules", RULESETS + [{"num_players": n} for n in TABLES], ids=json.dumps)
def test_summary_pass_equals_the_full_replay_on_generated_games(rules: dict[str, Any]) -> None:
    breaches = 0
    for seed in range(12):
        if "num_players" in rules:
            doc = generate_game(seed)
            doc["metadata"].setdefault("ruleset", {}).update(rules)
        else:
            doc = generate_game(seed, ruleset=rules)
        for variant in (doc, _breaches(doc, seed)):
            document = validate_document(variant, reference=False)
            full = replay(document, source="gen.egn")
            _same(full, replay(document, source="gen.egn", summary_only=True), f"seed {seed}")
            breaches += len(full.problems)
    assert breaches > 0  # the breach variants did exercise the checks


def _games(path: Path, *, summary_only: bool) -> list[LoadedGame]:
    loaded = load_any(path.read_bytes(), source=path.name, summary_only=summary_only)
    return list(loaded.games) if isinstance(loaded, LoadedMatch) else [loaded]


@pytest.mark.parametrize("pattern", ["**/*.egn", "**/*.egnb", "**/*.emn"])
def test_summary_pass_equals_the_full_replay_on_every_fixture_game(pattern: str) -> None:
    paths = shared_files(pattern)
    if not paths:
        pytest.skip("reference fixtures not present")
    compared = 0
    for path in paths:
        try:
            full = _games(path, summary_only=False)
        except ValueError:
            with pytest.raises(ValueError):
                _games(path, summary_only=True)
            continue
        summary = _games(path, summary_only=True)
        assert len(summary) == len(full), path.name
        for a, b in zip(full, summary):
            _same(a.timeline, b.timeline, path.name)
            assert a.problems == b.problems, path.name
            compared += 1
    assert compared > 0


def test_summary_pass_reports_the_problems_of_alternative_lines() -> None:
    doc = generate_game(3)
    deal = doc["deals"][0]
    play = next(p for p in deal["phases"] if p["type"] == "TRICK_PLAY")
    first = play["tricks"][0][0]
    deal["alternativeLines"] = [{"branchIndex": 99, "phases": [{"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": [[first, first]]}]}]
    document = validate_document(doc, reference=False)
    full = replay(document, source="alt.egn")
    assert any(p.place.line == 0 for p in full.problems)
    _same(full, replay(document, source="alt.egn", summary_only=True), "alternative line")
