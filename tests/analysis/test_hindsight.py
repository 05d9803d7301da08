"""Analysis in hindsight (``engine.hindsight``): where a file lists neither the hands nor the
dealer's discard, a deal played out is analysed from the hands its play shows, marked
``"reconstructed"``; a deal not played out (a live one) gets nothing from hands until it is;
every step that asks for hands and gets none says why; the coverage script counts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.analysis import Analyst, StepAnalysis, deal_reports
from engine.bidtable import BiddingTable, CallValue, agreed_table
from engine.generate import generate_game
from engine.hindsight import RECONSTRUCTED, RECORDED, hands_for
from engine.load import LoadedGame, load_game
from engine.ruleset import Ruleset
from engine.state import StepKind
from overlay.cli import main
from tests.support import shared_egn

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "analysis_coverage"

#: (seed, ruleset, deals): games with order-ups, round-2 calls, loners and a lone defence
GAMES: list[tuple[int, dict[str, Any], int]] = [(1, {}, 6), (3, {"defend_alone": True}, 6), (8, {"allow_no_trump": True, "joker": True}, 4)]


def stripped(doc: dict[str, Any]) -> dict[str, Any]:
    """The game as most real files are: no ``playerCards``, no dealer's discard."""
    out: dict[str, Any] = json.loads(json.dumps(doc))
    for deal in out["deals"]:
        deal["initialState"].pop("playerCards", None)
        for phase in deal["phases"]:
            phase.pop("discard", None)
    return out


def _load(doc: dict[str, Any]) -> LoadedGame:
    return load_game(json.dumps(doc), source="g.egn")


def _analyse(game: LoadedGame) -> list[StepAnalysis]:
    analyst = Analyst(game.document.metadata.ruleset or Ruleset())
    return [analyst.analyse(s) for s in game.timeline.steps]


@pytest.fixture(scope="module", params=GAMES, ids=lambda g: f"seed{g[0]}")
def pair(request: pytest.FixtureRequest) -> tuple[LoadedGame, list[StepAnalysis], LoadedGame, list[StepAnalysis]]:
    """A generated game and the same game with its hands stripped, each analysed."""
    seed, rules, deals = request.param
    doc = generate_game(seed, ruleset=rules or None, deals=deals)
    full, bare = _load(doc), _load(stripped(doc))
    return full, _analyse(full), bare, _analyse(bare)


def test_every_deal_played_out_is_analysed_from_its_play(pair: Any) -> None:
    """Every played-out deal of the stripped game gets values from hands, marked
    reconstructed, and the play from the discard on has exactly the values the recorded
    hands give (the hands at the start of play are the cards played)."""
    full, recorded, bare, rebuilt = pair
    for summary in bare.timeline.deals:
        if summary.maker is None:
            continue
        mine = rebuilt[summary.first_step : summary.last_step + 1]
        assert any(a.hands == RECONSTRUCTED for a in mine), summary.deal
    compared = 0
    for state, a, b in zip(bare.timeline.steps, recorded, rebuilt):
        assert a.hands in (RECORDED, None) and b.hands in (RECONSTRUCTED, None)
        if state.kind in (StepKind.DISCARD, StepKind.CARD, StepKind.TRICK_TAKEN) and state.maker is not None:
            assert b.hands == RECONSTRUCTED and b.reason is None, (state.step, b.reason)
            assert (b.tricks, b.points, b.best, b.cards) == (a.tricks, a.points, a.best, a.cards), state.step
            assert b.win_probability == a.win_probability
            compared += 1
    assert compared > 50


def test_bidding_values_are_the_recorded_ones_where_given(pair: Any) -> None:
    """Where the dealer's discard is unknown the bidding is valued once per card it may be:
    a call keeps a value only where all agree, and that value is the true one; where the
    hands as dealt are all seen (no pick-up, or the up-card discarded), the whole table is
    the recorded table.  The deal start gets its table either way where one is given."""
    full, recorded, bare, rebuilt = pair
    whole = partial = starts = 0
    for state, a, b in zip(bare.timeline.steps, recorded, rebuilt):
        if a.calls is None:
            assert b.calls is None
            continue
        if b.calls is None:
            assert b.reason is not None and ("discard" in b.reason or "plays no card" in b.reason), b.reason
            continue
        assert b.hands == RECONSTRUCTED
        truth = {(c.call, c.alone): c for c in a.calls}
        for c in b.calls:
            if c.tricks is not None:
                t = truth[(c.call, c.alone)]
                assert (c.tricks, c.points) == (t.tricks, t.points)
        if all(c.tricks is not None for c in b.calls if c.call != "Pass"):
            # the best discard may be another of equal value (a rebuilt hand lists its cards in play order)
            assert [(c.label, c.tricks, c.points, c.alone_defender) for c in b.calls] == [(c.label, c.tricks, c.points, c.alone_defender) for c in a.calls]
            assert b.best == a.best and b.reason is None
            whole += 1
        else:
            assert b.reason is not None and "discard is not recorded" in b.reason
            assert set(b.best or ()) <= set(a.best or ())
            partial += 1
        starts += state.kind is StepKind.DEAL_START
    assert whole and starts


