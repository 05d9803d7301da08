"""engine/ and renderer/ stay clean under mypy --strict (STYLE.md section 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_engine_and_renderer() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "engine", "renderer"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
