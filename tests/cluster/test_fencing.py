"""Cluster faults (issue 22 items 10 and 11), with real ``serve --redis`` processes on a real
``redis-server``:

* **a frozen owner** (SIGSTOP): a request forwarded to it is re-sent to the next owner once
  its lease moves, within the bound (``FORWARD_WAIT``, 8 s), not after the 30 s of a
  request's own timeout; when the frozen process resumes it neither answers for the channel
  it lost (no 409 "expected N" from its stale game) nor publishes its stale scenes (no page
  sees a step go back), and Redis keeps the new owner's game;
* **a Redis outage**: a process that would forward a request answers 503 with a message
  within the bound, never 500, and serves again once Redis is back.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from overlay.bench.rediserver import RedisServer
from overlay.cluster.relay import FORWARD_WAIT
from overlay.service.feed import actions_of
from tests.cluster.test_redis import _owner_and_other
from tests.cluster_support import AUTH, Pages, redis_server, services
from tests.support import game

__all__ = ["redis_server"]

pytestmark = pytest.mark.slow

#: the Redis outage test's bound (serve --forward-wait; FORWARD_WAIT, 8 s, by default)
WAIT = 2.0


async def _post(s: aiohttp.ClientSession, base: str, cid: str, action: dict[str, Any], timeout: float = 40.0) -> tuple[int, Any, float]:
    began = time.monotonic()
    async with s.post(f"{base}/api/channels/{cid}/actions", json=action, headers=AUTH, timeout=aiohttp.ClientTimeout(total=timeout)) as r:
        return r.status, await r.json(), time.monotonic() - began


async def test_a_frozen_owner_is_fenced_and_forwarded_requests_find_the_next_owner(redis_server: RedisServer, tmp_path: Path) -> None:
    doc = game(14, deals=2)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "fz", doc)
        frozen = cluster.procs[cluster.bases.index(owner)]
        pages = Pages(s)
        await pages.open(other, "fz")
        await pages.wait_steps(0)
        third = len(acts) // 3
        for a in acts[:third]:
            status, body, _ = await _post(s, other, "fz", a)
            assert status == 200, body
        await pages.wait_steps(body["steps"])
        os.kill(frozen.pid, signal.SIGSTOP)
        froze = time.monotonic()
        try:
            waits = []
            for a in acts[third : 2 * third]:
                status, body, took = await _post(s, other, "fz", a)
                assert status == 200, body
                waits.append(took)
            assert max(waits) <= FORWARD_WAIT, f"a request forwarded to the frozen owner waited {max(waits):.2f} s"
            assert await cluster.owner("fz") == other
            steps_frozen = body["steps"]
            await pages.wait_steps(steps_frozen)
            await asyncio.sleep(max(0.0, froze + 4.0 - time.monotonic()))  # frozen 4 s at least
        finally:
            os.kill(frozen.pid, signal.SIGCONT)
        resumed = time.monotonic()
        # the resumed process asked at once, for the channel it lost: it answers as a process
        # that does not run it (forwards to the owner), never with its stale game's "expected N"
        status, body, _ = await _post(s, owner, "fz", acts[2 * third])
        assert status == 200 and body["seq"] == 2 * third + 1, body
        for a in acts[2 * third + 1 :]:
            status, body, _ = await _post(s, owner, "fz", a)
            assert status == 200, body
        await asyncio.sleep(1.0)
        await pages.wait_steps(body["steps"])
        # no page saw the resumed process's stale scenes (a step going back)
        for seen in pages.seen:
            after = [st for st, t in seen if t >= resumed]
            assert after and after == sorted(after) and min(after) >= steps_frozen, (steps_frozen, after)
        async with s.get(f"{other}/api/channels/fz", headers=AUTH) as r:
            info = await r.json()
        assert info["game"]["seq"] == len(acts)
        await pages.close()


async def test_a_redis_outage_answers_503_with_a_message_within_the_bound(redis_server: RedisServer, tmp_path: Path) -> None:
    doc = game(15, deals=1)
    acts = actions_of(doc)
    # the bound set to 2 s (serve --forward-wait; 8 s by default): the five requests, sent
    # together, each wait it out
    async with services(redis_server.url, tmp_path, 2, extra=("--forward-wait", str(WAIT))) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "ro", doc)
        status, body, _ = await _post(s, other, "ro", acts[0])
        assert status == 200, body
        redis_server.kill()

        async def get(path: str) -> tuple[str, int, Any, float]:
            began = time.monotonic()
            async with s.get(f"{other}{path}", headers=AUTH, timeout=aiohttp.ClientTimeout(total=40)) as r:
                return path, r.status, await r.json(), time.monotonic() - began

        async def post() -> tuple[str, int, Any, float]:
            return ("POST actions", *await _post(s, other, "ro", acts[1]))

        # all at once: each is held to the bound on its own (one after another took five bounds)
        paths = ("/api/channels/ro", "/api/channels/ro/state?output=program", "/api/channels", "/studio/api/channels")
        answers = await asyncio.gather(*(get(p) for p in paths), post())
        for path, status, body, took in answers:
            assert status == 503, (path, status, body)
            assert "redis" in body["error"].lower(), (path, body)
            assert WAIT - 0.5 <= took <= WAIT + 1.0, (path, took)
        redis_server.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                status, body, _ = await _post(s, other, "ro", acts[1], timeout=10)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                status, body = 0, None
            if status == 200 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        assert status == 200 and body["seq"] == 2, body
