"""``euchre-overlay bench faults``: the cases of issue 22 items 1-3 and 5-9, each on a real
server process with a figure (``--only NAME`` runs one).

* **store** (item 1): acknowledged writes while other processes open and close the database
  (``token --rotate``, a plain sqlite3 ``select``), then kill -9 and a restart: writes lost;
  and the latency of an acknowledged write with ``--sync full`` against ``--sync normal``,
  two servers side by side, measured in interleaved rounds (the cost of durability).
* **mask** (item 2): every step of generated games on the clean output and on a delayed
  program drawn with the hands face down, analysis on: every message (HTTP state, state
  socket, scene, analysis and its layer) searched for a card not public at its step; and
  what the mask costs per state message.
* **sizes** (item 3): anonymous page sockets at odd widths, then the OBS page: its first
  scene, and the sizes the channel draws.
* **keys** (item 5): a control link of a deleted channel tried on a new channel of the same
  id; the key as stored.
* **follow** (item 6): a followed file swapped for a link to a file outside ``--allow-dir``,
  while the server is down and while it runs: times the outside file was read.
* **uploads** (item 7): a PNG declaring 15000x15000 px, a 3-byte "JPEG", a 4000x4000 PNG:
  the answers, their time and the server's memory; a full disk where a tmpfs can be mounted.
* **caps** (item 8): a theme of 100,000 unknown keys, 100,000 view switches, 7 MB of view
  names: the answer's size and time, and how long the event loop stalled meanwhile (a probe
  request every 5 ms); ``speed`` 5e-324; ``/proc/self/environ``.
* **patch** (item 9): ``{"outputs": {"program": null}}`` on a program with a 30 s delay.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from ..service.feed import actions_of
from .server import ProcStat, pct
from .server import start_server as _start
from .services import empty_game

__all__ = ["CASES", "add_arguments"]

TOKEN = "bench-faults-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

#: another process opening and closing the database (what a sqlite3 shell or a backup does)
OPEN_CLOSE = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('select count(*) from channels').fetchone(); c.close()"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store-rounds", type=int, default=3, help="store: kill -9 rounds of acknowledged writes")
    p.add_argument("--store-writes", type=int, default=8, help="store: acknowledged writes per round (another process opens the database between each)")
    p.add_argument("--latency-writes", type=int, default=200, help="store: acknowledged writes timed per --sync mode")
    p.add_argument("--mask-games", type=int, default=2, help="mask: generated games walked step by step")
    p.add_argument("--attackers", type=int, default=100, help="sizes: anonymous page sockets at odd widths")


async def _server(data: str, *extra: str, env: dict[str, str] | None = None) -> tuple[Any, str]:
    return await _start(data, TOKEN, extra=extra, env=env)


async def _stop(proc: Any, sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    await proc.wait()


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}


# --------------------------------------------------------------------------- item 1


async def _store(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    acked = lost = others = 0
    for _ in range(args.store_rounds):
        with tempfile.TemporaryDirectory() as data:
            db = os.path.join(data, "overlay.sqlite3")
            proc, base = await _server(data)
            made: list[str] = []
            try:
                async with aiohttp.ClientSession(headers=AUTH) as s:
                    for i in range(args.store_writes):
                        async with s.post(f"{base}/api/channels", json={"id": f"c{i}"}) as r:
                            if r.status == 201:
                                made.append(f"c{i}")
                        command = [sys.executable, "-c", OPEN_CLOSE, db]
                        if i % 3 == 1:
                            command = [sys.executable, "-m", "overlay.cli", "token", "--rotate", "--data", data]
                        await asyncio.to_thread(subprocess.run, command, capture_output=True, env=_env(), timeout=120)
                        others += 1
            finally:
                await _stop(proc, signal.SIGKILL)
            proc, base = await _server(data)
            try:
                async with aiohttp.ClientSession(headers=AUTH) as s:
                    async with s.get(f"{base}/api/channels") as r:
                        present = {c["id"] for c in (await r.json())["channels"]}
            finally:
                await _stop(proc)
            acked += len(made)
            lost += len(set(made) - present)
    out: dict[str, Any] = {
        "store_acked_writes": acked,
        "store_other_process_opens": others,
        "store_acked_writes_lost_after_kill9": lost,
    }
    out.update(await _sync_latency(args))
    return out


async def _sync_latency(args: argparse.Namespace) -> dict[str, Any]:
    """Acknowledged-write latency, ``--sync full`` against ``normal``: two servers side by
    side, batches of 20 logger actions sent to one then the other (interleaved, so a busy
    moment of the shared machine hits both)."""
    import aiohttp

    from engine.generate import generate_game

    doc = generate_game(47, deals=40)
    acts = actions_of(doc)
    times: dict[str, list[float]] = {"full": [], "normal": []}
    with tempfile.TemporaryDirectory() as full_dir, tempfile.TemporaryDirectory() as normal_dir:
        servers = {
            "full": await _server(full_dir, "--sync", "full"),
            "normal": await _server(normal_dir, "--sync", "normal"),
        }
        try:
            async with aiohttp.ClientSession(headers=AUTH) as s:
                for _, base in servers.values():
                    async with s.post(f"{base}/api/channels", json={"id": "w"}) as r:
                        assert r.status == 201, await r.text()
                    async with s.put(f"{base}/api/channels/w/game", data=json.dumps(empty_game(doc))) as r:
                        assert r.status == 200, await r.text()
                sent = 0
                n = min(args.latency_writes, len(acts))
                while sent < n:
                    batch = acts[sent : min(n, sent + 20)]
                    for mode, (_, base) in servers.items():
                        for a in batch:
                            t0 = time.perf_counter()
                            async with s.post(f"{base}/api/channels/w/actions", json=a) as r:
                                await r.read()
                                assert r.status == 200, await r.text()
                            times[mode].append((time.perf_counter() - t0) * 1000)
                    sent += len(batch)
        finally:
            for proc, _ in servers.values():
                await _stop(proc)
    full, normal = statistics.median(times["full"]), statistics.median(times["normal"])
    return {
        "store_write_ms_full_p50": round(full, 2),
        "store_write_ms_full_p99": round(pct(times["full"], 99), 2),
        "store_write_ms_normal_p50": round(normal, 2),
        "store_write_ms_normal_p99": round(pct(times["normal"], 99), 2),
        "store_writes_timed_per_mode": len(times["full"]),
    }


# --------------------------------------------------------------------------- item 2

_CARD = re.compile(r"^[9TJQKA][cdhs]$")
_SPRITE = re.compile(r"^f:([^:]+):")


def _cards(value: Any) -> Iterator[str]:
    """Every card a JSON message names: card strings and face sprites (keys included)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _cards(k)
            yield from _cards(v)
    elif isinstance(value, list):
        for v in value:
            yield from _cards(v)
    elif isinstance(value, str):
        if _CARD.match(value):
            yield value
        m = _SPRITE.match(value)
        if m:
            yield m.group(1)


