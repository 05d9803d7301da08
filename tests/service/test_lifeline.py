"""Worker processes end with the process that started them, even one killed with SIGKILL
(:mod:`overlay.service.lifeline`): the service's analysis worker and a render's drawing
processes.  Before, both outlived a ``kill -9`` for good, holding memory, shared memory and
the dead process's stdout pipe (a test waiting for a killed service's exit hung on it)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from overlay.bench.server import descendants
from tests.support import ROOT, game


def _alive(pid: int) -> bool:
    """``pid`` runs (an exited process that nobody has reaped yet counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    """Those of ``pids`` still running after ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = {p for p in pids if _alive(p)}
        if not left:
            return set()
        time.sleep(0.05)
    return {p for p in pids if _alive(p)}


_POOL = """
import os, sys, time
from overlay.service.analysis import AnalysisPool
pool = AnalysisPool()
print(pool.executor().submit(os.getpid).result(timeout=60), flush=True)
time.sleep(120)
"""


def test_the_analysis_worker_ends_when_its_service_is_killed() -> None:
    """A process with the service's analysis pool, its worker up, killed with SIGKILL: the
    worker ends within seconds, and with it the pipe it shared with the dead process."""
    proc = subprocess.Popen([sys.executable, "-c", _POOL], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        worker = int(proc.stdout.readline())
        assert worker != proc.pid and _alive(worker)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert _gone_within({worker}, 10) == set(), "the analysis worker outlived its killed service"
        assert proc.stdout.read() == ""  # end-of-file: no process holds the pipe any more
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_render_takes_its_drawing_processes_with_it(tmp_path: Path) -> None:
    """``render`` long enough to draw in worker processes, killed with SIGKILL while they
    draw: the drawing processes, their fork server and the resource tracker all end."""
    src = tmp_path / "g.egn"
    src.write_text(json.dumps(game(21, deals=8)), encoding="utf-8")  # minutes of video: killed long before its end
    proc = subprocess.Popen(
        [sys.executable, "-m", "overlay.cli", "render", str(src), "--workers", "2", "--fps", "30", "--size", "320x180", "-o", str(tmp_path / "o.mov")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        under: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            under = descendants(proc.pid)
            if len(under) >= 4:  # resource tracker, fork server and two drawing processes
                break
            time.sleep(0.05)
        assert len(under) >= 4, f"the render did not start its drawing processes (exit status {proc.poll()}, under it: {sorted(under)})"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert _gone_within(under, 10) == set(), "processes of the killed render are still running"
    finally:
        proc.kill()
        proc.wait()