def test_a_deal_not_played_out_gets_nothing_from_hands_until_it_is() -> None:
    """A live deal, cut after every card in turn: no step of it reads a hand before the last
    card is in (its hands hold cards nobody has seen), each says why; the complete deal does."""
    doc = stripped(generate_game(1, deals=2))
    last = doc["deals"][-1]["phases"][-1]
    tricks = last["tricks"]
    cards = [(t, c) for t in range(len(tricks)) for c in range(len(tricks[t]))]
    for t, c in cards[:-1]:
        cut = json.loads(json.dumps(doc))
        cut["deals"][-1]["phases"][-1]["tricks"] = tricks[:t] + [tricks[t][: c + 1]]
        steps = _load(cut).timeline.steps
        deal = steps[-1].deal
        for state in steps:
            if state.deal != deal:
                continue
            h = hands_for(state)
            assert h.source is None, (t, c, state.step)
            if state.kind not in (StepKind.DEAL_SCORED, StepKind.GAME_OVER):
                assert h.reason, (t, c, state.step)
    steps = _load(doc).timeline.steps
    assert any(hands_for(s).source == RECONSTRUCTED for s in steps if s.deal == steps[-1].deal)


def test_an_incomplete_deal_reports_why() -> None:
    doc = stripped(generate_game(1, deals=2))
    doc["deals"][-1]["phases"][-1]["tricks"] = doc["deals"][-1]["phases"][-1]["tricks"][:3]
    game = _load(doc)
    analyses = _analyse(game)
    report = deal_reports(game.timeline, analyses)[-1]
    assert report.analysed == 0 and report.hands is None and not report.complete
    assert report.reason is not None and report.reason.startswith("the play is not complete (3 of 5 tricks recorded)")
    assert all(a.tricks is None and a.calls is None for a in analyses if a.deal == report.deal)


def test_public_analysis_never_reads_rebuilt_hands(pair: Any) -> None:
    """The clean output's analysis reads no hand, recorded or rebuilt, even once the deal is
    played out: no double-dummy field, no hands, no reason, the same as for the full file."""
    full, _, bare, _ = pair
    analyst = Analyst(bare.document.metadata.ruleset or Ruleset())
    for state, twin in zip(bare.timeline.steps, full.timeline.steps):
        a = analyst.analyse(state, public=True)
        assert a.estimate and a.hands is None and a.reason is None
        assert a.tricks is None and a.best is None and a.cards is None and a.calls is None
        assert a == analyst.analyse(twin, public=True)


def test_reasons_name_the_seat_that_sat_out_and_the_throw_in() -> None:
    """Deal reports of a stripped game: a loner's partner's hand is never seen (no bidding
    values), a thrown-in deal shows no hand at all."""
    found: set[str] = set()
    for seed in range(1, 12):
        game = _load(stripped(generate_game(seed, ruleset={"std": False}, deals=8)))
        steps = game.timeline.steps
        for report, summary in zip(deal_reports(game.timeline, _analyse_cheap(game)), game.timeline.deals):
            if summary.maker is None and summary.complete:
                assert report.reason == "thrown in: no card was played, so hands not recorded are never seen"
                assert report.analysed == 0
                found.add("throw-in")
            elif summary.sit_out and report.reason is not None and "sat out" in report.reason:
                (seat,) = summary.sit_out
                assert f"seat {seat} sat out a loner" in report.reason
                assert steps[summary.first_step].kind is StepKind.DEAL_START
                found.add("sat out")
        if found == {"throw-in", "sat out"}:
            return
    pytest.fail(f"only {found} found")


def _analyse_cheap(game: LoadedGame) -> list[StepAnalysis]:
    """The deal reports' inputs without solving: where hands may be read, and why not."""
    out = []
    for s in game.timeline.steps:
        h = hands_for(s)
        out.append(StepAnalysis(s.step, s.deal, s.kind.value, s.to_act, hands=None if h.unknown_discard else h.source, reason=h.reason))
    return out


def test_a_card_in_two_hands_is_named() -> None:
    doc = stripped(generate_game(1, deals=1))
    tricks = doc["deals"][0]["phases"][-1]["tricks"]
    tricks[4][1] = tricks[0][0]  # played twice
    game = _load(doc)
    reasons = {a.reason for a in _analyse(game) if a.reason}
    assert any(repr(tricks[0][0]) in r and "two places" in r for r in reasons), reasons


def test_a_table_of_three_says_so() -> None:
    game = _load(generate_game(1, deals=1))
    state = game.timeline.steps[0]
    from engine.state import evolve_state

    three = evolve_state(state, num_players=3)
    a = Analyst(Ruleset()).analyse(three)
    assert a.reason == "analysis needs a table of four (this one seats 3)" and a.hands is None


