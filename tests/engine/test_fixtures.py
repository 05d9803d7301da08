"""Every reference example loads and replays; every reference rejection is refused.

Reads ../shared/fixtures/egn (CI has it beside the clone; elsewhere these tests skip).
Golden tables (trick winners and scores per deal, made by this engine and checked by
hand on a few deals) live in tests/golden/engine/; ``--update-golden`` rewrites them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from engine.errors import EgnError, SchemaError
from engine.load import load_game
from engine.validate import validate_document
from tests.support import SHARED_EGN, shared_egn, shared_files

GOLDEN = Path(__file__).parents[1] / "golden" / "engine"

REAL_GAMES = shared_files("examples/*.egn") + shared_files("upgraded/**/*.egn")
ALL_EGN = shared_files("examples/**/*.egn") + shared_files("upgraded/**/*.egn") + shared_files("synthetic/**/*.egn")


def _id(p: Path) -> str:
    return str(p.relative_to(SHARED_EGN)) if SHARED_EGN in p.parents else p.name


def _rows(name: str) -> list[dict[str, str]]:
    path = shared_egn() / name
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_fixtures_present_or_skipped() -> None:
    root = shared_egn()
    assert (root / "examples").is_dir() and REAL_GAMES


@pytest.mark.parametrize("path", REAL_GAMES, ids=_id)
def test_example_loads_strictly_and_replays(path: Path) -> None:
    game = load_game(path.read_bytes(), source=path.name, strict=True)
    tl = game.timeline
    assert tl.deals, "a real example has deals"
    for d in tl.deals:
        for t in d.tricks[:-1]:
            assert t.winner is not None
        if d.points is not None:
            assert len(d.tricks) == 5 or d.trump is None


@pytest.mark.parametrize("path", ALL_EGN, ids=_id)
def test_every_fixture_game_loads_leniently(path: Path) -> None:
    game = load_game(path.read_bytes(), source=path.name)
    steps = game.timeline.steps
    assert [s.step for s in steps] == list(range(len(steps)))


def _table(path: Path) -> dict[str, Any]:
    tl = load_game(path.read_bytes(), source=path.name).timeline
    return {
        "deals": [
            {"dealNumber": d.deal_number, "winners": [t.winner for t in d.tricks], "points": list(d.points) if d.points else None, "scoreAfter": list(d.score_after)}
            for d in tl.deals
        ],
        "finalScore": list(tl.final_score),
        "winner": tl.winner,
    }


@pytest.mark.parametrize("path", REAL_GAMES, ids=_id)
def test_golden_table(path: Path, request: pytest.FixtureRequest) -> None:
    golden = GOLDEN / (path.relative_to(SHARED_EGN).as_posix().replace("/", "__").removesuffix(".egn") + ".json")
    table = _table(path)
    if request.config.getoption("--update-golden", default=False) or not golden.exists():
        if not request.config.getoption("--update-golden", default=False):
            pytest.fail(f"no golden table {golden}; run pytest --update-golden")
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    assert table == json.loads(golden.read_text(encoding="utf-8"))


def test_golden_table_checked_by_hand() -> None:
    """Deal 0 of Epic_Comeback, worked by hand: dealer 0, seat 2 orders the Th (trump hearts).

    Trick 1 (seat 1 leads): Kh, Jh (right bower, seat 2), 9h, Th -> seat 2.
    Trick 2: Ac, Qc, 9c, Jc -> seat 2 (ace led, no trump).  Trick 3: 9s, Qs, As, Ks -> seat 0.
    Trick 4 (seat 0): Kc, Qd, Tc, Ah -> seat 3 trumps in.  Trick 5: Jd (left bower), Ts, Kd, Td -> seat 3.
    Makers (team 0) take 3: 1 point, from 0-7 to 1-7.
    """
    path = shared_egn() / "examples" / "Epic_Comeback.egn"
    d0 = _table(path)["deals"][0]
    assert d0 == {"dealNumber": 0, "winners": [2, 2, 0, 3, 3], "points": [1, 0], "scoreAfter": [1, 7]}


def test_synthetic_final_scores_agree_with_their_generator() -> None:
    """The synthetic games carry the final score their (independent) generator computed.

    That generator scores a lone defence like any euchred loner and ignores ``fast_break``;
    this project scores a successful lone defence 4 and applies the fast-break rule (README,
    "Rules"), so games using those are left out.
    """
    shared_egn()
    checked = 0
    for path in shared_files("synthetic/g*.egn"):
        obj = json.loads(path.read_text(encoding="utf-8"))
        final = obj["metadata"].get("finalScore")
        rules = obj["metadata"].get("ruleset") or {}
        if not final or len(final) != 2 or rules.get("fast_break") or rules.get("defend_alone"):
            continue
        try:
            tl = load_game(path.read_bytes(), source=path.name, strict=True).timeline
        except EgnError:
            continue
        if any(not c.known for s in tl.steps for c in (s.action.card,) if s.action and s.action.card):
            continue  # masked cards: winners cannot be judged
        assert list(tl.final_score) == final, path.name
        checked += 1
    assert checked > 50


# --------------------------------------------------------------------------- rejections


def _schema_rejections() -> list[tuple[str, str]]:
    out = []
    for tsv, base in (("rejected.tsv", ""), ("synthetic/rejected.tsv", "synthetic/"), ("synthetic/quirks/rejected.tsv", "synthetic/quirks/")):
        path = SHARED_EGN / tsv
        if not path.exists():
            continue
        with path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                violations = row["all_schema_violations_of_input"]
                # "(schema-valid)" rows are refused by the condensed encoder (tests/codec/test_*)
                if row["file"].endswith(".egn") and "encode" in row["step"] and violations != "(schema-valid)":
                    out.append((base + row["file"], violations))
    return sorted(set(out))


@pytest.mark.parametrize("name, reason", _schema_rejections(), ids=[r[0] for r in _schema_rejections()])
def test_reference_rejections_are_refused(name: str, reason: str) -> None:
    path = shared_egn() / name
    obj = json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(SchemaError) as exc:
        validate_document(obj, source=path.name, reference=True)
    message = str(exc.value)
    assert message.startswith(path.name + ": ")
    assert "/" in message  # names the JSON path
