"""``euchre-overlay analyse`` and the per-step analysis behind it (``engine.analysis``),
the bidding table (``engine.bidtable``) and the public (clean output) mode."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from engine.analysis import Analyst
from engine.bidtable import bidding_table, discard_table
from engine.generate import generate_game
from engine.load import LoadedGame, load_game
from engine.ruleset import Ruleset
from engine.solve import Solver, position_of
from engine.state import StepKind
from overlay.cli import main

KEYS = {"step", "deal", "kind", "ddTricks", "best", "calls", "winProbability"}


def _game(seed: int, rules: dict[str, Any] | None = None, deals: int = 3) -> dict[str, Any]:
    return generate_game(seed, ruleset=rules, deals=deals)


def _analyse_json(tmp_path: Path, doc: dict[str, Any], capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    path = tmp_path / "g.egn"
    path.write_text(json.dumps(doc))
    assert main(["analyse", str(path), "--json", *extra]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_json_contract_one_object_per_step_in_timeline_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _game(35)
    out = _analyse_json(tmp_path, doc, capsys)
    game = load_game(json.dumps(doc), source="g.egn")
    steps = out["steps"]
    assert [s["step"] for s in steps] == list(range(len(game.timeline.steps)))
    for s, state in zip(steps, game.timeline.steps):
        assert KEYS <= set(s)
        assert (s["deal"], s["kind"]) == (state.deal, state.kind.value)
        if s["ddTricks"] is not None:
            assert sum(s["ddTricks"]) == 5
            # tricks already taken are counted
            assert all(dd >= taken for dd, taken in zip(s["ddTricks"], state.tricks_per_team))
        p = s["winProbability"]
        assert p is not None and abs(p[0] + p[1] - 1) < 1e-3 and 0 <= p[0] <= 1
        if state.kind is StepKind.CALL and state.maker is None:
            assert s["calls"] and s["ddTricks"] is None
    kinds = {s["kind"] for s in steps if s["ddTricks"] is not None}
    assert {"card", "trick_taken", "discard"} <= kinds


def test_values_follow_the_play(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After a card, the deal is worth what the analysis said that card was worth."""
    doc = _game(8, {"joker": True})
    steps = _analyse_json(tmp_path, doc, capsys)["steps"]
    game = load_game(json.dumps(doc), source="g.egn")
    checked = 0
    for before, after, state in zip(steps, steps[1:], game.timeline.steps[1:]):
        if state.kind is not StepKind.CARD or not before["cards"] or after["ddTricks"] is None:
            continue
        assert state.action is not None and state.action.card is not None
        played = str(state.action.card)
        value = next(c for c in before["cards"] if c["card"] == played)
        assert value["ddTricks"] == after["ddTricks"] and value["points"] == after["ddPoints"]
        assert (value["trickLoss"] == 0 and value["pointLoss"] == 0) == (played in before["best"])
        checked += 1
    assert checked > 20


def test_final_trick_shows_the_real_result() -> None:
    game = load_game(json.dumps(_game(35)), source="g.egn")
    rules = game.document.metadata.ruleset or Ruleset()
    analyst = Analyst(rules)
    for state in game.timeline.steps:
        if state.kind is StepKind.TRICK_TAKEN and len(state.tricks) == 5:
            a = analyst.analyse(state)
            assert a.tricks == state.tricks_per_team


def test_game_over_probability_is_certain() -> None:
    game = load_game(json.dumps(generate_game(35)), source="g.egn")
    last = game.timeline.steps[-1]
    assert last.game_over and last.winner is not None
    p = Analyst(game.document.metadata.ruleset or Ruleset()).analyse(last).win_probability
    assert p == ((1.0, 0.0) if last.winner == 0 else (0.0, 1.0))


def test_text_output_and_match_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "g.egn"
    path.write_text(json.dumps(_game(35, deals=1)))
    assert main(["analyse", str(path)]) == 0
    text = capsys.readouterr().out
    assert "deal_start" in text and "best" in text


# -- the bidding table ----------------------------------------------------------------------


def _made_calls(game: LoadedGame) -> list[tuple[Any, Any]]:
    """(state before the making call, the making call's state) for each deal with trump."""
    steps = game.timeline.steps
    return [(steps[i - 1], s) for i, s in enumerate(steps) if s.kind is StepKind.CALL and s.maker is not None and steps[i - 1].maker is None]


@pytest.mark.parametrize("seed, rules", [(35, {}), (8, {"allow_no_trump": True, "joker": True}), (21, {"canadian": True, "std": True})])
def test_the_call_made_is_worth_what_the_table_said(seed: int, rules: dict[str, Any]) -> None:
    """The table's value of the call actually made equals the solve once it is made (the
    dealer's best discard after an order-up, else the first lead)."""
    game = load_game(json.dumps(_game(seed, rules or None, deals=6)), source="g.egn")
    ruleset = game.document.metadata.ruleset or Ruleset()
    solver = Solver()
    checked = 0
    for before, made in _made_calls(game):
        if made.alone_defender >= 0:
            continue
        table = bidding_table(before, ruleset, solver)
        assert table is not None and table.seat == made.maker
        call = made.calls[-1].call
        entry = next(c for c in table.calls if c.call == call and c.alone == made.alone)
        after = discard_table(made, ruleset, solver)
        if after is None:
            pos = position_of(made, ruleset)
            assert pos is not None
            after = solver.analyse(pos)
        assert (entry.tricks, entry.points) == (after.tricks, after.points)
        if entry.discard is not None:
            assert entry.discard in after.best
        checked += 1
    assert checked >= 3


