"""The compiled engine (mypyc, :mod:`engine.native`): the same results as the pure one, and
the fallbacks to pure Python (stale source, garbled stamp, unloadable library, forced, no
build) with the stderr line the broken cases print."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import engine.deal
from engine import native
from tests.support import ROOT, SHARED_EGN

#: what a subprocess reports about the engine it imported
PROBE = "import json, engine.deal, engine.native as n; s = n.status(); print(json.dumps([s.mode, s.detail, engine.deal.__file__]))"


def environment(*, pure: bool, path: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != native.PURE_ENV}
    if pure:
        env[native.PURE_ENV] = "1"
    if path is not None:
        env["PYTHONPATH"] = str(path)
    return env


def probe(root: Path) -> tuple[str, str, str, str]:
    """Mode, detail, ``engine.deal``'s file and stderr of a Python importing the engine under ``root``."""
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=environment(pure=False, path=root), capture_output=True, text=True, check=True)
    mode, detail, deal_file = json.loads(out.stdout)
    return mode, detail, deal_file, out.stderr


def build_is_current() -> str | None:
    """Why there is no usable compiled build here (``None``: there is one)."""
    if not (native.BUILD / native.STAMP_NAME).exists():
        return f"no compiled engine in {native.BUILD} (scripts/build_engine builds it)"
    return native.stamp_problem(native.BUILD, ROOT)


@pytest.mark.slow
def test_compiled_and_pure_engines_make_the_same_replays() -> None:
    """Every fixture game (when present) and generated games over many rulesets, some broken
    on purpose, some with alternative lines: full timelines, summaries, problems, strict
    loads, resumed replays and the double-dummy solver's values digest the same in a compiled
    and a pure process."""
    why = build_is_current()
    if why is not None:
        pytest.skip(f"nothing to compare the pure engine with: {why}")
    folder = str(SHARED_EGN) if SHARED_EGN.is_dir() else ""
    runs = {
        mode: subprocess.Popen([sys.executable, "-m", "tests.native_digest", folder], cwd=ROOT, env=environment(pure=mode == "pure"), stdout=subprocess.PIPE, text=True)
        for mode in ("compiled", "pure")
    }
    results: dict[str, Any] = {}
    for mode, proc in runs.items():
        stdout, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0
        results[mode] = json.loads(stdout)
        assert results[mode]["mode"] == mode, results[mode]["detail"]
    compiled, pure = results["compiled"]["digests"], results["pure"]["digests"]
    assert compiled.keys() == pure.keys()
    assert len(compiled) >= 72 + (300 if folder else 0)
    differ = sorted(name for name in compiled if compiled[name] != pure[name])
    assert differ == [], f"{len(differ)} games replay differently compiled and pure: {differ[:10]}"


def test_mode_says_which_modules_run() -> None:
    """This process's mode matches the file ``engine.deal`` was loaded from."""
    status = native.status()
    compiled_file = engine.deal.__file__ is not None and engine.deal.__file__.endswith(native.abi())
    assert (status.mode, compiled_file) in (("compiled", True), ("pure", False))
    assert native.mode() == status.mode


def test_pure_env_forces_pure_silently() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environment(pure=True), capture_output=True, text=True, check=True)
    mode, detail, deal_file = json.loads(out.stdout)
    assert (mode, detail, Path(deal_file)) == ("pure", f"{native.PURE_ENV}=1", ROOT / "engine" / "deal.py")
    assert out.stderr == ""


@pytest.fixture
def engine_copy(tmp_path: Path) -> tuple[Path, bool]:
    """The engine package copied to a folder of its own, with the compiled build when there
    is a current one (``True``), else a stamp that matches the copy's sources and empty
    files where the extension modules would be (``False``)."""
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    build = tmp_path / native.BUILD.relative_to(ROOT)
    real = build_is_current() is None
    if real:
        shutil.copytree(native.BUILD, build)
    else:
        (build / "engine").mkdir(parents=True)
        for name in [native.GROUP + "__mypyc", *native.COMPILED]:
            (build / "engine" / (name + native.abi())).write_bytes(b"")
        sources = {p.relative_to(tmp_path).as_posix(): native.source_digest(p) for p in sorted((tmp_path / "engine").rglob("*.py"))}
        stamp = {"format": native.FORMAT, "abi": native.abi(), "modules": list(native.COMPILED), "sources": sources}
        (build / native.STAMP_NAME).write_text(json.dumps(stamp), encoding="utf-8")
    return tmp_path, real


def test_copy_runs_compiled_or_reports_an_unloadable_library(engine_copy: tuple[Path, bool]) -> None:
    root, real = engine_copy
    mode, detail, deal_file, stderr = probe(root)
    if real:
        assert (mode, stderr) == ("compiled", "")
        assert Path(deal_file).parent == root / ".build" / "mypyc" / "engine"
    else:  # the stamp matches, the library is an empty file
        assert mode == "pure" and Path(deal_file) == root / "engine" / "deal.py"
        assert "its library does not load" in stderr and stderr.count("\n") == 1


def test_edited_source_runs_pure_with_one_line(engine_copy: tuple[Path, bool]) -> None:
    root, _ = engine_copy
    with open(root / "engine" / "rules.py", "a", encoding="utf-8") as f:
        f.write("# edited after the build\n")
    mode, detail, deal_file, stderr = probe(root)
    assert mode == "pure" and Path(deal_file) == root / "engine" / "deal.py"
    assert stderr.count("\n") == 1 and stderr.startswith("euchre-overlay: running the pure-Python engine")
    assert "engine/rules.py changed since it was built" in stderr and "scripts/build_engine" in stderr
    assert "engine/rules.py changed" in detail


@pytest.mark.parametrize("stamp", ["{not json", "[]", '{"format": 1}', ""], ids=["garbled", "a-list", "fields-missing", "empty"])
def test_broken_stamp_runs_pure_with_one_line(engine_copy: tuple[Path, bool], stamp: str) -> None:
    root, _ = engine_copy
    (root / native.BUILD.relative_to(ROOT) / native.STAMP_NAME).write_text(stamp, encoding="utf-8")
    mode, detail, deal_file, stderr = probe(root)
    assert mode == "pure" and Path(deal_file) == root / "engine" / "deal.py"
    assert stderr.count("\n") == 1 and "stamp" in stderr and "is unreadable" in stderr


def test_no_build_runs_pure_silently(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    mode, detail, deal_file, stderr = probe(tmp_path)
    assert (mode, Path(deal_file), stderr) == ("pure", tmp_path / "engine" / "deal.py", "")
    assert detail.startswith("no compiled build")


def test_report_header_names_the_mode(request: pytest.FixtureRequest) -> None:
    from tests.conftest import pytest_report_header

    assert pytest_report_header(request.config) == f"engine: {native.mode()} ({native.status().detail})"
