"""Every package stays clean under mypy --strict, the project's typing rule: the engine, the
renderer, the service and the studio, in one run.  mypy keeps its cache in ``.build/mypy``
(git-ignored): a first run checks everything (about 8 s; Ray's sources are not read, see
pyproject.toml), a run after it only what changed (under a second when nothing did)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT

PACKAGES = ["engine", "renderer", "overlay", "studio"]


def test_mypy_strict_on_every_package() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / ".build" / "mypy"), *PACKAGES],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
