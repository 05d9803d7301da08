"""What the scale-out tests share: a real ``redis-server`` and real ``serve --redis`` processes.

- ``redis_server``: the Debian package's ``redis-server`` on a free loopback port, its
  append-only file in the test's temporary folder (fsynced on every write, as the README
  recommends).  Skipped, saying why, only when the binary is absent; ``scripts/bootstrap``
  installs it, so CI runs these tests.
- :class:`Services`: ``euchre-overlay serve --redis URL`` subprocesses on their own ports,
  each with its own data folder; :meth:`Services.owner` asks Redis which one runs a channel.
- :class:`Pages`: WebSocket page clients that record every scene's step count and arrival.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from overlay.bench.rediserver import RedisServer, redis_binary
from overlay.bench.server import KINDS, start_server

__all__ = ["redis_server", "Services", "Pages", "TOKEN", "AUTH", "FAST", "owner_pid"]

TOKEN = "cluster-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: a timing that plays every step in a tenth of a second (a feed never waits on playback)
FAST = {"timing": {k: {"run_time": 0.05, "hold": 0.02, "ease": "out"} for k in KINDS}}


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A real redis-server for one test (append-only file in ``tmp_path``)."""
    if redis_binary() is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; scripts/bootstrap installs it)")
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


async def owner_pid(url: str, cid: str) -> int | None:
    """The pid of the process holding ``cid``'s lease (process ids are host:pid:random)."""
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(url)
    try:
        holder = await client.get(f"eo:lease:{cid}")
    finally:
        await client.aclose()
    if holder is None:
        return None
    return int((holder.decode() if isinstance(holder, bytes) else str(holder)).split(":")[1])


class Services:
    """``serve --redis`` subprocesses sharing one Redis."""

    def __init__(self, redis_url: str, folder: Path) -> None:
        self.redis_url = redis_url
        self.folder = folder
        self.procs: list[Any] = []
        self.bases: list[str] = []

    async def start(self, n: int) -> Services:
        started = await asyncio.gather(
            *(start_server(str(self.folder / f"p{len(self.procs) + i}"), TOKEN, extra=("--redis", self.redis_url)) for i in range(n))
        )
        for proc, base in started:
            self.procs.append(proc)
            self.bases.append(base)
        return self

    def base_of(self, pid: int) -> str:
        return next(b for p, b in zip(self.procs, self.bases) if p.pid == pid)

    async def owner(self, cid: str, *, timeout: float = 5.0) -> str:
        """The base URL of the process running ``cid`` (waiting while it changes hands)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = await owner_pid(self.redis_url, cid)
            alive = {p.pid for p in self.procs if p.returncode is None}
            if pid is not None and pid in alive:
                return self.base_of(pid)
            await asyncio.sleep(0.05)
        raise AssertionError(f"no live process holds {cid}'s lease")

    async def kill9(self, base: str) -> None:
        proc = self.procs[self.bases.index(base)]
        proc.send_signal(signal.SIGKILL)
        await proc.wait()

    def alive(self) -> list[str]:
        return [b for p, b in zip(self.procs, self.bases) if p.returncode is None]

    async def stop(self) -> None:
        for proc in self.procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()


_STEPS = re.compile(r'"steps":(\d+)')


class Pages:
    """Page sockets on given processes; each records (steps, arrival time) of every scene."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        self.seen: list[list[tuple[int, float]]] = []
        self.snapshots: list[int] = []  # scenes marked "snapshot" (drawn at once, no animation)
        self.tasks: list[asyncio.Task[None]] = []
        self.sockets: list[Any] = []

    async def open(self, base: str, cid: str, output: str = "preview") -> int:
        ws = await self.session.ws_connect(f"{base}/ws/overlay/{cid}?output={output}", headers=AUTH)
        index = len(self.seen)
        self.seen.append([])
        self.snapshots.append(0)
        self.sockets.append(ws)

        async def read() -> None:
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.TEXT and msg.data.startswith('{"type":"scene"'):
                    m = _STEPS.search(msg.data)
                    self.snapshots[index] += '"snapshot":true' in msg.data[:600]
                    if m is not None:
                        self.seen[index].append((int(m.group(1)), time.monotonic()))

        self.tasks.append(asyncio.ensure_future(read()))
        return index

    async def wait_steps(self, steps: int, *, timeout: float = 10.0) -> None:
        """Until every page has seen a scene with ``steps`` steps."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(s and s[-1][0] >= steps for s in self.seen):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"pages saw {[s[-1][0] if s else None for s in self.seen]} steps, expected {steps}")

    async def close(self) -> None:
        for t in self.tasks:
            t.cancel()
        for ws in self.sockets:
            await ws.close()


async def post_json(session: aiohttp.ClientSession, url: str, body: Any, method: str = "POST") -> tuple[int, Any]:
    async with session.request(method, url, data=json.dumps(body), headers=AUTH) as r:
        return r.status, await r.json()


async def services(redis_url: str, folder: Path, n: int) -> AsyncIterator[Services]:
    """``n`` processes for one test, stopped after it."""
    s = await Services(redis_url, folder).start(n)
    try:
        yield s
    finally:
        await s.stop()
