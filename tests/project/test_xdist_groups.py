"""The suite's ``xdist_group`` marks hold: under ``--dist loadgroup`` (``scripts/bootstrap
test``) the tests of one group run on one worker, so a group's shared set-up (a Ray cluster, a
wheel build, the legibility walks) is made once.  Under pytest 9.2 pytest-xdist silently
stopped grouping (pytest-dev/pytest-xdist#1386) and every worker redid each set-up; this
catches that again, whatever the versions installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MODULE = '''
import pytest
pytestmark = pytest.mark.xdist_group("one")

@pytest.mark.parametrize("i", range(8))
def test_where(i):
    pass
'''


def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(MODULE, encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    workers = {line.split()[0] for line in res.stdout.splitlines() if line.startswith("[gw") and "PASSED" in line}
    assert len(workers) == 1, f"the group ran on {sorted(workers)}:\n{res.stdout}"
