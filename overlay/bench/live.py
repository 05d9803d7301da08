"""``euchre-overlay bench live``: logger action -> changed pixels, server CPU, channels x pages.

Runs the real server in a subprocess (so its CPU and memory are its own), then:

1. **latency**: a headless system Chromium shows a channel's preview page (``bench=1`` makes
   the page fingerprint its canvas after every draw); the bench posts logger actions one at
   a time and reads, from the page, when the canvas pixels first changed.  Times are wall
   clock on both sides (same machine).  This is "drawn into the canvas"; the compositor shows
   it at the next display frame.
2. **cpu**: K channels looping the demo game at speed 1, one simulated page each; server CPU
   per animating channel.
3. **scale**: N channels x M simulated pages (WebSocket clients that answer ``drawn`` like
   the page); server RSS and CPU, and how late the server composed each scene (``age``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..browser import CHROMIUM_ARGS, chromium_path
from ..feed import actions_of


__all__ = ["HELP", "add_arguments", "run"]

HELP = "logger action -> pixels on the page; server CPU per channel; N channels x M pages"

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FAST = {"run_time": 0.08, "hold": 0.05, "ease": "out"}
KINDS = ("deal_start", "call", "discard", "card", "trick_taken", "deal_scored", "game_over")


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
    p.add_argument("--chromium", default=None, help="the Chromium binary (default: the system Chromium, as overlay.browser finds it)")


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[k]


class _Proc:
    """CPU and RSS of a process from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")


async def _start_server(data: str) -> tuple[Any, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", data, "--token", TOKEN, "--no-demo",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        if not line:
            raise RuntimeError("the server exited before it listened")
        m = re.search(r"serving on (http://\S+)", line)
        if m:
            base = m.group(1)
            break

    async def drain() -> None:
        assert proc.stdout is not None
        while await proc.stdout.readline():
            pass

    asyncio.ensure_future(drain())
    return proc, base


async def _latency(session: Any, base: str, args: argparse.Namespace) -> dict[str, Any]:
    from playwright.async_api import async_playwright

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
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
        page = await browser.new_page(viewport={"width": 1280, "height": 720})
        await page.goto(f"{base}/overlay/lat?output=preview&width=1280&height=720&bench=1")
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
        await browser.close()
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
        breakdown[f"stage_{name}_p50_ms"] = round(_pct(values, 50), 3)
        breakdown[f"stage_{name}_p99_ms"] = round(_pct(values, 99), 3)
    return {
        **breakdown,
        "latency_changed_on_first_frame": first_frame_changed,
        "latency_samples": len(to_canvas),
        "latency_pixels_p50_ms": _pct(to_canvas, 50),
        "latency_pixels_p99_ms": _pct(to_canvas, 99),
        "latency_pixels_max_ms": max(to_canvas) if to_canvas else float("nan"),
        "latency_message_p50_ms": _pct(to_message, 50),
        "latency_message_p99_ms": _pct(to_message, 99),
        "latency_goal_ms": 1000 / 60 + 5,
    }


async def _fake_page(session: Any, url: str, stop: asyncio.Event, ages: list[float], counts: list[int]) -> None:
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


async def _load_run(session: Any, base: str, proc: _Proc, ids: list[str], pages: int, seconds: float) -> dict[str, Any]:
    import aiohttp

    stop = asyncio.Event()
    ages: list[float] = []
    counts = [0]
    page_session = aiohttp.ClientSession()
    tasks = [
        asyncio.ensure_future(_fake_page(page_session, f"{base.replace('http', 'ws')}/ws/overlay/{cid}?output={('program', 'preview', 'clean')[j % 3]}", stop, ages, counts))
        for cid in ids
        for j in range(pages)
    ]
    await asyncio.sleep(2.0)  # connected, snapshots sent
    ages.clear()
    counts[0] = 0
    c0, t0 = proc.cpu(), time.monotonic()
    await asyncio.sleep(seconds)
    c1, t1 = proc.cpu(), time.monotonic()
    rss = proc.rss_mb()
    received = counts[0]
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    await page_session.close()
    cpu = (c1 - c0) / (t1 - t0)
    return {"cpu": cpu, "rss_mb": rss, "scenes_per_s": received / (t1 - t0), "age_p50_ms": _pct(ages, 50), "age_p99_ms": _pct(ages, 99)}


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from ..demo import demo_game_bytes

    figures: dict[str, Any] = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as data:
        server, base = await _start_server(data)
        proc = _Proc(server.pid)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as session:
                figures["server_rss_idle_mb"] = proc.rss_mb()
                if args.samples > 0:
                    if not args.chromium:
                        args.chromium = chromium_path()  # ChromiumMissing (an OSError) when there is none
                    elif not Path(args.chromium).exists():
                        raise OSError(f"{args.chromium}: no Chromium there for the latency run")
                    figures.update(await _latency(session, base, args))
                demo, _ = demo_game_bytes()
                if args.cpu_channels > 0:
                    ids = await _channels(session, base, "cpu", args.cpu_channels, demo)
                    run = await _load_run(session, base, proc, ids, 1, args.seconds)
                    figures["cpu_channels"] = args.cpu_channels
                    figures["server_cpu_per_animating_channel_pct"] = 100 * run["cpu"] / args.cpu_channels
                    figures["server_cpu_ms_per_scene"] = 1000 * run["cpu"] / max(run["scenes_per_s"], 1e-9)
                    for cid in ids:
                        async with session.delete(f"{base}/api/channels/{cid}") as r:
                            assert r.status == 200
                if args.channels > 0:
                    ids = await _channels(session, base, "n", args.channels, demo)
                    figures["server_rss_loaded_mb"] = proc.rss_mb()
                    run = await _load_run(session, base, proc, ids, args.pages, args.seconds)
                    figures.update(
                        {
                            "scale_channels": args.channels,
                            "scale_pages": args.channels * args.pages,
                            "scale_server_cpu_pct": 100 * run["cpu"],
                            "scale_server_rss_mb": run["rss_mb"],
                            "scale_scenes_per_s": run["scenes_per_s"],
                            "scale_scene_age_p50_ms": run["age_p50_ms"],
                            "scale_scene_age_p99_ms": run["age_p99_ms"],
                        }
                    )
        finally:
            server.terminate()
            await server.wait()
    return figures


def run(args: argparse.Namespace) -> dict[str, Any]:
    return asyncio.run(_run(args))


