"""``euchre-overlay bench faults``: the cases of issue 22 items 4, 10, 11 and 14, each on real
server processes (and a real ``redis-server`` for the cluster's).  :mod:`overlay.bench.faults`
runs them (``--only NAME``).

- **halfsent** (item 4): under a lowered file limit (``RLIMIT_NOFILE``), a crowd of sockets
  sends half a request and holds it; the figure is how long a normal page load then takes
  (median over a few loads while they hold), and how much the server wrote to stderr.
- **frozen** (item 10): three ``serve --redis`` processes; the owner of a live channel is
  frozen (SIGSTOP) while a logger posts through another process.  Figures: the longest
  wait for an acknowledged action across the freeze (the bound is 8 s), the stale answers
  and stale scenes seen after the frozen owner resumes (SIGCONT), and acknowledged actions lost.
- **outage** (item 11): Redis stopped (SIGSTOP, so connections hang as on a dead network)
  while a request is forwarded: how long it waits and what it answers (a 503, never a 500).
- **restart** (item 14): a data folder with N channels (each with a game under way): how long
  a clean shutdown (SIGTERM to exit) and a start (to the first answer) take.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .server import ProcStat, pct, start_server

__all__ = ["CASES", "add_arguments", "restart"]

TOKEN = "bench-faults-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--restart-channels", type=int, default=2000, help="restart: channels in the data folder")
    p.add_argument("--restart-rounds", type=int, default=3, help="restart: shutdown and start rounds (the median is the figure)")


# --------------------------------------------------------------------------- restart (item 14)


def _fill(data: str, n: int) -> None:
    """``n`` channels in the SQLite store at ``data``, each with a two-deal game under way
    and a playhead, written by the service's own store."""
    from engine.generate import generate_game

    from ..service.store import Store

    doc = generate_game(7, deals=2)
    blob = json.dumps(doc).encode()
    store = Store(Path(data) / "overlay.sqlite3", synchronous="NORMAL")
    try:
        with store.transaction():
            store.set_meta("initialized", "1")
            for i in range(n):
                cid = f"c{i}"
                store.create_channel(cid)
                store.save_game(cid, blob, source=f"{cid}.egn", seq=0)
                store.save_playhead(cid, {"step": 5, "progress": 0.0, "playing": True, "speed": 1.0})
    finally:
        store.close()


async def _first_answer(base: str, cid: str, timeout: float = 120.0) -> None:
    import aiohttp

    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession(headers=AUTH) as s:
        while time.monotonic() < deadline:
            try:
                async with s.get(f"{base}/api/channels/{cid}/state?output=preview") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.02)
    raise RuntimeError(f"{base}: channel {cid} did not answer within {timeout} s")


async def restart(args: argparse.Namespace) -> dict[str, Any]:
    """Start and stop a server on a folder of ``--restart-channels`` channels, a few times."""
    n = args.restart_channels
    starts: list[float] = []
    stops: list[float] = []
    cpus: list[float] = []  # CPU seconds of the start: what the start costs on a quiet machine
    with tempfile.TemporaryDirectory() as data:
        _fill(data, n)
        for _ in range(args.restart_rounds):
            began = time.perf_counter()
            proc, base = await start_server(data, TOKEN)
            listening = time.perf_counter() - began
            await _first_answer(base, f"c{n - 1}")
            starts.append(time.perf_counter() - began)
            cpus.append(ProcStat(proc.pid).cpu())
            await asyncio.sleep(1.0)  # every channel's pump has run
            began = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            code = await proc.wait()
            stops.append(time.perf_counter() - began)
            if code != 0:
                raise RuntimeError(f"the server exited with {code} on SIGTERM")
            print(
                f"restart: start {starts[-1]:.2f} s (listening after {listening:.2f} s, {cpus[-1]:.2f} s of CPU), shutdown {stops[-1]:.2f} s",
                file=sys.stderr,
            )
    return {
        "restart_channels": n,
        "restart_start_median_s": round(pct(starts, 50), 2),
        "restart_start_max_s": round(max(starts), 2),
        "restart_start_cpu_median_s": round(pct(cpus, 50), 2),
        "restart_shutdown_median_s": round(pct(stops, 50), 2),
        "restart_shutdown_max_s": round(max(stops), 2),
    }


#: the cases of this module, by ``--only`` name
CASES = {"restart": restart}