def test_agreed_table_keeps_what_every_table_says() -> None:
    def table(order: tuple[int, int], alone: tuple[int, int], best: str) -> BiddingTable:
        calls = (CallValue("Pass", False, None, None), CallValue("Order", False, (3, 2), order), CallValue("Order", True, (4, 1), alone))
        return BiddingTable(0, 1, calls, tuple(c for c in calls if c.label == best))

    same = agreed_table([table((1, 0), (1, 0), "Order"), table((1, 0), (2, 0), "Order alone")])
    assert same is not None
    assert [(c.label, c.points) for c in same.calls] == [("Pass", None), ("Order", (1, 0)), ("Order alone", None)]
    assert same.best == ()  # best in one table, not in the other
    both = agreed_table([table((1, 0), (0, 2), "Order"), table((1, 0), (0, 2), "Order")])
    assert both is not None and [c.label for c in both.best] == ["Order"]
    assert agreed_table([]) is None


def test_analyse_json_marks_hands_and_reports_deals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = stripped(generate_game(1, deals=3))
    path = tmp_path / "bare.egn"
    path.write_text(json.dumps(doc))
    assert main(["analyse", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"hands", "reason"} <= set(out["steps"][0])
    assert {s["hands"] for s in out["steps"]} <= {"reconstructed", None}
    assert any(s["hands"] == "reconstructed" and s["ddTricks"] is not None for s in out["steps"])
    deals = out["deals"]
    assert [d["deal"] for d in deals] == [0, 1, 2]
    assert set(deals[0]) == {"deal", "dealNumber", "complete", "steps", "analysed", "hands", "reason"}
    assert all(d["hands"] == "reconstructed" for d in deals if d["analysed"])
    assert main(["analyse", str(path)]) == 0
    text = capsys.readouterr().out
    assert "reconstructed" in text


# -- coverage ----------------------------------------------------------------------------------


def _coverage(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(SCRIPT), "--json", *args], capture_output=True, text=True, env=env, timeout=600, check=True)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_coverage_of_generated_games_with_hands_stripped(tmp_path: Path) -> None:
    """The coverage script on two generated games (hands and discards stripped) and one file:
    every played-out deal is analysed now, fewer were before."""
    path = tmp_path / "one.egn"
    path.write_text(json.dumps(stripped(generate_game(5, deals=4))))
    out = _coverage("--generated", "2", str(path))
    for group in ("examples", "generated, hands stripped"):
        t = out[group]
        assert t["after"] == t["deals"] > t["before"], (group, t)
        assert t["deal start table after"] >= t["deal start table before"]


@pytest.mark.slow
def test_coverage_of_a_real_game() -> None:
    """The issue's real game: 9 of its 12 deals had no analysis; now every one has."""
    game = shared_egn() / "examples" / "Me_and_Bears.egn"
    t = _coverage("--generated", "0", str(game))["examples"]
    assert (t["deals"], t["before"], t["after"]) == (12, 3, 12)
    assert t["deal start table after"] > t["deal start table before"] == 3


# -- on air ------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_win_bar_says_hindsight_over_rebuilt_hands(size: tuple[int, int]) -> None:
    """The win bar's heading says HINDSIGHT (whole, not cut) where the reading comes from
    hands rebuilt from the play, nothing where the file recorded them, EST. on the clean
    output."""
    from renderer.analysis import GameAnalysis, build_analysis_layer
    from renderer.view import default_view

    doc = generate_game(1, deals=1)

    def heads(d: dict[str, Any], *, public: bool = False) -> list[str]:
        steps = _load(d).timeline.steps
        step = next(i for i, s in enumerate(steps) if s.kind is StepKind.CARD)
        layer = build_analysis_layer(steps[step], default_view(), GameAnalysis(steps, Ruleset(), public=public)(step), size=size, public=public)
        return [op[5] for op in layer.ops if op[0] == "t" and str(op[5]).startswith("WIN PROBABILITY") and "MATCH" not in str(op[5])]

    assert heads(stripped(doc)) == ["WIN PROBABILITY \u00b7 HINDSIGHT"]
    assert heads(doc) == ["WIN PROBABILITY"]
    assert heads(stripped(doc), public=True) == ["WIN PROBABILITY \u00b7 EST."]


def test_played_out_from_the_last_card_on() -> None:
    from engine.hindsight import played_out

    steps = _load(generate_game(3, ruleset={"defend_alone": True}, deals=6)).timeline.steps
    for deal in {s.deal for s in steps}:
        mine = [s for s in steps if s.deal == deal]
        cards = [i for i, s in enumerate(mine) if s.kind is StepKind.CARD]
        if not cards:
            assert [played_out(s) for s in mine] == [s.kind in (StepKind.DEAL_SCORED, StepKind.GAME_OVER) for s in mine]
            continue
        assert [played_out(s) for s in mine] == [i >= cards[-1] for i in range(len(mine))], deal


def test_a_discard_the_dealer_never_held_is_named() -> None:
    doc = generate_game(35, deals=1)
    deal = doc["deals"][0]
    foreign = deal["initialState"]["playerCards"][(deal["initialState"]["dealer"] + 1) % 4][0]
    deal["phases"][0]["discard"] = foreign
    reasons = {a.reason for a in _analyse(_load(doc)) if a.reason}
    assert any(f"discard {foreign!r} is not in its hand" in r for r in reasons), reasons