def _public(steps: Any, at: int) -> set[str]:
    """Cards public at step ``at``: the deal's up-card and the cards played in it so far."""
    from engine.cards import card_name
    from engine.state import StepKind

    st = steps[at]
    shown = {"Xx"} | ({card_name(st.up_card)} if st.up_card is not None else set())
    for s in steps[: at + 1]:
        if s.deal == st.deal and s.kind is StepKind.CARD and s.action is not None and s.action.card is not None:
            shown.add(card_name(s.action.card))
    return shown


async def _mask(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game
    from engine.load import load_game
    from renderer.view import Perspective, default_view

    delay = 0.25
    checked = leaks = 0
    first_leak: str | None = None
    played = default_view().model_copy(update={"perspective": Perspective.PLAYED}).model_dump(mode="json")
    settings = {"outputs": {"program": {"delay": delay, "view": played}}, "analysis": {"enabled": True}}
    with tempfile.TemporaryDirectory() as data:
        proc, base = await _server(data)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as s:
                for g in range(args.mask_games):
                    doc = generate_game(60 + g, deals=1)
                    steps = load_game(json.dumps(doc), source="g").timeline.steps
                    cid = f"m{g}"
                    async with s.post(f"{base}/api/channels", json={"id": cid, "settings": settings}) as r:
                        assert r.status == 201, await r.text()
                    async with s.put(f"{base}/api/channels/{cid}/game", data=json.dumps(doc)) as r:
                        assert r.status == 200, await r.text()
                    async with s.post(f"{base}/api/channels/{cid}/control/pause") as r:
                        assert r.status == 200
                    seen: list[dict[str, Any]] = []
                    sockets = []
                    for output in ("clean", "program"):
                        sockets.append(await s.ws_connect(f"{base}/ws/overlay/{cid}?output={output}&width=1280&height=720", headers={}))
                        sockets.append(await s.ws_connect(f"{base}/api/channels/{cid}/state/ws?output={output}", headers={}))

                    async def read(ws: Any) -> None:
                        async for msg in ws:
                            if msg.type == aiohttp.WSMsgType.TEXT:
                                seen.append(json.loads(msg.data))

                    readers = [asyncio.ensure_future(read(ws)) for ws in sockets]
                    for step in range(len(steps)):
                        async with s.post(f"{base}/api/channels/{cid}/control/seek?step={step}") as r:
                            assert r.status == 200
                        await asyncio.sleep(delay + 0.05)
                        for output in ("clean", "program"):
                            async with s.get(f"{base}/api/channels/{cid}/state?output={output}", headers={}) as r:
                                seen.append(await r.json())
                        # the analysis of this step, on both outputs (a worker computes it)
                        for _ in range(200):
                            if sum(1 for m in seen if m.get("type") == "analysis" and m.get("step") == step) >= 2:
                                break
                            await asyncio.sleep(0.02)
                    await asyncio.sleep(0.5)
                    for t in readers:
                        t.cancel()
                    for ws in sockets:
                        await ws.close()
                    for msg in seen:
                        at = msg.get("step")
                        if not isinstance(at, int) or msg.get("output") not in ("clean", "program") or at >= len(steps):
                            continue
                        checked += 1
                        bad = sorted(set(_cards(msg)) - _public(steps, at))
                        if bad:
                            leaks += 1
                            first_leak = first_leak or f"{msg.get('type')} {msg['output']} step {at}: {bad}"
        finally:
            await _stop(proc)
    return {"mask_messages_checked": checked, "mask_messages_with_a_hidden_card": leaks, "mask_first_leak": first_leak, **_mask_cost()}


def _mask_cost() -> dict[str, Any]:
    """Microseconds to build one state's JSON, unmasked and through the clean output's mask."""
    import timeit

    from engine.generate import generate_game
    from engine.load import load_game
    from overlay.service.masking import mask_of
    from renderer.settings import clean_view
    from renderer.view import default_view

    steps = load_game(json.dumps(generate_game(61, deals=2)), source="g").timeline.steps
    view = clean_view(default_view())

    def masked() -> None:
        for st in steps:
            mask = mask_of(view, st)
            assert mask is not None
            mask.json(mask.state(st).to_json())

    def plain() -> None:
        for st in steps:
            st.to_json()

    n = len(steps)
    a = min(timeit.repeat(plain, number=3, repeat=5)) / (3 * n) * 1e6
    b = min(timeit.repeat(masked, number=3, repeat=5)) / (3 * n) * 1e6
    return {"mask_state_json_us_plain": round(a, 1), "mask_state_json_us_masked": round(b, 1)}


# --------------------------------------------------------------------------- item 3


async def _sizes(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game

    with tempfile.TemporaryDirectory() as data:
        proc, base = await _server(data)
        try:
            # no pool limit: each page is a connection of its own, as from as many browsers
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
                async with s.post(f"{base}/api/channels", json={"id": "obs"}, headers=AUTH) as r:
                    assert r.status == 201
                async with s.put(f"{base}/api/channels/obs/game", data=json.dumps(generate_game(5, deals=1)), headers=AUTH) as r:
                    assert r.status == 200
                attackers = []
                refused = 0
                for i in range(args.attackers):
                    try:
                        attackers.append(await s.ws_connect(f"{base}/ws/overlay/obs?width={1281 + i}&height=720"))
                    except aiohttp.WSServerHandshakeError:
                        refused += 1
                t0 = time.perf_counter()
                obs_ms: float | None = None
                try:
                    obs = await s.ws_connect(f"{base}/ws/overlay/obs?output=program&width=1920&height=1080")
                    async for msg in obs:
                        if msg.type == aiohttp.WSMsgType.TEXT and json.loads(msg.data).get("type") == "scene":
                            obs_ms = (time.perf_counter() - t0) * 1000
                            break
                    await obs.close()
                except aiohttp.WSServerHandshakeError:
                    obs_ms = None
                async with s.get(f"{base}/api/channels/obs/status", headers=AUTH) as r:
                    pages = (await r.json())["outputs"]["program"]["pages"]
                sizes = {(p["width"], p["height"]) for p in pages}
                for ws in attackers:
                    await ws.close()
        finally:
            await _stop(proc)
    return {
        "sizes_anonymous_odd_pages": args.attackers,
        "sizes_anonymous_refused": refused,
        "sizes_drawn": len(sizes),
        "sizes_obs_page_got_its_scene": obs_ms is not None,
        "sizes_obs_first_scene_ms": None if obs_ms is None else round(obs_ms, 1),
    }


# --------------------------------------------------------------------------- item 5


async def _keys(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    rounds, refused, clear = 5, 0, 0
    with tempfile.TemporaryDirectory() as data:
        proc, base = await _server(data)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as s:
                for _ in range(rounds):
                    async with s.post(f"{base}/api/channels", json={"id": "ka"}) as r:
                        assert r.status == 201
                    async with s.post(f"{base}/studio/api/channels/ka/control-key") as r:
                        key = (await r.json())["key"]
                    with sqlite3.connect(os.path.join(data, "overlay.sqlite3")) as db:
                        stored = db.execute("SELECT value FROM meta WHERE key = 'control-key:ka'").fetchone()
                    db.close()
                    clear += bool(stored and key in stored[0])
                    async with s.delete(f"{base}/api/channels/ka") as r:
                        assert r.status == 200
                    async with s.post(f"{base}/api/channels", json={"id": "ka"}) as r:
                        assert r.status == 201
                    async with s.get(f"{base}/studio/link/ka/pause?key={key}", headers={}) as r:
                        refused += r.status == 401
                    async with s.delete(f"{base}/api/channels/ka") as r:
                        assert r.status == 200
        finally:
            await _stop(proc)
    return {"keys_rounds": rounds, "keys_old_link_refused_on_a_new_channel": refused, "keys_stored_in_the_clear": clear}


# --------------------------------------------------------------------------- item 6


async def _follow(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game

    reads = 0
    noticed_ms: float | None = None
    with tempfile.TemporaryDirectory() as tmp:
        allowed = Path(tmp, "games")
        allowed.mkdir()
        followed = allowed / "live.egn"
        secret = Path(tmp, "secret.egn")
        outside = generate_game(8, deals=1)
        outside["metadata"]["players"] = ["Outside1", "Outside2", "Outside3", "Outside4"]
        secret.write_text(json.dumps(outside))

        def swap() -> None:
            link = allowed / "swap.tmp"
            link.symlink_to(secret)
            os.replace(link, followed)

        async def outside_read(s: Any, base: str) -> tuple[bool, str | None]:
            async with s.get(f"{base}/api/channels/f/state?output=clean") as r:
                state = await r.text()
            async with s.get(f"{base}/api/channels/f") as r:
                error = (await r.json())["followError"]
            return "Outside1" in state, error

        data = str(Path(tmp, "data"))
        for moment in ("restart", "running"):
            followed.unlink(missing_ok=True)
            followed.write_text(json.dumps(generate_game(7, deals=1)))
            proc, base = await _server(data, "--allow-dir", str(allowed))
            try:
                async with aiohttp.ClientSession(headers=AUTH) as s:
                    if moment == "restart":
                        async with s.post(f"{base}/api/channels", json={"id": "f"}) as r:
                            assert r.status == 201
                        async with s.post(f"{base}/api/channels/f/follow", json={"path": str(followed)}) as r:
                            assert r.status == 200, await r.text()
                        await _stop(proc)
                        swap()
                        proc, base = await _server(data, "--allow-dir", str(allowed))
                        await asyncio.sleep(1.0)
                        read, _ = await outside_read(s, base)
                    else:
                        await asyncio.sleep(1.0)  # the saved follow resumed and watching
                        t0 = time.perf_counter()
                        swap()
                        read = False
                        for _ in range(200):
                            read, error = await outside_read(s, base)
                            if read or (error and "allow-dir" in error):
                                noticed_ms = (time.perf_counter() - t0) * 1000
                                break
                            await asyncio.sleep(0.01)
                    reads += read
            finally:
                await _stop(proc)
    return {"follow_swaps": 2, "follow_outside_file_read": reads, "follow_running_swap_refused_ms": None if noticed_ms is None else round(noticed_ms, 1)}


# --------------------------------------------------------------------------- item 7


def _png(size: tuple[int, int], mode: str = "1") -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new(mode, size).save(buf, "PNG")
    return buf.getvalue()


async def _uploads(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    out: dict[str, Any] = {}
    bomb = _png((15000, 15000))
    cases = {"bomb_15000px": bomb, "jpeg_3_bytes": b"\xff\xd8\xff", "png_4000px": _png((4000, 4000))}
    with tempfile.TemporaryDirectory() as data:
        proc, base = await _server(data)
        try:
            stat = ProcStat(proc.pid)
            rss0 = stat.rss_mb()
            async with aiohttp.ClientSession(headers=AUTH) as s:
                for name, body in cases.items():
                    took = []
                    status = 0
                    for _ in range(5):
                        t0 = time.perf_counter()
                        async with s.post(f"{base}/studio/api/uploads?name={name}", data=body) as r:
                            await r.read()
                            status = r.status
                        took.append((time.perf_counter() - t0) * 1000)
                    out[f"uploads_{name}_status"] = status
                    out[f"uploads_{name}_ms_p50"] = round(statistics.median(took), 1)
            out["uploads_bomb_bytes"] = len(bomb)
            out["uploads_server_rss_growth_mb"] = round(stat.rss_mb() - rss0, 1)
        finally:
            await _stop(proc)
    out["uploads_full_disk_status"] = await _full_disk_upload()
    return out


async def _full_disk_upload() -> int | str:
    """The answer to an upload on a full disk (a 3 MB tmpfs, filled), or why not measured."""
    import aiohttp

    if os.geteuid() != 0:
        return "not measured (mounting a tmpfs needs root)"
    with tempfile.TemporaryDirectory() as tmp:
        fs = Path(tmp, "fs")
        fs.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(fs)], capture_output=True)
        if done.returncode != 0:
            return f"not measured ({done.stderr.decode().strip()[:80]})"
        try:
            proc, base = await _server(str(fs / "data"))
            try:
                filler = fs / "filler"
                with filler.open("wb") as f, contextlib.suppress(OSError):
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                from PIL import Image

                buf = io.BytesIO()
                Image.effect_noise((600, 600), 80).convert("RGB").save(buf, "PNG")
                async with aiohttp.ClientSession(headers=AUTH) as s:
                    async with s.post(f"{base}/studio/api/uploads?name=photo.png", data=buf.getvalue()) as r:
                        return r.status
            finally:
                await _stop(proc)
        finally:
            subprocess.run(["umount", "-l", str(fs)], check=False)


# --------------------------------------------------------------------------- item 8


async def _caps(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from engine.generate import generate_game

    many = 100_000
    bodies: dict[str, Callable[[int], dict[str, Any]]] = {
        "theme_100k_unknown_keys": lambda rev: {"revision": rev, "theme": {f"k{i}": 1 for i in range(many)}},
        "view_switches_100k": lambda rev: {"revision": rev, "viewSwitches": [{"step": -1, "view": ""}] * many},
        "view_name_7mb": lambda rev: {"revision": rev, "views": [{"id": "v", "name": "x" * 7_000_000}]},
    }
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as data:
        proc, base = await _server(data)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as s:
                async with s.post(f"{base}/api/channels", json={"id": "c"}) as r:
                    assert r.status == 201
                async with s.put(f"{base}/api/channels/c/game", data=json.dumps(generate_game(5, deals=1))) as r:
                    assert r.status == 200
                for name, make in bodies.items():
                    async with s.get(f"{base}/api/channels/c/settings") as r:
                        rev = (await r.json())["revision"]
                    body = json.dumps(make(rev)).encode()
                    stall, answer = await _with_probe(s, base, lambda: _send(s, "PATCH", f"{base}/api/channels/c/settings", body))
                    status, size, took = answer
                    out[f"caps_{name}_status"] = status
                    out[f"caps_{name}_answer_bytes"] = size
                    out[f"caps_{name}_ms"] = round(took, 1)
                    out[f"caps_{name}_loop_stall_ms"] = round(stall, 1)
                async with s.post(f"{base}/api/channels/c/control/speed?value=5e-324") as r:
                    out["caps_speed_5e-324_status"] = r.status
                async with s.post(f"{base}/api/channels/c/load", json={"path": "/proc/self/environ"}) as r:
                    out["caps_proc_environ_status"] = r.status
        finally:
            await _stop(proc)
    return out


async def _send(s: Any, method: str, url: str, body: bytes) -> tuple[int, int, float]:
    t0 = time.perf_counter()
    async with s.request(method, url, data=body) as r:
        raw = await r.read()
        return r.status, len(raw), (time.perf_counter() - t0) * 1000


async def _with_probe(s: Any, base: str, request: Callable[[], Awaitable[tuple[int, int, float]]]) -> tuple[float, tuple[int, int, float]]:
    """Run ``request`` while a probe asks for a channel's clean state every 5 ms; returns the
    slowest probe (how long the server's event loop stalled) and the request's answer."""
    done = asyncio.Event()
    slowest = 0.0

    async def probe() -> None:
        nonlocal slowest
        while not done.is_set():
            t0 = time.perf_counter()
            async with s.get(f"{base}/api/channels/c/state?output=clean", headers={}) as r:
                await r.read()
            slowest = max(slowest, (time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.005)

    task = asyncio.ensure_future(probe())
    await asyncio.sleep(0.05)
    try:
        answer = await request()
    finally:
        done.set()
        await task
    return slowest, answer


# --------------------------------------------------------------------------- item 9


async def _patch(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    with tempfile.TemporaryDirectory() as data:
        proc, base = await _server(data)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as s:
                async with s.post(f"{base}/api/channels", json={"id": "p", "settings": {"outputs": {"program": {"delay": 30}}}}) as r:
                    assert r.status == 201
                async with s.get(f"{base}/api/channels/p/settings") as r:
                    rev = (await r.json())["revision"]
                async with s.patch(f"{base}/api/channels/p/settings", json={"revision": rev, "outputs": {"program": None}}) as r:
                    status, error = r.status, (await r.json()).get("error", "")
                async with s.get(f"{base}/api/channels/p/settings") as r:
                    doc = await r.json()
                async with s.put(f"{base}/api/channels/p/settings", json=doc) as r:
                    own_put = r.status
        finally:
            await _stop(proc)
    return {
        "patch_delete_program_status": status,
        "patch_delete_program_names_the_place": "outputs -> program" in error,
        "patch_program_delay_after": doc["outputs"]["program"]["delay"],
        "patch_document_passes_its_own_put": own_put == 200,
    }


CASES: dict[str, Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]] = {
    "store": _store,
    "mask": _mask,
    "sizes": _sizes,
    "keys": _keys,
    "follow": _follow,
    "uploads": _uploads,
    "caps": _caps,
    "patch": _patch,
}
