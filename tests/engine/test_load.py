"""Loading: strict and lenient modes, upgrade of old files, typed errors that name the place, the CLI."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.errors import CodecError, SchemaError, SizeLimitError
from engine.generate import generate_game
from engine.load import MAX_INPUT, load_game
from engine.validate import validate_document
from overlay.cli import main
from tests.support import shared_egn

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def doc() -> dict[str, Any]:
    return generate_game(7, deals=3, players=["Ann", "Ben", "Cat", "Dan"])


def test_strict_names_file_deal_phase_and_index(doc: dict[str, Any]) -> None:
    bad = copy.deepcopy(doc)
    bad["deals"][2]["phases"][1]["tricks"][1][2] = "Zz"
    with pytest.raises(SchemaError) as exc:
        load_game(json.dumps(bad), source="finals.egn", strict=True)
    assert str(exc.value).startswith("finals.egn: deal 2, phase 1 (TRICK_PLAY), trick 1, card 2: 'Zz'")
    assert exc.value.place.deal == 2 and exc.value.place.trick == 1


def test_lenient_keeps_everything_before_the_bad_card(doc: dict[str, Any]) -> None:
    bad = copy.deepcopy(doc)
    bad["deals"][2]["phases"][1]["tricks"][1][2] = "Zz"
    game = load_game(json.dumps(bad), source="live.egn")
    assert [str(p) for p in game.problems][0].startswith("live.egn: deal 2, phase 1 (TRICK_PLAY), trick 1, card 2: 'Zz'")
    tricks = game.timeline.deals[2].tricks
    assert len(tricks) == 2 and len(tricks[1].cards) == 2  # cut at the bad card, nothing before it lost
    assert len(game.timeline.deals) == 3


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda d: d["deals"][1]["phases"][0]["calls"].append("Maybe"), "deal 1, phase 0 (EUCHRE_BIDDING), call"),
        (lambda d: d["deals"][0].update(extra=1), "deal 0"),
        (lambda d: d["metadata"].update(players=["x" * 65]), "/metadata/players/0"),
        (lambda d: d["deals"][0]["initialState"].update(dealer=12), "deal 0"),
        (lambda d: d.update(version="2.0"), "/version"),
    ],
)
def test_lenient_repairs_and_reports(doc: dict[str, Any], edit: Any, where: str) -> None:
    bad = copy.deepcopy(doc)
    edit(bad)
    game = load_game(json.dumps(bad), source="half.egn")
    assert game.problems and where in str(game.problems[0])
    with pytest.raises(SchemaError):
        load_game(json.dumps(bad), source="half.egn", strict=True)


def test_version_1_5_is_the_same_family(doc: dict[str, Any]) -> None:
    doc["version"] = "1.5"
    assert load_game(json.dumps(doc), source="seed.egn", strict=True).timeline.deals
    with pytest.raises(SchemaError):
        validate_document(doc, reference=True)


def test_old_file_is_upgraded_and_keeps_production_data() -> None:
    path = shared_egn() / "examples" / "conversion_examples" / "test_timingsLayouts.egn"
    game = load_game(path.read_bytes(), source=path.name, strict=True)
    assert game.upgraded_from is not None and game.upgraded_from.startswith("1.0")
    assert set(game.production) >= {"timings", "views"}
    assert game.production["views"][0]["layout"]["width"] == 1920


@pytest.mark.parametrize(
    "data, error",
    [
        (b"", CodecError),
        (b"{not json", CodecError),
        (b'{"fileType": "Euchre Game Notation"}', SchemaError),
        (b"[1, 2]", SchemaError),
        (b"{" + b" " * MAX_INPUT + b"}", SizeLimitError),
    ],
)
def test_unreadable_input_is_one_typed_error(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error) as exc:
        load_game(data, source="bad.egn", strict=True)
    assert str(exc.value).startswith("bad.egn")


def test_rule_breaches_never_stop_a_replay(doc: dict[str, Any]) -> None:
    bad = copy.deepcopy(doc)
    t = bad["deals"][0]["phases"][1]["tricks"]
    t[1][0] = t[0][0]  # the same card twice
    game = load_game(json.dumps(bad), source="x.egn", strict=True)
    assert any("already played" in str(p) for p in game.timeline.problems)
    assert len(game.timeline.deals) == 3


def test_alternative_lines_are_branches() -> None:
    doc = generate_game(3, deals=1)
    deal = doc["deals"][0]
    calls = deal["phases"][0]["calls"]
    tricks = deal["phases"][1]["tricks"]
    # replay the last trick differently: the same cards in another order is still a line
    last = tricks[-1]
    b = len(calls) + 4 * (len(tricks) - 1) + 1 if len(last) == 4 else len(calls)
    deal["alternativeLines"] = [{"branchIndex": b, "phases": [{"phaseNumber": 0, "type": "TRICK_PLAY", "tricks": [last[1:][::-1]]}]}]
    tl = load_game(json.dumps(doc), source="alt.egn", strict=True).timeline
    assert len(tl.branches) == 1
    br = tl.branches[0]
    main_step = tl.steps[br.parent_step]
    assert main_step.action is not None and main_step.action.card is not None and main_step.action.card.text == last[0]
    assert br.steps[0].action is not None and br.steps[0].action.card is not None
    assert br.steps[0].action.card.text == last[-1]
    assert br.steps[0].branch == "0:0"


# --------------------------------------------------------------------------- CLI


def test_inspect_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "g.egn"
    path.write_text(json.dumps(generate_game(11)), encoding="utf-8")
    assert main(["inspect", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"deals", "finalScore", "winner"}
    d = out["deals"][0]
    assert set(d) == {"dealNumber", "dealer", "upCard", "trump", "maker", "makerTeam", "alone", "aloneDefender", "sitOut", "tricks", "tricksPerTeam", "points", "scoreAfter"}
    assert set(d["tricks"][0]) == {"leader", "seats", "cards", "winner"}
    assert out["finalScore"] == out["deals"][-1]["scoreAfter"]


def test_inspect_table_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect"]) == 0  # the bundled demo game
    assert "final score" in capsys.readouterr().out
    bad = tmp_path / "bad.egn"
    bad.write_text('{"fileType": "Euchre Game Notation", "version": "1.4", "metadata": {"players": [], "initialScore": []}, "deals": [{"dealNumber": 0}]}', encoding="utf-8")
    assert main(["inspect", str(bad), "--strict"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("euchre-overlay: bad.egn: deal 0")


def test_console_script_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "overlay.cli", "inspect", "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout)["winner"] in (0, 1)


@pytest.mark.parametrize("name", ["demo.egn"])
def test_inspect_json_is_the_full_replay_contract(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "assets" / "demo" / name
    assert main(["inspect", "--json", str(path)]) == 0  # the summary-only pass
    printed = json.loads(capsys.readouterr().out)
    full = load_game(path.read_bytes(), source=path.name)
    assert printed == json.loads(json.dumps(full.timeline.to_json())) and printed["deals"]


def test_bench_engine_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--json", "--repeat", "1", "--corpus", str(ROOT / "assets" / "demo")]) == 0
    figures = json.loads(capsys.readouterr().out)
    for kind in ("full", "read", "summary"):
        assert figures[f"{kind}_games"] == 1 and figures[f"{kind}_games_per_s"] > 0 and figures[f"{kind}_deals_per_s"] > 0
    assert figures["full_deals"] == figures["read_deals"] == figures["summary_deals"] > 0


def match_of(games: list[dict[str, Any]]) -> dict[str, Any]:
    """An EMN match of generated games, seats p0..p3."""
    return {
        "fileType": "Euchre Match Notation",
        "version": "1.0",
        "metadata": {"players": [{"id": f"p{i}", "name": n} for i, n in enumerate(["Ann", "Ben", "Cat", "Dan"])]},
        "games": [{"gameIndex": i, "players": ["p0", "p1", "p2", "p3"], "gameData": g} for i, g in enumerate(games)],
    }


@pytest.mark.parametrize("form", ["condensed", "expanded"])
def test_binary_forms_load_transparently(form: str) -> None:
    from engine import codec

    doc = generate_game(21, deals=4)
    data = codec.encode_condensed(doc) if form == "condensed" else codec.encode_expanded(doc)
    from_json = load_game(json.dumps(doc), source="g.egn", strict=True)
    from_bin = load_game(data, source="g.egnb", strict=True)
    assert from_bin.form == form
    assert from_bin.timeline.to_json() == from_json.timeline.to_json()


def test_match_file_loads_every_game() -> None:
    from engine import codec
    from engine.load import LoadedMatch, load_any

    games = [generate_game(s, deals=2) for s in (1, 2)]
    match = match_of(games)
    for data in (json.dumps(match).encode(), codec.encode_emn(match)):
        loaded = load_any(data, source="m.emn", strict=True)
        assert isinstance(loaded, LoadedMatch) and len(loaded.games) == 2
        assert loaded.games[1].timeline.deals[0].deal_number == 0


def test_inspect_a_match_prints_every_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    games = [generate_game(s, deals=2) for s in (3, 4)]
    match = match_of(games)
    path = tmp_path / "m.emn"
    path.write_text(json.dumps(match), encoding="utf-8")
    assert main(["inspect", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [len(g["deals"]) for g in out["games"]] == [2, 2]
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert "game 1 of 2" in text and "game 2 of 2" in text


def test_bundled_demo_is_the_projects_own_generated_game() -> None:
    from engine.generate import demo_game

    bundled = json.loads((ROOT / "assets" / "demo" / "demo.egn").read_text(encoding="utf-8"))
    assert bundled == demo_game()
    tl = load_game(json.dumps(bundled), source="demo.egn", strict=True).timeline
    assert tl.problems == () and tl.winner is not None
    assert any(d.alone for d in tl.deals) and any(s.annotations for s in tl.steps)


@pytest.mark.parametrize(
    "where, bad",
    [
        ("card", "9d\n"),
        ("version", "1.4\n"),
        ("date", "2026-05-30T03:51:00Z\n"),
    ],
)
def test_a_trailing_newline_is_not_a_valid_value(where: str, bad: str) -> None:
    """Python's ``$`` also matches before a final newline; the schema's patterns (JavaScript
    regular expressions without the multiline flag) do not, so neither do we."""
    from engine.errors import SchemaError
    from engine.validate import validate_document
    from tests.support import game

    doc = game(3, 1)
    if where == "card":
        doc["deals"][0]["upCard"] = bad
    elif where == "version":
        doc["version"] = bad
    else:
        doc["metadata"]["date"] = bad
    with pytest.raises(SchemaError):
        validate_document(doc, source="nl.egn")
    with pytest.raises(SchemaError):
        load_game(json.dumps(doc), source="nl.egn", strict=True)


def test_lenient_repair_survives_a_dropped_deal_with_more_problems_inside() -> None:
    """A bad up-card drops its whole deal; the deal's other bad cards wait for the next pass
    instead of being looked up (or "repaired") in the deal that moved into its place."""
    doc = generate_game(7, deals=4)
    bad = copy.deepcopy(doc)
    deal = bad["deals"][1]
    deal["initialState"]["upCard"] = "6s"
    deal["initialState"]["playerCards"][3][0] = "6d"
    deal["phases"][-1]["tricks"][0][1] = "6h"
    game = load_game(json.dumps(bad), source="six.egn")
    numbers = [d["dealNumber"] for d in doc["deals"]]
    assert [d.deal_number for d in game.timeline.deals] == numbers[:1] + numbers[2:]
    assert any("deal 1" in str(p) and "'6s'" in str(p) for p in game.problems)
    # the deals after the dropped one are played exactly as in the clean game (the score differs)
    clean = load_game(json.dumps(doc), source="six.egn")
    plays = [[t.to_json() for t in d.tricks] for d in clean.timeline.deals[2:]]
    assert [[t.to_json() for t in d.tricks] for d in game.timeline.deals[1:]] == plays
    # nothing of the deal that moved into the dropped one's place was touched
    assert [d.model_dump(mode="json", exclude_none=True) for d in game.document.deals[1:]] == [
        d.model_dump(mode="json", exclude_none=True) for d in clean.document.deals[2:]
    ]


@pytest.mark.parametrize("seed", [3, 4, 7])
def test_lenient_load_of_many_broken_deals_does_not_crash(seed: int) -> None:
    """Every nine written as a six (what a 36-card game looks like: EGN has no 6): many bad
    cards per deal, up-cards among them.  Once raised IndexError from the repair."""
    text = json.dumps(generate_game(seed)).replace('"9', '"6')
    game = load_game(text, source="six.egn")
    assert game.problems and all(p.kind == "schema" for p in game.problems)
    assert len(game.timeline.deals) == len(game.document.deals) > 0
    assert all("6" not in card for d in game.document.deals for card in (d.initialState.upCard,))


def test_generator_refuses_a_deck_egn_cannot_write() -> None:
    with pytest.raises(ValueError, match="no 6"):
        generate_game(7, ruleset={"min_rank": 6})
