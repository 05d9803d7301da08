"""``euchre-overlay bench scale``: ``serve --redis`` with 1, 2 and 3 processes on one Redis,
a failover, and (when its module is installed) the Ray batch render.

Everything real: a ``redis-server`` (append-only file fsynced on every write, as the README
recommends) in a temporary folder, ``euchre-overlay serve --redis`` subprocesses, one page
socket per channel on a process that does *not* run the channel (scenes cross Redis), and
one logger per channel.  The loggers and pages are the lean clients of :mod:`.wire` (one
keep-alive connection per logger, pages that read only each frame's head): they share the
two cores with the processes measured.

1. **throughput** (``p{N}_*``): C channels, each logger posting its game's first
   ``--actions`` actions one after the other as fast as they are acknowledged (closed loop:
   C requests in flight).  Every process count does the same work: an action costs more the
   further into the game it lands (the live feed re-reads the game it extends), so a run of
   fixed length would give the faster configuration the dearer actions and understate its
   gain (measured: x1.71 over 8 s runs against x1.87 on equal work).  Loggers post to the channel's owner (``--route owner``, as a load balancer
   with channel affinity would) or to any process (``--route any``: a non-owner forwards).
   Pages sit on a process that does not run their channel (``--pages other``, the hard
   case) or are spread evenly over the processes (``--pages spread``: some on the owner).
   Figures: acknowledged actions/s, p50/p99 from posting an action to the page seeing its
   scene, and the CPU of every service process, of Redis and of the bench client itself (%
   of one core), with the machine's load average: the client shares the cores with them,
   and so does anything else running.  ``*_cpu_ms_per_action`` divides that CPU by the
   actions: the cost that decides where a process or Redis saturates on idle cores.
2. **failover**: three processes; the owner of a channel is killed with SIGKILL while its
   logger posts 20 actions/s to the other processes.  ``failover_s``: from the kill to the
   first scene a page (on another process) receives for an action posted after the kill;
   ``failover_ack_s``: from the kill to that action's acknowledgement.
3. **ray**: the figures of :mod:`overlay.bench.raybench` (``measure(quick)``), if importable.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from ..service.feed import actions_of
from .rediserver import RedisServer, redis_binary
from .server import KINDS, ProcStat, pct, until
from .services import Services, live_channel
from .wire import STEPS, FrameReader, KeepAlive

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve --redis: actions/s and action->page p99 with 1, 2, 3 processes; failover time; Ray render"

TOKEN = "bench-scale-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FAST = {"timing": {k: {"run_time": 0.05, "hold": 0.02, "ease": "out"} for k in KINDS}}
_STEPS = re.compile(r'"steps":(\d+)')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--channels", type=int, default=24, help="channels (one logger and one page each)")
    p.add_argument(
        "--actions", type=int, default=100,
        help="actions each logger posts in a throughput run (the same work for every process count)",
    )
    p.add_argument("--processes", default="1,2,3", help="process counts to measure (comma-separated)")
    p.add_argument("--route", choices=("owner", "any"), default="owner", help="loggers post to the owner, or to any process")
    p.add_argument(
        "--pages", choices=("other", "spread"), default="other",
        help="pages on a process that does not run their channel (the hard case), or spread evenly over all processes",
    )
    p.add_argument("--quick", action="store_true", help="short runs (CI smoke): 6 channels, 30 actions each, the Ray part quick")
    p.add_argument("--no-ray", action="store_true", help="skip the Ray render part")


async def _flush(server: RedisServer) -> None:
    """Forget the previous run's channels (else the new processes would take them over)."""
    from redis.asyncio import Redis

    client = Redis.from_url(server.url)
    try:
        await client.flushall()
    finally:
        await client.aclose()


