"""``euchre-overlay bench live``: logger action -> changed pixels, server CPU, channels x pages.

Runs the real server in a subprocess (so its CPU and memory are its own), then:

1. **latency**: a headless system Chromium shows a channel's preview page (``bench=1`` makes
   the page fingerprint its canvas after every draw); the bench posts logger actions one at
   a time and reads, from the page, when the canvas pixels first changed.  Times are wall
   clock on both sides (same machine).  This is "drawn into the canvas"; the compositor shows
   it at the next display frame.  With ``--channels N`` the N-channel scale load (3.) runs
   during this measurement (``latency_load_channels``), as in a real multi-table show.
2. **catch-up** (``lag_*``): a fast online table, one logger action every ``--fast-interval``
   seconds (0.3 s) with the *default* timing (a card step alone is 1.25 s), shown by the same
   headless page.  For every step the feed produced: when the page first drew it, minus when
   its action was sent.  ``lag_lost_states`` counts steps the page never drew.  Also under
   the scale load.
3. **scale**: N channels x M simulated pages (WebSocket clients that answer ``drawn`` like
   the page); server RSS and CPU, and how late the server composed each scene (``age``).
4. **cpu**: K channels looping the demo game at speed 1, one simulated page each; server CPU
   per animating channel.
5. **by deal** (``deal_*``, first, in this process): the engine's push and the service's
   work per logger action at deals 2, 51 and 100 of a long game, in interleaved rounds
   (:mod:`.bydeal`): an action must cost the same at deal 100 as at deal 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ..browser.chromium import CHROMIUM_ARGS, chromium_path
from ..service.feed import actions_of
from .bydeal import DEALS
from .server import KINDS, ProcStat, pct, start_server, until


__all__ = ["HELP", "add_arguments", "run"]

HELP = "logger action -> pixels on the page; server CPU per channel; N channels x M pages"

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FAST = {"run_time": 0.08, "hold": 0.05, "ease": "out"}


#: stages of one logger action, each from one timestamp to the next (wall clock ms; the
#: server's come back in the scene's "trace" for bench pages, the page's from its bench log)
STAGES = [
    ("client_to_server", "sent", "received"),  # HTTP request out, parsed, validated
    ("replay", "received", "replayed"),  # edit the EGN document, engine load + replay
    ("commit", "replayed", "committed"),  # SQLite, Director, playhead
    ("wake", "committed", "woke"),  # until the channel's pump runs
    ("build", "woke", "built"),  # scene build + message JSON
    ("socket", "built", "receivedAt"),  # send, loopback, browser event dispatch
    ("parse", "receivedAt", "parsedAt"),  # JSON.parse in the page
    ("set_scene", "parsedAt", "setAt"),
    ("draw_calls", "setAt", "renderedAt"),  # Canvas2D calls of the first draw
    ("raster", "renderedAt", "rasteredAt"),  # Chromium rasterises the draw (software here)
    ("probe", "rasteredAt", "drawnAt"),  # the bench's own fingerprint of the canvas
    ("to_change", "drawnAt", "changedAt"),  # 0 when the first draw changed the pixels
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", type=int, default=150, help="logger actions timed in the browser")
    p.add_argument("--cpu-channels", type=int, default=10, help="animating channels for the CPU figure")
    p.add_argument("--channels", type=int, default=100, help="channels for the scale run")
    p.add_argument("--pages", type=int, default=2, help="simulated pages per channel in the scale run")
    p.add_argument("--seconds", type=float, default=10.0, help="measuring time of the cpu and scale runs")
    p.add_argument("--fast-actions", type=int, default=90, help="logger actions of the fast table (catch-up run; 0: skip)")
    p.add_argument("--fast-interval", type=float, default=0.3, help="seconds between the fast table's actions")
    p.add_argument("--deal-rounds", type=int, default=7, help="rounds of the per-deal figures (deal_*; 0: skip)")
    p.add_argument("--deals", default=",".join(map(str, DEALS)), help="deals (from 1) the per-deal figures are measured at, comma-separated")
    p.add_argument("--chromium", default=None, help="the Chromium binary (default: the system Chromium, as overlay.browser.chromium finds it)")


async def _start_server(data: str) -> tuple[Any, str]:
    return await start_server(data, TOKEN, timeout=30)


async def _latency(session: Any, base: str, args: argparse.Namespace, browser: Any) -> dict[str, Any]:
    from engine.generate import generate_game

    doc = generate_game(31, deals=12)
    empty = {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}
    settings = {"timing": {k: FAST for k in KINDS}, "outputs": {"preview": {"width": 1280, "height": 720}}}
    async with session.post(f"{base}/api/channels", json={"id": "lat", "settings": settings}) as r:
        assert r.status == 201, await r.text()
    async with session.put(f"{base}/api/channels/lat/game", data=json.dumps(empty)) as r:
        assert r.status == 200, await r.text()
    actions = actions_of(doc)[: args.samples]
    sent: dict[int, float] = {}
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        await page.goto(f"{base}/overlay/lat?output=preview&width=1280&height=720&bench=1#token={TOKEN}")
        await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnSeq > 0")
        await page.evaluate("window.euchreOverlay.player.ready")
        steps = 0
        for seq, action in enumerate(actions, 1):
            t_send = time.time() * 1000
            async with session.post(f"{base}/api/channels/lat/actions", json={"seq": seq, **action}) as r:
                ack = await r.json()
                if r.status != 200:
                    raise RuntimeError(f"action {seq} refused: {ack}")
            sent[steps] = t_send
            new = ack["steps"] - steps
            steps = ack["steps"]
            # let this action's steps finish animating so the next change is the next action's
            await asyncio.sleep(0.06 + new * 0.14)
        log = await page.evaluate("window.euchreOverlay.bench()")
    finally:
        await page.close()
    to_canvas: list[float] = []
    to_message: list[float] = []
    stages: dict[str, list[float]] = {name: [] for name, _, _ in STAGES}
    first_frame_changed = 0
    seen: set[int] = set()
    for rec in log:
        step = rec["step"]
        if step in sent and step not in seen and rec["changedAt"] is not None:
            seen.add(step)
            to_canvas.append(rec["changedAt"] - sent[step])
            to_message.append(rec["receivedAt"] - sent[step])
            first_frame_changed += rec.get("changedFrame") == 0
            marks = {"sent": sent[step], **(rec.get("trace") or {}), **{k: v for k, v in rec.items() if k.endswith("At")}}
            for name, a, b in STAGES:
                if marks.get(a) is not None and marks.get(b) is not None:
                    stages[name].append(marks[b] - marks[a])
    breakdown: dict[str, Any] = {}
    for name, values in stages.items():
        breakdown[f"stage_{name}_p50_ms"] = round(pct(values, 50), 3)
        breakdown[f"stage_{name}_p99_ms"] = round(pct(values, 99), 3)
    return {
        **breakdown,
        "latency_changed_on_first_frame": first_frame_changed,
        "latency_samples": len(to_canvas),
        "latency_pixels_p50_ms": pct(to_canvas, 50),
        "latency_pixels_p99_ms": pct(to_canvas, 99),
        "latency_pixels_max_ms": max(to_canvas) if to_canvas else float("nan"),
        "latency_message_p50_ms": pct(to_message, 50),
        "latency_message_p99_ms": pct(to_message, 99),
        "latency_goal_ms": 1000 / 60,
    }


async def _catch_up(session: Any, base: str, args: argparse.Namespace, browser: Any) -> dict[str, Any]:
    """A fast table with the default timing: lag of the page behind the feed, lost states."""
    from engine.generate import generate_game

    doc = generate_game(47, deals=8)
    empty = {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}
    settings = {"outputs": {"preview": {"width": 1280, "height": 720}}}  # default timing
    async with session.post(f"{base}/api/channels", json={"id": "fast", "settings": settings}) as r:
        assert r.status == 201, await r.text()
    async with session.put(f"{base}/api/channels/fast/game", data=json.dumps(empty)) as r:
        assert r.status == 200, await r.text()
    actions = actions_of(doc)[: args.fast_actions]
    made: dict[int, float] = {}  # step -> wall ms its action was sent
    accepted: dict[int, float] = {}  # step -> wall ms the server's ack came back
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        await page.goto(f"{base}/overlay/fast?output=preview&width=1280&height=720&bench=1#token={TOKEN}")
        await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.connected")
        await page.evaluate("window.euchreOverlay.player.ready")
        steps = 0
        start = time.monotonic()
        for seq, action in enumerate(actions, 1):
            # a fixed cadence (not "sleep after each"): the table does not wait for the server
            await asyncio.sleep(max(0.0, start + (seq - 1) * args.fast_interval - time.monotonic()))
            t_send = time.time() * 1000
            async with session.post(f"{base}/api/channels/fast/actions", json={"seq": seq, **action}) as r:
                ack = await r.json()
                if r.status != 200:
                    raise RuntimeError(f"fast table: action {seq} refused: {ack}")
            t_ack = time.time() * 1000
            for step in range(steps, ack["steps"]):
                made[step] = t_send
                accepted[step] = t_ack
            steps = ack["steps"]
        last_sent = time.time() * 1000
        # wait for the page to reach the newest step (bounded: a page that never gets there
        # shows up as lost states)
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline:
            drawn = await page.evaluate("window.euchreOverlay.state.drawnStep")
            if drawn is not None and drawn >= steps - 1:
                break
            await asyncio.sleep(0.05)
        caught_up_ms = time.time() * 1000 - last_sent
        log = await page.evaluate("window.euchreOverlay.bench()")
    finally:
        await page.close()
    first_drawn: dict[int, float] = {}
    for rec in log:
        at = rec.get("drawnAt") or rec.get("receivedAt")
        if rec["step"] is not None and at is not None and rec["step"] not in first_drawn:
            first_drawn[rec["step"]] = at
    lags = [first_drawn[s] - t for s, t in made.items() if s in first_drawn]
    # from the ack: without the time the action spent reaching the server (a loaded machine)
    after_ack = [first_drawn[s] - t for s, t in accepted.items() if s in first_drawn]
    lost = sorted(s for s in made if s not in first_drawn)
    from engine.load import load_game

    kinds = [st.kind.value for st in load_game(json.dumps(doc), source="fast.egn").timeline.steps]
    lost_kinds: dict[str, int] = {}
    for s in lost:
        k = kinds[s] if s < len(kinds) else "?"
        lost_kinds[k] = lost_kinds.get(k, 0) + 1
    return {
        "lag_lost_kinds": lost_kinds,
        "lag_actions": len(actions),
        "lag_interval_s": args.fast_interval,
        "lag_steps": len(made),
        "lag_p50_ms": pct(lags, 50),
        "lag_p99_ms": pct(lags, 99),
        "lag_max_ms": max(lags) if lags else float("nan"),
        "lag_from_ack_p50_ms": pct(after_ack, 50),
        "lag_from_ack_p99_ms": pct(after_ack, 99),
        "lag_lost_states": len(lost),
        "lag_caught_up_after_last_ms": caught_up_ms,
        "lag_goal_p99_ms": 1500.0,
    }


async def _fake_page(session: Any, url: str, stop: asyncio.Event, ages: list[float], counts: list[int], joined: list[int]) -> None:
    """A page's socket: answers each scene as drawn; ``joined[0]`` counts the pages that had
    their first scene (the snapshot), ``counts[0]`` every scene."""
    first = True
    async with session.ws_connect(url, autoping=True) as ws:
        while not stop.is_set():
            try:
                msg = await asyncio.wait_for(ws.receive(), 0.5)
            except asyncio.TimeoutError:
                continue
            if msg.type.name != "TEXT":
                break
            data = json.loads(msg.data)
            if data.get("type") == "scene":
                counts[0] += 1
                if first:
                    first = False
                    joined[0] += 1
                if not data["snapshot"] and data["playing"]:
                    ages.append(data["age"] * 1000)
                await ws.send_str(json.dumps({"type": "drawn", "seq": data["seq"], "step": data["step"]}))


async def _channels(session: Any, base: str, prefix: str, n: int, demo: bytes) -> list[str]:
    ids = []
    for i in range(n):
        cid = f"{prefix}{i}"
        async with session.post(f"{base}/api/channels", json={"id": cid}) as r:
            assert r.status == 201, await r.text()
        async with session.post(f"{base}/api/channels/{cid}/game", data=demo) as r:
            assert r.status == 200, await r.text()
        async with session.post(f"{base}/api/channels/{cid}/control", json={"op": "loop", "value": True}) as r:
            assert r.status == 200
        async with session.post(f"{base}/api/channels/{cid}/control", json={"op": "seek", "step": (i * 7) % 200}) as r:
            assert r.status == 200
        ids.append(cid)
    return ids


class _Load:
    """M simulated pages on each of the given channels, running until :meth:`stop`."""

    def __init__(self, base: str, ids: list[str], pages: int) -> None:
        self.base, self.ids, self.pages = base, ids, pages
        self.stopped = asyncio.Event()
        self.ages: list[float] = []
        self.counts = [0]
        self.joined = [0]
        self.tasks: list[asyncio.Future[None]] = []
        self.session: Any = None

    async def start(self) -> None:
        import aiohttp

        # preview and clean pages sign in; a socket holds its connection (the default pool of 100
        # left the pages past the hundredth waiting)
        self.session = aiohttp.ClientSession(headers=AUTH, connector=aiohttp.TCPConnector(limit=0))
        ws = self.base.replace("http", "ws")
        self.tasks = [
            asyncio.ensure_future(
                _fake_page(self.session, f"{ws}/ws/overlay/{cid}?output={('program', 'preview', 'clean')[j % 3]}", self.stopped, self.ages, self.counts, self.joined)
            )
            for cid in self.ids
            for j in range(self.pages)
        ]
        # until every page has its snapshot (at most 2 s: the run measures whatever joined)
        await until(lambda: self.joined[0] >= len(self.tasks), 2.0)

    async def measure(self, proc: ProcStat, seconds: float) -> dict[str, Any]:
        self.ages.clear()
        self.counts[0] = 0
        c0, t0 = proc.cpu(), time.monotonic()
        await asyncio.sleep(seconds)
        c1, t1 = proc.cpu(), time.monotonic()
        cpu = (c1 - c0) / (t1 - t0)
        return {
            "cpu": cpu,
            "rss_mb": proc.rss_mb(),
            "scenes_per_s": self.counts[0] / (t1 - t0),
            "joined": self.joined[0],
            "age_p50_ms": pct(self.ages, 50),
            "age_p99_ms": pct(self.ages, 99),
        }

    async def stop(self) -> None:
        self.stopped.set()
        for task in self.tasks:  # not waiting out each page's receive timeout
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.session is not None:
            await self.session.close()


async def _load_run(session: Any, base: str, proc: ProcStat, ids: list[str], pages: int, seconds: float) -> dict[str, Any]:
    load = _Load(base, ids, pages)
    await load.start()
    try:
        return await load.measure(proc, seconds)
    finally:
        await load.stop()


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from ..service.demo import demo_game_bytes

    figures: dict[str, Any] = {"cores": os.cpu_count()}
    if args.deal_rounds > 0:
        from .bydeal import measure as measure_by_deal

        deals = [int(x) for x in args.deals.split(",") if x.strip()]
        if len(deals) < 2 or min(deals) < 1:
            raise SystemExit(f"bench live: --deals needs two or more deals counted from 1, not {args.deals!r}")
        figures.update(measure_by_deal(deals, rounds=args.deal_rounds))
        figures["deal_load_average"] = round(os.getloadavg()[0], 1)
    if not (args.samples > 0 or args.fast_actions > 0 or args.channels > 0 or args.cpu_channels > 0):
        return figures
    with tempfile.TemporaryDirectory() as data:
        server, base = await _start_server(data)
        proc = ProcStat(server.pid)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as session:
                figures["server_rss_idle_mb"] = proc.rss_mb()
                demo, _ = demo_game_bytes()
                load: _Load | None = None
                if args.channels > 0:
                    # the scale load runs through the latency and catch-up runs (issue 10)
                    ids = await _channels(session, base, "n", args.channels, demo)
                    figures["server_rss_loaded_mb"] = proc.rss_mb()
                    load = _Load(base, ids, args.pages)
                    await load.start()
                try:
                    if args.samples > 0 or args.fast_actions > 0:
                        if not args.chromium:
                            args.chromium = chromium_path()  # ChromiumMissing (an OSError) when there is none
                        elif not Path(args.chromium).exists():
                            raise OSError(f"{args.chromium}: no Chromium there for the latency run")
                    figures["latency_load_channels"] = args.channels
                    figures["latency_load_pages"] = args.channels * args.pages
                    if args.samples > 0 or args.fast_actions > 0:
                        from playwright.async_api import async_playwright

                        async with async_playwright() as pw:  # one browser, a page for each run
                            browser = await pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
                            try:
                                if args.samples > 0:
                                    figures.update(await _latency(session, base, args, browser))
                                if args.fast_actions > 0:
                                    figures.update(await _catch_up(session, base, args, browser))
                            finally:
                                await browser.close()
                    if load is not None:
                        run = await load.measure(proc, args.seconds)
                        figures.update(
                            {
                                "scale_channels": args.channels,
                                "scale_pages": args.channels * args.pages,
                                "scale_pages_fed": run["joined"],  # pages that had their snapshot
                                "scale_server_cpu_pct": 100 * run["cpu"],
                                "scale_server_rss_mb": run["rss_mb"],
                                "scale_scenes_per_s": run["scenes_per_s"],
                                "scale_scene_age_p50_ms": run["age_p50_ms"],
                                "scale_scene_age_p99_ms": run["age_p99_ms"],
                            }
                        )
                finally:
                    if load is not None:
                        await load.stop()
                if args.cpu_channels > 0:
                    ids = await _channels(session, base, "cpu", args.cpu_channels, demo)
                    run = await _load_run(session, base, proc, ids, 1, args.seconds)
                    figures["cpu_channels"] = args.cpu_channels
                    figures["server_cpu_per_animating_channel_pct"] = 100 * run["cpu"] / args.cpu_channels
                    figures["server_cpu_ms_per_scene"] = 1000 * run["cpu"] / max(run["scenes_per_s"], 1e-9)
                    for cid in ids:
                        async with session.delete(f"{base}/api/channels/{cid}") as r:
                            assert r.status == 200
        finally:
            server.terminate()
            await server.wait()
    return figures


def run(args: argparse.Namespace) -> dict[str, Any]:
    return asyncio.run(_run(args))


