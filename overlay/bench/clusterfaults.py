"""``euchre-overlay bench faults``: the cluster's cases of issue 22 (items 10 and 11), on real
``serve --redis`` processes and a real ``redis-server`` in a temporary folder.
:mod:`overlay.bench.faults` runs them (``--only frozen`` / ``--only outage``).

- **frozen** (item 10): three processes; the owner of a live channel is frozen (SIGSTOP) for
  ``--freeze`` seconds while a logger posts its game through another process at 20 actions a
  second and a page on the third process records every scene's step count.  Figures: the
  longest wait for an acknowledged action across the freeze (the bound is 8 s; before the
  fence it was the request's 30 s timeout), answers after the frozen owner resumes (SIGCONT)
  that came from its stale game (a 409), scenes seen going back a step (its stale pictures),
  acknowledged actions lost, and the resumed process's ``fencedPublishes``.
- **outage** (item 11): two processes; Redis is frozen (SIGSTOP: connections hang, as on a
  dead network) and a process that does not run the channel gets requests that need Redis to
  be answered (the channel's info and state, the channel list, an action): what each answers
  (a 503 with a message, never a 500) and how long it took; then Redis resumes and the next
  action is taken.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from .rediserver import RedisServer
from .server import KINDS
from .services import Services, live_channel

__all__ = ["CASES", "add_arguments", "frozen", "outage"]

TOKEN = "bench-faults-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: a channel's timing that keeps the pictures up with a fast logger
FAST = {"timing": {k: {"run_time": 0.05, "hold": 0.02, "ease": "out"} for k in KINDS}}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--freeze", type=float, default=12.0, help="frozen: seconds the owner stays frozen (SIGSTOP)")
    p.add_argument("--outage", type=int, default=12, help="outage: requests sent while Redis is frozen")


def _game(seed: int) -> dict[str, Any]:
    from engine.generate import generate_game

    return generate_game(seed, deals=3)


def _actions(doc: dict[str, Any]) -> list[dict[str, Any]]:
    from engine.live import actions_of

    return [{k: v for k, v in {**a, "seq": i}.items() if v is not None} for i, a in enumerate(actions_of(doc), 1)]


async def _post(s: Any, base: str, cid: str, action: dict[str, Any]) -> tuple[int, Any, float]:
    import aiohttp

    began = time.monotonic()
    try:
        async with s.post(f"{base}/api/channels/{cid}/actions", json=action, headers=AUTH, timeout=aiohttp.ClientTimeout(total=60)) as r:
            return r.status, await r.json(), time.monotonic() - began
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        return 0, str(exc), time.monotonic() - began


@contextlib.asynccontextmanager
async def _cluster(n: int, cid: str, doc: dict[str, Any]) -> AsyncIterator[tuple[RedisServer, Services, Any]]:
    """A ``redis-server`` and ``n`` ``serve --redis`` processes in a temporary folder, channel
    ``cid`` live with ``doc``'s players, and a session; on the way out every frozen process
    (and Redis) is resumed so that it stops."""
    import aiohttp

    with tempfile.TemporaryDirectory() as tmp:
        redis = RedisServer(Path(tmp) / "redis").start()
        cluster = await Services(redis.url, Path(tmp), token=TOKEN).start(n)
        try:
            async with aiohttp.ClientSession() as s:
                await live_channel(s, cluster.bases[0], cid, FAST, doc, headers=AUTH)
                yield redis, cluster, s
        finally:
            for p in cluster.procs:  # a frozen process would not stop
                if p.returncode is None:
                    os.kill(p.pid, signal.SIGCONT)
            if redis.proc is not None and redis.proc.poll() is None:
                os.kill(redis.proc.pid, signal.SIGCONT)
            await cluster.stop()
            redis.stop()


async def frozen(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    doc = _game(21)
    acts = _actions(doc)
    async with _cluster(3, "fz", doc) as (redis, cluster, s):
        owner = await cluster.owner("fz")
        via, watch = [b for b in cluster.bases if b != owner]
        seen: list[tuple[int, float]] = []
        ws = await s.ws_connect(f"{watch}/ws/overlay/fz?output=preview", headers=AUTH)

        async def read() -> None:
            import re

            steps = re.compile(r'"steps":(\d+)')
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.TEXT and msg.data.startswith('{"type":"scene"'):
                    m = steps.search(msg.data)
                    if m is not None:
                        seen.append((int(m.group(1)), time.monotonic()))

        reader = asyncio.ensure_future(read())
        waits: list[float] = []
        acked: list[int] = []
        statuses: Counter[int] = Counter()
        proc = cluster.procs[cluster.bases.index(owner)]
        third = len(acts) // 3
        froze = resumed = 0.0
        stale_answers = 0
        for i, a in enumerate(acts):
            if i == third:
                os.kill(proc.pid, signal.SIGSTOP)
                froze = time.monotonic()
            if i == 2 * third:
                await asyncio.sleep(max(0.0, froze + args.freeze - time.monotonic()))
                os.kill(proc.pid, signal.SIGCONT)
                resumed = time.monotonic()
            # after the freeze, half the actions go to the process that was frozen
            base = owner if i >= 2 * third and i % 2 else via
            began = time.monotonic()
            while True:
                status, body, _ = await _post(s, base, "fz", a)
                statuses[status] += 1
                if status == 409 and i >= 2 * third:
                    stale_answers += 1
                if status == 200:
                    break
                await asyncio.sleep(0.05)
            waits.append(time.monotonic() - began)
            acked.append(a["seq"])
            await asyncio.sleep(max(0.0, 0.05 - (time.monotonic() - began)))
        await asyncio.sleep(1.0)
        reader.cancel()
        await ws.close()
        async with s.get(f"{via}/api/channels/fz", headers=AUTH) as r:
            info = await r.json()
        async with s.get(f"{owner}/api/status", headers=AUTH) as r:
            status_body = await r.json()
        after = [st for st, t in seen if t >= resumed]
        back = sum(1 for x, y in zip(after, after[1:]) if y < x)
        last_before = max((st for st, t in seen if t < resumed), default=0)
        return {
            "frozen_seconds": round(resumed - froze, 2),
            "frozen_longest_ack_wait_s": round(max(waits[third : 2 * third + 1]), 3),
            "frozen_bound_s": 8.0,
            "frozen_actions": len(acts),
            "frozen_lost": len(acts) - int(info["game"]["seq"]),
            "frozen_stale_409_after_resume": stale_answers,
            "frozen_scenes_going_back_after_resume": back + (1 if after and after[0] < last_before else 0),
            "frozen_fenced_publishes": int(status_body.get("cluster", {}).get("fencedPublishes", 0)),
            "frozen_answers": {str(k): v for k, v in sorted(statuses.items())},
        }


async def outage(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    doc = _game(22)
    acts = _actions(doc)
    async with _cluster(2, "ro", doc) as (redis, cluster, s):
        owner = await cluster.owner("ro")
        other = next(b for b in cluster.bases if b != owner)
        status, body, _ = await _post(s, other, "ro", acts[0])
        assert status == 200, body
        assert redis.proc is not None
        os.kill(redis.proc.pid, signal.SIGSTOP)
        statuses: Counter[int] = Counter()
        waits: list[float] = []
        messages: set[str] = set()
        paths = ["/api/channels/ro", "/api/channels/ro/state?output=program", "/api/channels"]

        async def one(k: int) -> None:
            began = time.monotonic()
            if k % 4 == 3:
                status, body, _ = await _post(s, other, "ro", acts[1])
            else:
                try:
                    async with s.get(f"{other}{paths[k % 4]}", headers=AUTH, timeout=aiohttp.ClientTimeout(total=60)) as r:
                        status, body = r.status, await r.json()
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    status, body = 0, str(exc)
            statuses[status] += 1
            waits.append(time.monotonic() - began)
            if isinstance(body, dict) and status >= 500:
                messages.add(str(body.get("error", ""))[:120])

        try:
            await asyncio.gather(*(one(k) for k in range(args.outage)))
        finally:
            os.kill(redis.proc.pid, signal.SIGCONT)
        began = time.monotonic()
        while True:
            status, body, _ = await _post(s, other, "ro", acts[1])
            if status == 200 or time.monotonic() - began > 30:
                break
            await asyncio.sleep(0.1)
        return {
            "outage_requests": args.outage,
            "outage_answers": {str(k): v for k, v in sorted(statuses.items())},
            "outage_500s": statuses[500],
            "outage_longest_wait_s": round(max(waits), 3),
            "outage_bound_s": 8.0,
            "outage_messages": sorted(messages)[:3],
            "outage_action_after_redis_back": status,
            "outage_back_after_s": round(time.monotonic() - began, 3),
        }


CASES = {"frozen": frozen, "outage": outage}
