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
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from overlay.bench.rediserver import RedisServer, redis_binary
from overlay.bench.server import KINDS
from overlay.bench.services import Services as _Services
from overlay.bench.services import owner_pid

__all__ = ["redis_server", "Services", "services", "Pages", "TOKEN", "AUTH", "FAST", "owner_pid"]

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


class Services(_Services):
    """``serve --redis`` subprocesses sharing one Redis, all with :data:`TOKEN`."""

    def __init__(self, redis_url: str, folder: Path) -> None:
        super().__init__(redis_url, folder, token=TOKEN)


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


async def post_json(session: aiohttp.ClientSession, url: str, body: Any, method: str = "POST", *, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    async with session.request(method, url, data=json.dumps(body), headers=headers or AUTH) as r:
        return r.status, await r.json()


@contextlib.asynccontextmanager
async def services(redis_url: str, folder: Path, n: int, *, extra: tuple[str, ...] = ()) -> AsyncIterator[Services]:
    """``n`` processes for one test, stopped after it (``async with``; ``extra``: more
    ``serve`` options)."""
    s = await Services(redis_url, folder).start(n, extra=extra)
    try:
        yield s
    finally:
        await s.stop()
