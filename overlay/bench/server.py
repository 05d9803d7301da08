"""What the service benchmarks share: a real server in a subprocess, a channel held at one
step, percentiles, and CPU readings from /proc.

The server runs as ``euchre-overlay serve`` in its own process (so that its CPU and memory
are its own, and it can be killed), on a free port and a data folder of the caller's.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["KINDS", "ProcStat", "chromium_cpu", "descendants", "held_channel", "never_reading_socket", "pct", "start_server", "until"]

#: every step kind, for a Timing that plays them all at one (fast) pace
KINDS = ("deal_start", "call", "discard", "card", "trick_taken", "deal_scored", "game_over")


def pct(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


async def start_server(
    data: str, token: str, *, extra: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = 60.0,
    demo: bool = False,
) -> tuple[Any, str]:
    """``euchre-overlay serve`` on ``data`` with ``token`` (``--no-demo`` unless ``demo``);
    returns the process and its base URL once it listens.  Its output is drained in the
    background (a full pipe would stall it); its first 100 lines are kept in the process's
    ``printed`` list.

    Raises:
        RuntimeError: the server exited before it listened.
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", data, "--token", token, *(() if demo else ("--no-demo",)), *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(os.environ, **(env or {})),
    )
    assert proc.stdout is not None
    printed: list[str] = []
    proc.printed = printed  # type: ignore[attr-defined]
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout)).decode()
        if not line:
            raise RuntimeError("the server exited before it listened")
        printed.append(line)
        m = re.search(r"serving on (http://\S+)", line)
        if m:
            base = m.group(1)
            break

    async def drain() -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            if len(printed) < 100:
                printed.append(line.decode())

    asyncio.ensure_future(drain())
    return proc, base


async def held_channel(base: str, token: str, cid: str, *, step: int = 6, settings: dict[str, Any] | None = None) -> None:
    """Make channel ``cid`` on the server at ``base`` (with ``settings``), load a generated
    game (seed 31, two deals) and hold it paused at ``step``: a page of it draws one picture."""
    import aiohttp

    from engine.generate import generate_game

    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as s:
        async with s.post(f"{base}/api/channels", json={"id": cid, **({"settings": settings} if settings else {})}) as r:
            assert r.status == 201, await r.text()
        async with s.put(f"{base}/api/channels/{cid}/game", data=json.dumps(generate_game(31, deals=2))) as r:
            assert r.status == 200, await r.text()
        for op, body in (("pause", {}), ("seek", {"step": step})):
            async with s.post(f"{base}/api/channels/{cid}/control/{op}", json=body) as r:
                assert r.status == 200, await r.text()


async def until(done: Callable[[], bool], most: float) -> None:
    """Until ``done()``, for at most ``most`` seconds, polling every 20 ms: a bench waits for
    what it needs, not a fixed time (what is still missing then shows in its figures)."""
    deadline = time.monotonic() + most
    while not done() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def never_reading_socket(host: str, port: int, path: str, *, rcvbuf: int = 4096) -> socket.socket:
    """A raw TCP socket that speaks the WebSocket handshake, with a small receive buffer,
    and then never reads: what a stuck browser source looks like to the server."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect: sets the window
    s.connect((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    return s


class ProcStat:
    """CPU seconds and RSS of a process, read from Linux's /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def cpu(self) -> float:
        """User + system CPU seconds so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def descendants(pid: int) -> set[int]:
    """Every process under ``pid`` (its children, theirs, ...), read from ``/proc``; empty
    where there is no ``/proc``."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return set()
    children: dict[int, list[int]] = {}
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
            children.setdefault(int(stat[stat.rfind(")") + 2 :].split()[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def chromium_cpu(*, reaped: bool = False) -> float:
    """CPU seconds of every Chromium process under this one (playwright's driver starts the
    browser, the browser its renderers); 0 where there is no ``/proc``.  ``reaped``: with the
    CPU of the processes that ended and were waited for (a closed page's renderer, counted in
    the Chromium process that started it)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.find("(") + 1 : stat.rfind(")")].startswith("chrom"):
            fields = stat[stat.rfind(")") + 2 :].split()
            total += sum(int(f) for f in fields[11 : 15 if reaped else 13]) / tick
    return total
