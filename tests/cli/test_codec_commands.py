"""``euchre-overlay convert / baseline / upgrade`` and ``bench codecs`` / ``bench fuzz``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from overlay.cli import main
from tests.support import shared_egn as shared


def test_convert_both_ways_gives_reference_files(tmp_path: Path) -> None:
    base = shared() / "synthetic"
    assert main(["convert", str(base / "g042.egn"), str(tmp_path / "g.egnb")]) == 0
    assert (tmp_path / "g.egnb").read_bytes() == (base / "g042.egnb").read_bytes()
    assert main(["convert", str(base / "g042.egn"), str(tmp_path / "g.expanded.egnb"), "--expanded"]) == 0
    assert (tmp_path / "g.expanded.egnb").read_bytes() == (base / "g042.expanded.egnb").read_bytes()
    for name in ("g042.egnb", "g042.expanded.egnb"):
        assert main(["convert", str(base / name), str(tmp_path / (name + ".json"))]) == 0
        assert (tmp_path / (name + ".json")).read_text() == (base / (name + ".json")).read_text()


def test_convert_binary_to_binary_and_by_content_not_extension(tmp_path: Path) -> None:
    base = shared() / "synthetic"
    odd = tmp_path / "game.bin"
    shutil.copy(base / "g042.expanded.egnb", odd)
    assert main(["convert", str(odd), str(tmp_path / "c.egnb")]) == 0
    assert (tmp_path / "c.egnb").read_bytes() == (base / "g042.egnb").read_bytes()


def test_convert_match_files(tmp_path: Path) -> None:
    emn = shared() / "synthetic" / "emn"
    assert main(["convert", str(emn / "best_of_3.emn"), str(tmp_path / "m.emnb")]) == 0
    assert (tmp_path / "m.emnb").read_bytes() == (emn / "best_of_3.emnb").read_bytes()
    assert main(["convert", str(tmp_path / "m.emnb"), str(tmp_path / "m.json")]) == 0
    got = json.loads((tmp_path / "m.json").read_text())
    assert got == json.loads((emn / "best_of_3.emnb.json").read_text())


def test_an_output_as_a_path_or_with_o_and_plain_permissions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``convert IN OUT`` as egn-convert has it, or ``-o OUT`` as the other commands have it
    (the same bytes; both or neither refused); files come out as a plain write makes them (they
    were 0600, the temporary file's), and a file rewritten keeps its own permissions."""
    import os

    from engine.generate import generate_game

    game = tmp_path / "g.egn"
    game.write_text(json.dumps(generate_game(3)), encoding="utf-8")
    old = os.umask(0o022)
    try:
        assert main(["convert", str(game), str(tmp_path / "a.egnb")]) == 0
        assert main(["convert", str(game), "-o", str(tmp_path / "b.egnb")]) == 0
        assert main(["baseline", str(game), "-o", str(tmp_path / "base.egn")]) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "a.egnb").read_bytes() == (tmp_path / "b.egnb").read_bytes()
    assert [(tmp_path / n).stat().st_mode & 0o777 for n in ("a.egnb", "b.egnb", "base.egn")] == [0o644] * 3
    (tmp_path / "base.egn").chmod(0o640)
    assert main(["upgrade", str(tmp_path / "base.egn")]) == 0
    assert (tmp_path / "base.egn").stat().st_mode & 0o777 == 0o640
    capsys.readouterr()
    assert main(["convert", str(game), str(tmp_path / "c.egnb"), "-o", str(tmp_path / "d.egnb")]) == 2
    assert "two outputs" in capsys.readouterr().err
    assert main(["convert", str(game)]) == 2
    assert "convert: where to write: OUTPUT or -o OUT" in capsys.readouterr().err
    assert not (tmp_path / "c.egnb").exists() and not (tmp_path / "d.egnb").exists()
    # a missing folder is made (as render and frame make theirs); one that cannot be is named,
    # never the temporary file ("No such file or directory: '…/.tmp-…'")
    assert main(["convert", str(game), str(tmp_path / "new" / "sub" / "e.egnb")]) == 0
    assert (tmp_path / "new" / "sub" / "e.egnb").read_bytes() == (tmp_path / "a.egnb").read_bytes()
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir.egnb").mkdir()
    for out, why in (("file/f.egnb", f"{tmp_path / 'file'} is a file, not a folder"), ("dir.egnb", "Is a directory")):
        assert main(["convert", str(game), str(tmp_path / out)]) == 2
        assert capsys.readouterr().err == f"euchre-overlay: {tmp_path / out}: {why}\n"
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_baseline_hash_any_form(capsys: pytest.CaptureFixture[str]) -> None:
    base = shared() / "synthetic"
    want = {r.split("\t")[0]: r.split("\t")[1] for r in (base / "expected-hashes.tsv").read_text().splitlines()[1:]}
    for name in ("g042.egn", "g042.egnb", "g042.expanded.egnb"):
        assert main(["baseline", str(base / name), "--hash"]) == 0
        assert capsys.readouterr().out.strip() == want[name]


def test_baseline_writes_stripped_game(tmp_path: Path) -> None:
    src = shared() / "examples" / "VWEC_Finals_Annotated.egn"
    assert main(["baseline", str(src), str(tmp_path / "b.egn")]) == 0
    text = (tmp_path / "b.egn").read_text()
    assert "Annotations" not in text and "alternativeLines" not in text
    assert main(["baseline", str(src), str(tmp_path / "b.egnb")]) == 0
    assert (tmp_path / "b.egnb").read_bytes()[:1] == b"\x01"


def test_upgrade_in_place_and_to_target(tmp_path: Path) -> None:
    src = shared() / "examples" / "conversion_examples" / "test_timingsLayouts.egn"
    want = (shared() / "upgraded" / "conversion_examples" / "test_timingsLayouts.egn").read_text()
    copy = tmp_path / "t.egn"
    shutil.copy(src, copy)
    assert main(["upgrade", str(copy)]) == 0
    assert copy.read_text() == want
    assert main(["upgrade", str(src), str(tmp_path / "u.egn")]) == 0
    assert (tmp_path / "u.egn").read_text() == want


def test_errors_go_to_stderr_with_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = shared() / "synthetic" / "g136.egn"
    assert main(["convert", str(bad), str(tmp_path / "x.egnb")]) == 2
    err = capsys.readouterr().err
    assert "g136.egn: deal" in err and "Card Xx not found" in err
    assert not (tmp_path / "x.egnb").exists()


def test_bench_codecs_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("g001.egn", "g002.egn", "g068.egn"):
        shutil.copy(shared() / "synthetic" / name, tmp_path / name)
    assert main(["bench", "codecs", "--json", "--runs", "1", "--corpus", str(tmp_path)]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["games"] == 3
    for form in ("condensed", "expanded"):
        for op in ("encode", "decode"):
            assert figures[f"{form}_{op}_games_per_s"] > 0
            assert figures[f"{form}_{op}_mb_per_s"] > 0


def test_bench_fuzz_prints_counts(capsys: pytest.CaptureFixture[str]) -> None:
    shared()
    assert main(["bench", "fuzz", "200", "--seed", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["accepted"] + figures["refused"] == 200
    assert figures["crashed"] == 0
    assert figures["slowest_s"] > 0
