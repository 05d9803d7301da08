"""``euchre-overlay bench faults``: the cases of issue 22 items 4 and 14, each on real server
processes (the cluster's, items 10 and 11, are in :mod:`overlay.bench.clusterfaults`).
:mod:`overlay.bench.faults` runs them (``--only NAME``).

- **halfsent** (item 4): under a lowered file limit (``RLIMIT_NOFILE``), a crowd of sockets
  sends half a request and holds it; the figure is how long a normal page load then takes
  (median over a few loads while they hold), and how much the server wrote to stderr.
- **restart** (item 14): a data folder with N channels (each with a game under way): how long
  a clean shutdown (SIGTERM to exit) and a start (to the first answer) take.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
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
    p.add_argument("--halfsent", type=int, default=420, help="halfsent: sockets that send half a request and hold it")
    p.add_argument("--file-limit", type=int, default=400, help="halfsent: the server's open-file limit (RLIMIT_NOFILE)")
    p.add_argument("--hold", type=float, default=15.0, help="halfsent: seconds the sockets hold their half requests")
    p.add_argument("--restart-channels", type=int, default=2000, help="restart: channels in the data folder")
    p.add_argument("--restart-rounds", type=int, default=3, help="restart: shutdown and start rounds (the median is the figure)")


# --------------------------------------------------------------------------- halfsent (item 4)


def _half_sent(host: str, port: int, source: str) -> socket.socket:
    """A socket from ``source`` (a loopback address) that sends a request line and one
    header, never the blank line that ends the headers, and holds the connection."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect((host, port))
    s.sendall(b"GET /overlay/t HTTP/1.1\r\nHost: x\r\n")
    return s


def _closed_how(s: socket.socket) -> str:
    """How the server ended ``s``: "408" (timed out, told), "closed" (no answer), "open"."""
    s.setblocking(False)
    try:
        data = s.recv(65536)
    except BlockingIOError:
        return "open"
    except OSError:
        return "closed"
    return "408" if data.startswith(b"HTTP/1.1 408") else "closed" if not data else "other"


async def _page_load(base: str, timeout: float) -> float:
    """Seconds to load the page and its player script (``timeout`` when it did not load)."""
    import aiohttp

    began = time.perf_counter()
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as s:
            for path in ("/overlay/t?output=program", "/static/player.js"):
                async with s.get(base + path) as r:
                    await r.read()
                    if r.status != 200:
                        return timeout
    except (aiohttp.ClientError, asyncio.TimeoutError):
        return timeout
    return time.perf_counter() - began


async def halfsent(args: argparse.Namespace) -> dict[str, Any]:
    """``--halfsent`` sockets hold half a request on a server limited to ``--file-limit``
    open files: page loads meanwhile, and what the server wrote to stderr."""
    import resource

    n, limit = args.halfsent, args.file_limit

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    loads: list[float] = []
    with tempfile.TemporaryDirectory() as data, open(os.path.join(data, "stderr"), "wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", os.path.join(data, "d"), "--token", TOKEN, "--no-demo",
            stdout=asyncio.subprocess.PIPE, stderr=err, preexec_fn=lower,
        )
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        base = line.split("serving on ", 1)[1].split()[0]
        host, port = base[7:].rsplit(":", 1)
        began = time.perf_counter()
        # spread over loopback addresses (7 each), as many clients would be
        held = await asyncio.to_thread(lambda: [_half_sent(host, int(port), f"127.0.{1 + i // 7 // 250}.{2 + i // 7 % 250}") for i in range(n)])
        opened = time.perf_counter() - began
        for _ in range(5):
            loads.append(await _page_load(base, 30.0))
            await asyncio.sleep(0.5)
        await asyncio.sleep(max(0.0, began + args.hold - time.perf_counter()))
        how = [_closed_how(s) for s in held]
        for s in held:
            s.close()
        after = await _page_load(base, 30.0)
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
        err.flush()
        stderr_bytes = os.path.getsize(os.path.join(data, "stderr"))
        print(open(os.path.join(data, "stderr")).read()[:2000], file=sys.stderr)
    return {
        "halfsent_sockets": n,
        "halfsent_file_limit": limit,
        "halfsent_opened_in_s": round(opened, 2),
        "halfsent_page_load_median_s": round(pct(loads, 50), 3),
        "halfsent_page_load_max_s": round(max(loads), 3),
        f"halfsent_closed_by_server_after_{args.hold:g}_s": sum(h != "open" for h in how),
        "halfsent_told_408": sum(h == "408" for h in how),
        "halfsent_page_load_after_s": round(after, 3),
        "halfsent_stderr_bytes": stderr_bytes,
    }


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
CASES = {"halfsent": halfsent, "restart": restart}
