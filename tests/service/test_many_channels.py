"""Many channels: a clean shutdown and a restart stay short (issue 22, item 14).

With 2,000 channels a shutdown took 27.8 s and a restart 27 s.  Most of it was Python's
cyclic garbage collector: restoring the channels builds ~850 long-lived objects each, and
every full collection over the growing heap rescanned all of them (11 of 25 s of a
restore), then the interpreter's exit scanned them all again (13-15 s of a 16 s shutdown).
The figures are ``euchre-overlay bench faults --only restart`` (docs/benchmarks.md); these
tests check the mechanism on a real ``serve`` process: no full collection while the
channels are restored, the restored objects frozen (later collections and the exit skip
them), and every playhead saved at the shutdown.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from overlay.bench.faultcases import _fill
from overlay.bench.rediserver import free_port
from overlay.service.store import Store

CHANNELS = 300

#: ``serve`` in this process, a watcher thread that waits for the last channel's answer,
#: notes the collector's state, then stops the server as a supervisor does (SIGTERM)
SCRIPT = r"""
import gc, json, os, signal, sys, threading, time, urllib.request
import overlay.cli, overlay.cli.serve, overlay.service.app, overlay.bench.command  # imported before counting
gc.collect()
full = []
gc.callbacks.append(lambda phase, info: phase == "stop" and info["generation"] == 2 and full.append(time.monotonic()))
port, data, last = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}

def watch():
    url = f"http://127.0.0.1:{port}/api/channels/{last}/state?output=program"
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.05)
    seen.update(full_during_start=len(full), frozen_at_ready=gc.get_freeze_count(), enabled=gc.isenabled())
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=watch, daemon=True).start()
code = overlay.cli.main(["serve", "--port", port, "--data", data, "--token", "t", "--no-demo"])
seen.update(code=code, scanned_at_exit=len(gc.get_objects()))
print("RESULT " + json.dumps(seen))
"""


def test_restart_restores_without_full_collections_and_freezes_the_channels(tmp_path: Path) -> None:
    _fill(str(tmp_path), CHANNELS)
    started = time.time()
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(free_port()), str(tmp_path), f"c{CHANNELS - 1}"],
        capture_output=True, text=True, timeout=300,
    )
    line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, out.stdout[-2000:] + out.stderr[-2000:]
    seen = json.loads(line[7:])
    assert seen["code"] == 0 and seen["enabled"]  # the collector runs again for what comes later
    assert seen["full_during_start"] == 0, seen  # no full collection while restoring
    # the restored channels' objects (hundreds each) are frozen: collections skip them
    assert seen["frozen_at_ready"] >= CHANNELS * 500, seen
    assert seen["scanned_at_exit"] < 5000, seen  # the exit's collections skip them too
    # every playhead was saved at the shutdown (a restart resumes there)
    store = Store(tmp_path / "overlay.sqlite3")
    try:
        saved = store.db.execute("SELECT COUNT(*) FROM playheads WHERE updated > ?", (started,)).fetchone()[0]
    finally:
        store.close()
    assert saved == CHANNELS