async def _setup(s: Any, cluster: Services, ids: list[str], doc: dict[str, Any]) -> dict[str, str]:
    """Create the channels through every process in turn; wait until the leases are even."""
    for i, cid in enumerate(ids):
        await live_channel(s, cluster.bases[i % len(cluster.bases)], cid, FAST, doc)
    share = -(-len(ids) // len(cluster.bases))
    deadline = time.monotonic() + 15
    while True:
        owners = await cluster.owners(ids)
        counts = [sum(1 for b in owners.values() if b == base) for base in cluster.bases]
        if len(owners) == len(ids) and max(counts) <= share or time.monotonic() > deadline:
            return owners
        await asyncio.sleep(0.2)


async def _throughput(redis: RedisServer, n: int, args: argparse.Namespace, acts: list[dict[str, Any]], doc: dict[str, Any]) -> dict[str, Any]:
    import aiohttp

    await _flush(redis)
    with tempfile.TemporaryDirectory() as folder:
        cluster = await Services(redis.url, Path(folder), token=TOKEN).start(n)
        ids = [f"n{n}c{i}" for i in range(args.channels)]
        try:
            async with aiohttp.ClientSession(headers=AUTH, connector=aiohttp.TCPConnector(limit=0)) as s:
                owners = await _setup(s, cluster, ids, doc)
                seen: dict[str, list[tuple[int, float]]] = {c: [] for c in ids}
                pages: list[FrameReader] = []
                for i, cid in enumerate(ids):
                    others = [b for b in cluster.bases if b != owners.get(cid)] or cluster.bases
                    base = others[i % len(others)] if args.pages == "other" else cluster.bases[i % n]
                    pages.append(await FrameReader.connect(base, f"/ws/overlay/{cid}?output=preview", headers=AUTH))

                async def reader(cid: str, page: FrameReader) -> None:
                    mine = seen[cid]
                    async for head in page.heads():
                        m = STEPS.search(head)
                        if m is not None:
                            mine.append((int(m.group(1)), time.perf_counter()))

                readers = [asyncio.ensure_future(reader(c, p)) for c, p in zip(ids, pages)]
                await until(lambda: all(seen.values()), 0.5)  # every page had its snapshot
                assert redis.proc is not None
                stats = [ProcStat(p.pid) for p in cluster.procs] + [ProcStat(redis.proc.pid), ProcStat(os.getpid())]
                cpu0 = [st.cpu() for st in stats]
                sent: list[tuple[str, int, float]] = []  # channel, steps after the action, when posted
                errors = 0
                turn = itertools.count()
                # the same actions on every channel, and in every run whatever its processes
                bodies = [json.dumps(a).encode() for a in acts[: args.actions]]

                async def logger(cid: str) -> None:
                    nonlocal errors
                    path = f"/api/channels/{cid}/actions"
                    conns: dict[str, KeepAlive] = {}
                    try:
                        for body in bodies:
                            base = owners.get(cid) if args.route == "owner" else None
                            base = base or cluster.bases[next(turn) % n]
                            conn = conns.get(base) or conns.setdefault(base, KeepAlive(base, headers=AUTH))
                            at = time.perf_counter()
                            status, answer = await conn.request("POST", path, body)
                            m = STEPS.search(answer)
                            if status == 200 and m is not None:
                                sent.append((cid, int(m.group(1)), at))
                            else:
                                errors += 1
                                return
                    finally:
                        for conn in conns.values():
                            await conn.close()

                began = time.perf_counter()
                await asyncio.gather(*(logger(c) for c in ids))
                wall = time.perf_counter() - began
                cpu = [round((st.cpu() - c0) / wall * 100, 1) for st, c0 in zip(stats, cpu0)]
                last = {cid: steps for cid, steps, _ in sent}  # each channel's last action's steps
                await until(lambda: all(max((x for x, _ in seen[c]), default=-1) >= st for c, st in last.items()), 1.5)
                for reading in readers:
                    reading.cancel()
                for page in pages:
                    await page.close()
        finally:
            await cluster.stop()
    latencies = []
    unseen = 0
    for cid, steps, at in sent:
        shown = next((when for st, when in seen[cid] if st >= steps and when >= at), None)
        if shown is None:
            unseen += 1
        else:
            latencies.append((shown - at) * 1000)
    rate = len(sent) / wall
    return {
        f"p{n}_actions_per_s": round(rate, 1),
        f"p{n}_actions": len(sent),
        f"p{n}_seconds": round(wall, 3),
        # CPU per action: what the figures would be on idle cores (a shared machine starves
        # the processes, so actions/s there says more about the neighbours than about us)
        f"p{n}_server_cpu_ms_per_action": round(sum(cpu[:-2]) * 10 / rate, 2) if rate else None,
        f"p{n}_redis_cpu_ms_per_action": round(cpu[-2] * 10 / rate, 3) if rate else None,
        f"p{n}_latency_p50_ms": round(pct(latencies, 50), 1),
        f"p{n}_latency_p99_ms": round(pct(latencies, 99), 1),
        f"p{n}_actions_not_seen": unseen,
        f"p{n}_errors": errors,
        f"p{n}_cpu_per_process_pct": cpu[:-2],
        f"p{n}_redis_cpu_pct": cpu[-2],
        f"p{n}_bench_client_cpu_pct": cpu[-1],
        f"p{n}_load_average": round(os.getloadavg()[0], 1),
    }


async def _failover(redis: RedisServer, acts: list[dict[str, Any]], doc: dict[str, Any]) -> dict[str, Any]:
    import aiohttp

    await _flush(redis)
    with tempfile.TemporaryDirectory() as folder:
        cluster = await Services(redis.url, Path(folder), token=TOKEN).start(3)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as s:
                owners = await _setup(s, cluster, ["fo"], doc)
                owner = owners["fo"]
                others = [b for b in cluster.bases if b != owner]
                ws = await s.ws_connect(f"{others[0]}/ws/overlay/fo?output=preview")
                seen: list[tuple[int, float]] = []

                async def reader() -> None:
                    async for msg in ws:
                        if msg.type == aiohttp.WSMsgType.TEXT:
                            m = _STEPS.search(msg.data[:400])
                            if m is not None:
                                seen.append((int(m.group(1)), time.perf_counter()))

                task = asyncio.ensure_future(reader())
                for a in acts[:20]:
                    async with s.post(f"{others[1]}/api/channels/fo/actions", json=a) as r:
                        assert r.status == 200, await r.text()
                    await asyncio.sleep(0.05)
                killed = time.perf_counter()
                await cluster.kill9(owner)
                first_ack = None
                steps_after = None
                for a in acts[20:80]:
                    at = time.perf_counter()
                    async with s.post(f"{others[1]}/api/channels/fo/actions", json=a) as r:
                        if r.status == 200 and first_ack is None:
                            first_ack, steps_after = time.perf_counter(), (await r.json())["steps"]
                    await asyncio.sleep(max(0.0, 0.05 - (time.perf_counter() - at)))
                await until(lambda: steps_after is not None and any(st >= steps_after and t >= killed for st, t in seen), 1.0)
                task.cancel()
                await ws.close()
        finally:
            await cluster.stop()
    shown = next((t for st, t in seen if steps_after is not None and st >= steps_after and t >= killed), None)
    return {
        "failover_s": None if shown is None else round(shown - killed, 3),
        "failover_ack_s": None if first_ack is None else round(first_ack - killed, 3),
    }


def _ray(quick: bool) -> dict[str, Any]:
    import importlib

    try:  # written by another part of the project; measured only where it is installed
        raybench = importlib.import_module(f"{__package__}.raybench")
    except ImportError as exc:
        return {"ray": f"not measured ({exc})"}
    figures: dict[str, Any] = raybench.measure(quick)
    return {f"ray_{k}": v for k, v in figures.items()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from engine.generate import generate_game

    if args.quick:
        args.channels, args.actions = min(args.channels, 6), min(args.actions, 30)
    doc = generate_game(44, deals=40)
    acts = actions_of(doc)
    if not 1 <= args.actions <= len(acts):
        raise SystemExit(f"bench scale: --actions must be 1 to {len(acts)} (the bench game's actions), not {args.actions}")
    if redis_binary() is None:
        raise SystemExit("bench scale needs redis-server (Debian package redis-server; scripts/bootstrap installs it)")
    counts = [int(x) for x in args.processes.split(",") if x.strip()]

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {"channels": args.channels, "actions_per_channel": args.actions, "route": args.route, "pages": args.pages}
        with tempfile.TemporaryDirectory() as folder:
            redis = RedisServer(Path(folder) / "redis").start()
            try:
                for n in counts:
                    out.update(await _throughput(redis, n, args, acts, doc))
                if 1 in counts and 2 in counts and out["p1_actions_per_s"]:
                    out["speedup_1_to_2"] = round(out["p2_actions_per_s"] / out["p1_actions_per_s"], 2)
                out.update(await _failover(redis, acts, doc))
            finally:
                redis.stop()
        if not args.no_ray:
            out.update(_ray(args.quick))
        return out

    return asyncio.run(main())