def test_calls_open_to_the_player() -> None:
    """Round 1 orders the up-card's suit; round 2 names the other suits (and no-trump when
    allowed); a stuck dealer cannot pass; the Canadian dealer's partner orders up alone."""
    rules = Ruleset(allow_no_trump=True, canadian=True, std=True)
    game = load_game(json.dumps(_game(3, rules.model_dump(mode="json", exclude_defaults=True), deals=8)), source="g.egn")
    solver = Solver()
    seen_round2 = seen_partner = False
    for state in game.timeline.steps:
        table = bidding_table(state, rules, solver)
        if table is None:
            continue
        labels = {c.label for c in table.calls}
        assert state.up_card is not None and state.up_card.suit is not None
        up = state.up_card.suit.value
        if table.round == 1:
            partner = table.seat == (state.dealer + 2) % 4
            assert labels == ({"Pass", "Order alone"} if partner else {"Pass", "Order", "Order alone"})
            seen_partner |= partner
        else:
            others = {s for s in "shcd" if s != up} | {"n"}
            expected = others | {s + " alone" for s in others}
            if table.seat != state.dealer:
                expected |= {"Pass"}
            assert labels == expected
            seen_round2 = True
    assert seen_partner and seen_round2


# -- the clean output never learns a hidden card ---------------------------------------------


def test_public_analysis_reads_no_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Swapping unplayed cards between hands changes nothing in the public analysis, and it
    carries no double-dummy field."""
    game = load_game(json.dumps(_game(35)), source="g.egn")
    analyst = Analyst(game.document.metadata.ruleset or Ruleset())
    changed = 0
    for state in game.timeline.steps:
        hands = [list(h) for h in state.hands]
        if len(hands) != 4 or not hands[0] or not hands[1]:
            continue
        hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
        other = dataclasses.replace(state, hands=tuple(tuple(h) for h in hands))
        a, b = analyst.analyse(state, public=True), analyst.analyse(other, public=True)
        assert a == b
        assert a.estimate and a.tricks is None and a.best is None and a.cards is None and a.calls is None
        changed += 1
    assert changed > 50
    out = _analyse_json(tmp_path, _game(35, deals=1), capsys, "--public")
    assert all(s["ddTricks"] is None and s["best"] is None and s["calls"] is None and s["estimate"] for s in out["steps"])


# -- match statistics and the deal history ----------------------------------------------------


@pytest.mark.parametrize("seed, rules", [(35, {}), (8, {"defend_alone": True, "joker": True}), (12, {"allow_no_trump": True})])
def test_match_statistics_add_up(seed: int, rules: dict[str, Any]) -> None:
    from engine.stats import match_stats

    game = load_game(json.dumps(generate_game(seed, ruleset=rules or None)), source="g.egn")
    tl = game.timeline
    stats = match_stats(tl)
    assert [c.deal for c in stats.history] == [d.deal for d in tl.deals]
    assert [t.points for t in stats.teams] == list(tl.final_score)
    assert sum(t.tricks for t in stats.teams) == sum(sum(d.tricks_per_team) for d in tl.deals if d.points is not None)
    assert [sum(p.tricks for s, p in enumerate(stats.players) if s % 2 == t) for t in range(2)] == [t.tricks for t in stats.teams]
    assert stats.teams[0].euchres_made == stats.teams[1].euchres_suffered
    assert stats.teams[1].euchres_made == stats.teams[0].euchres_suffered
    made = [d for d in tl.deals if d.maker is not None and d.points is not None]
    assert sum(t.calls_round1 + t.calls_round2 for t in stats.teams) == len(made)
    assert sum(t.loners_tried for t in stats.teams) == sum(1 for d in made if d.alone)
    assert all(t.loners_made <= t.loners_tried for t in stats.teams)
    assert sum(t.marches for t in stats.teams) == sum(1 for d in made if d.maker is not None and d.tricks_per_team[d.maker % 2] == 5)
    # the streak: the team that scored the last scoring deal, and how many in a row
    scorers = [next(t for t in range(2) if d.points[t] > 0) for d in tl.deals if d.points is not None and any(d.points)]
    run = 1
    while run < len(scorers) and scorers[-1 - run] == scorers[-1]:
        run += 1
    assert stats.streak == (scorers[-1], run)
    # up to a step, only what has happened
    mid = tl.deals[2].first_step + 3
    early = match_stats(tl, step=mid)
    assert len(early.history) == 3 and early.history[-1].points is None
    assert [t.points for t in early.teams] == list(tl.steps[mid].score)


# -- files that do not add up ----------------------------------------------------------------


def test_a_broken_file_is_analysed_where_it_can_be() -> None:
    """A discard the dealer never held leaves six cards in its hand: those steps get no
    double-dummy value, the others do, and nothing raises."""
    doc = _game(35, deals=1)
    deal = doc["deals"][0]
    dealer = deal["initialState"]["dealer"]
    foreign = deal["initialState"]["playerCards"][(dealer + 1) % 4][0]
    assert "discard" in deal["phases"][0]
    deal["phases"][0]["discard"] = foreign
    game = load_game(json.dumps(doc), source="broken.egn")
    assert any("discard" in str(p) for p in game.all_problems)
    analyst = Analyst(game.document.metadata.ruleset or Ruleset())
    results = [analyst.analyse(s) for s in game.timeline.steps]
    assert all(r.win_probability is not None for r in results)
    assert any(r.tricks is None and r.kind == "card" for r in results)


def test_prior_of_a_deck_egn_cannot_write() -> None:
    """``min_rank`` 6 (36 cards; EGN has no 6) still gets a prior, counted on 24-card games."""
    from engine.winprob import fit_prior

    prior = fit_prior(Ruleset(min_rank=6), games=5)
    assert prior.deals > 0 and abs(sum(p for _, p in prior.dealer) - 1) < 1e-9
