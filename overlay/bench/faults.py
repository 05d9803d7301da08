"""``euchre-overlay bench faults``: the live service under faults, on a real server process.

1. **kill9**: a logger posts actions to a server subprocess, which is killed with SIGKILL at
   a random moment, N times; after each restart, every action the server acknowledged must
   be there (the channel's ``seq``), and ``PRAGMA integrity_check`` must say ``ok``.
2. **fanout**: C channels x P healthy pages, plus one page per channel that never reads (a
   raw socket with a 4 KB receive buffer); a logger posts A actions/s per channel.  For each
   action, the time until every healthy page has a scene with that many steps (p50/p99), and
   how many actions a healthy page never saw (lost) or saw out of order (reordered); the
   server's CPU over the run.  The pages and loggers are one client process on the same
   machine: on a loaded machine its own lag is part of the figure.
3. **fuzz**: malformed requests over every route (bad JSON, deep JSON, bad charsets, wrong
   types, huge values, unknown channels, missing token...); counts 5xx answers and checks
   after each refusal that the channel's state did not change.

Issue 22 items 1-3 and 5-9 (store, mask, sizes, keys, follow, uploads, caps, patch) are
cases of :mod:`overlay.bench.hardening`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import sqlite3
import tempfile
import time
from typing import Any

from ..service.feed import actions_of
from .faultcases import CASES as MORE_CASES
from .faultcases import add_arguments as add_more_arguments
from .server import KINDS, ProcStat, never_reading_socket, pct
from .server import start_server as _start
from .services import empty_game, live_channel
from .hardening import CASES as HARDENING_CASES, add_arguments as add_hardening_arguments
from .clusterfaults import CASES as CLUSTER_CASES, add_arguments as add_cluster_arguments

__all__ = ["HELP", "add_arguments", "run", "start_server", "TOKEN"]

HELP = "kill -9 under a live feed; never-reading pages under load; a fuzz of malformed requests"

TOKEN = "bench-faults-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FAST = {"run_time": 0.05, "hold": 0.02, "ease": "out"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kills", type=int, default=8, help="kill -9 rounds")
    p.add_argument("--channels", type=int, default=100, help="channels of the fan-out run")
    p.add_argument("--pages", type=int, default=2, help="healthy pages per channel")
    p.add_argument("--stuck", type=int, default=1, help="never-reading pages per channel")
    p.add_argument("--rate", type=float, default=2.0, help="logger actions per second per channel")
    p.add_argument("--seconds", type=float, default=20.0, help="length of the fan-out run")
    p.add_argument("--requests", type=int, default=10_000, help="malformed requests of the fuzz")
    p.add_argument("--only", choices=("kill9", "fanout", "fuzz", *MORE_CASES, *CLUSTER_CASES, *HARDENING_CASES), default=None, help="run one part only")
    p.add_argument("--sync", choices=("full", "normal"), default="full", help="the server's --sync (SQLite synchronous)")
    add_more_arguments(p)
    add_hardening_arguments(p)
    add_cluster_arguments(p)


async def start_server(data: str, extra: tuple[str, ...] = ()) -> tuple[Any, str]:
    """``euchre-overlay serve`` on ``data`` in a subprocess (its own process: killable)."""
    return await _start(data, TOKEN, extra=extra)


# --------------------------------------------------------------------------- kill -9


async def _kill9(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game

    rng = random.Random(9)
    doc = generate_game(41, deals=30)
    acts = actions_of(doc)
    lost = 0  # acknowledged actions missing after a restart
    acked = 0  # highest seq the server acknowledged
    rounds_ok = 0
    integrity: list[str] = []
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, extra=("--sync", args.sync))
        async with aiohttp.ClientSession(headers=AUTH) as s:
            async with s.post(f"{base}/api/channels", json={"id": "k"}) as r:
                assert r.status == 201, await r.text()
            async with s.put(f"{base}/api/channels/k/game", data=json.dumps(empty_game(doc))) as r:
                assert r.status == 200, await r.text()
        for round_ in range(args.kills + 1):
            async with aiohttp.ClientSession(headers=AUTH) as s:
                async with s.get(f"{base}/api/channels/k") as r:
                    seq = (await r.json())["game"]["seq"]
                lost += max(0, acked - seq)
                rounds_ok += seq >= acked
                if round_ == args.kills:
                    break

                async def feed(start: int) -> None:
                    nonlocal acked
                    for a in acts[start:]:
                        async with s.post(f"{base}/api/channels/k/actions", json=a) as r:
                            if r.status == 200:
                                acked = max(acked, a["seq"])

                task = asyncio.ensure_future(feed(seq))
                await asyncio.sleep(rng.uniform(0.3, 1.5))
                proc.send_signal(signal.SIGKILL)
                await proc.wait()
                with contextlib.suppress(aiohttp.ClientError, asyncio.CancelledError):
                    await task
            with sqlite3.connect(os.path.join(data, "overlay.sqlite3")) as conn:
                integrity.append(conn.execute("PRAGMA integrity_check").fetchone()[0])
            conn.close()
            proc, base = await start_server(data, extra=("--sync", args.sync))
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    return {
        "kill9_rounds": args.kills,
        "kill9_acked_actions": acked,
        "kill9_acked_actions_lost": lost,
        "kill9_restarts_with_every_acked_action": rounds_ok - 1,
        "kill9_integrity_ok": sum(1 for x in integrity if x == "ok"),
    }


# --------------------------------------------------------------------------- fan-out


_STEPS = re.compile(r'\{"type":"scene",[^{]*?"steps":(\d+)')


async def _fanout(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game

    doc = generate_game(43, deals=40)
    acts = actions_of(doc)
    per_channel = int(args.rate * args.seconds) + 1
    settings = {"timing": {k: FAST for k in KINDS}}
    latencies: list[float] = []
    lost = reordered = 0
    stuck: list[socket.socket] = []
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, extra=("--sync", args.sync))
        host, port = re.match(r"http://([^:]+):(\d+)", base).groups()  # type: ignore[union-attr]
        conn = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(headers=AUTH, connector=conn) as s:
            ids = [f"f{i}" for i in range(args.channels)]
            for cid in ids:
                await live_channel(s, base, cid, settings, doc)
            # what each healthy page has seen: steps counts in arrival order, with times
            seen: dict[tuple[str, int], list[tuple[int, float]]] = {}
            pages = []
            for cid in ids:
                for _ in range(args.stuck):
                    stuck.append(never_reading_socket(host, int(port), f"/ws/overlay/{cid}?output=preview&token={TOKEN}"))
                for p in range(args.pages):
                    ws = await s.ws_connect(f"{base}/ws/overlay/{cid}?output=preview", headers=AUTH)
                    pages.append((cid, p, ws))
                    seen[(cid, p)] = []

            async def reader(cid: str, p: int, ws: Any) -> None:
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        continue
                    # the head of a scene message names its step count: no need to parse the
                    # whole display list (the client's own CPU would otherwise be the figure)
                    m = _STEPS.match(msg.data)
                    if m is not None:
                        seen[(cid, p)].append((int(m.group(1)), time.perf_counter()))

            readers = [asyncio.ensure_future(reader(c, p, ws)) for c, p, ws in pages]
            stat = ProcStat(proc.pid)
            cpu0, wall0 = stat.cpu(), time.perf_counter()
            sent: dict[tuple[str, int], tuple[int, float]] = {}  # (channel, seq) -> (steps after it, time sent)

            async def logger(cid: str, offset: float) -> None:
                await asyncio.sleep(offset)
                t0 = time.perf_counter()
                for i, a in enumerate(acts[:per_channel]):
                    await asyncio.sleep(max(0.0, t0 + i / args.rate - time.perf_counter()))
                    at = time.perf_counter()
                    async with s.post(f"{base}/api/channels/{cid}/actions", json=a) as r:
                        if r.status == 200:
                            sent[(cid, a["seq"])] = ((await r.json())["steps"], at)

            await asyncio.gather(*(logger(cid, i / args.channels / args.rate) for i, cid in enumerate(ids)))
            server_cpu = (stat.cpu() - cpu0) / (time.perf_counter() - wall0) * 100
            await asyncio.sleep(2.0)
            for t in readers:
                t.cancel()
            for _, _, ws in pages:
                await ws.close()
        for (cid, _), (steps, at) in sent.items():
            arrivals = []
            for p in range(args.pages):
                got = [t for n, t in seen[(cid, p)] if n >= steps]
                if not got:
                    lost += 1
                else:
                    arrivals.append(got[0])
            if len(arrivals) == args.pages:
                latencies.append((max(arrivals) - at) * 1000)
        for key, events in seen.items():
            counts = [n for n, _ in events]
            reordered += sum(1 for a, b in zip(counts, counts[1:]) if b < a)
        for sock in stuck:
            sock.close()
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    return {
        "fanout_channels": args.channels,
        "fanout_healthy_pages": args.channels * args.pages,
        "fanout_stuck_pages": args.channels * args.stuck,
        "fanout_actions": len(sent),
        "fanout_every_page_p50_ms": round(pct(latencies, 50), 1),
        "fanout_every_page_p99_ms": round(pct(latencies, 99), 1),
        "fanout_server_cpu_percent": round(server_cpu, 1),
        "fanout_sync": args.sync,
        "fanout_lost": lost,
        "fanout_reordered": reordered,
    }


# --------------------------------------------------------------------------- fuzz


def _malformed(rng: random.Random, cid: str) -> tuple[str, str, dict[str, str], bytes]:
    """One malformed request: (method, path, headers, body)."""
    deep = rng.choice(["[", "{\"a\":"]) * rng.randint(100, 3000)
    bodies: list[bytes] = [
        b"{broken",
        deep.encode(),
        b"null",
        b"[]",
        b"\xff\xfe\x00",
        json.dumps({"seq": rng.choice([True, "3", 3.5, -1, 10**30, None]), "kind": "call", "call": "Pass"}).encode(),
        json.dumps({"seq": 10**6, "kind": "card", "card": "Zz"}).encode(),
        json.dumps({"seq": 1, "kind": rng.choice(["nope", "", 5])}).encode(),
        json.dumps({"op": rng.choice(["seek", "speed", "loop", "fly"]), "step": rng.choice([-1, 10**9, "x"])}).encode(),
        json.dumps({"id": rng.choice(["", "../x", "a" * 300, 5])}).encode(),
        json.dumps({"path": rng.choice(["", "/dev/zero", "/proc/self/mem", "/nonexistent/x.egn", "\0"])}).encode(),
        json.dumps({"revision": -5, "outputs": {"program": {"delay": -1}}}).encode(),
        json.dumps({"x": "y" * rng.randint(1000, 200_000)}).encode(),
        os.urandom(rng.randint(1, 2000)),
        b"",
    ]
    routes = [
        ("POST", "/api/channels"),
        ("POST", f"/api/channels/{cid}/actions"),
        ("POST", f"/api/channels/{cid}/control"),
        ("POST", f"/api/channels/{cid}/control/" + rng.choice(["seek", "speed", "loop", "auto", "fly", "play"])),
        ("PUT", f"/api/channels/{cid}/game"),
        ("POST", f"/api/channels/{cid}/game"),
        ("POST", f"/api/channels/{cid}/load"),
        ("POST", f"/api/channels/{cid}/follow"),
        ("PUT", f"/api/channels/{cid}/settings"),
        ("GET", f"/api/channels/{cid}/state?output=" + rng.choice(["nope", "clean", "preview", ""])),
        ("GET", f"/overlay/{cid}?width=" + rng.choice(["-1", "abc", "99999", "1e3"])),
        ("GET", "/api/channels/" + rng.choice(["nope", "%00", "..%2f..", "a" * 500])),
        ("DELETE", "/api/channels/nope"),
        ("GET", "/fonts/" + rng.choice(["nope", "..%2fpasswd"]) + ".ttf"),
        ("GET", "/static/" + rng.choice(["../../etc/passwd", "%2e%2e/x", "nope.js"])),
    ]
    method, path = rng.choice(routes)
    headers = dict(AUTH) if rng.random() < 0.9 else {}
    headers["Content-Type"] = rng.choice(
        ["application/json", "application/json; charset=bogus", "text/plain; charset=latin-1", "application/json; charset=utf-16", "multipart/form-data; boundary=x"]
    )
    return method, path, headers, rng.choice(bodies)


async def _fuzz(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game

    rng = random.Random(10)
    doc = generate_game(45, deals=2)
    counts: dict[str, int] = {}
    server_errors: list[str] = []
    changed = 0
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data)
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{base}/api/channels", json={"id": "z"}, headers=AUTH) as r:
                assert r.status == 201
            async with s.put(f"{base}/api/channels/z/game", data=json.dumps(empty_game(doc)), headers=AUTH) as r:
                assert r.status == 200
            async with s.post(f"{base}/api/channels/z/control/pause", headers=AUTH) as r:
                assert r.status == 200

            async def fingerprint() -> str:
                async with s.get(f"{base}/api/channels/z", headers=AUTH) as r:
                    info = await r.json()
                async with s.get(f"{base}/api/channels/z/settings", headers=AUTH) as r:
                    settings = await r.json()
                ph = info["playhead"]
                return json.dumps([info["game"], info["follow"], settings, ph.get("step"), ph.get("playing")], sort_keys=True)

            before = await fingerprint()
            for _ in range(args.requests):
                method, path, headers, body = _malformed(rng, "z")
                async with s.request(method, base + path, headers=headers, data=body) as r:
                    await r.read()
                    counts[str(r.status // 100) + "xx"] = counts.get(str(r.status // 100) + "xx", 0) + 1
                    if r.status >= 500:
                        server_errors.append(f"{r.status} {method} {path[:80]}")
                    if r.status >= 400:
                        now = await fingerprint()
                        if now != before:
                            changed += 1
                    else:
                        before = await fingerprint()  # an accepted request may change it
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    return {
        "fuzz_requests": args.requests,
        "fuzz_5xx": len(server_errors),
        "fuzz_state_changed_by_a_refusal": changed,
        "fuzz_answers": counts,
        "fuzz_first_5xx": server_errors[:5],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        if args.only in (None, "kill9"):
            out.update(await _kill9(args))
        if args.only in (None, "fanout"):
            out.update(await _fanout(args))
        if args.only in (None, "fuzz"):
            out.update(await _fuzz(args))
        # issue 22 items 4, 14 (overlay/bench/faultcases.py), 10, 11 (clusterfaults) and 1-3, 5-9 (hardening)
        for name, case in {**MORE_CASES, **CLUSTER_CASES, **HARDENING_CASES}.items():
            if args.only in (None, name):
                out.update(await case(args))
        return out

    return asyncio.run(main())
