"""``euchre-overlay bench studio``: a studio edit -> the changed pixel on the preview page.

Runs the real server in a subprocess, opens the studio (signed in) and a preview page of the
same channel (``bench=1``: the page fingerprints its canvas after every draw and logs when
its pixels first changed) in the system Chromium.  Each edit is a real studio edit: the N/S
scorebug is selected and nudged one pixel with an arrow key (left and right in turn), which
the studio sends as a merge patch; the latency is from the key press to the first changed
canvas pixels on the preview page (wall clock, same machine).  Then the preview page is
closed, the channel plays, and the CPU Chromium spends on the studio alone (its preview and
program frames drawing the playing channel) is read from ``/proc`` over ``--watch`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from typing import Any

from .server import chromium_cpu, held_channel, pct, start_server

__all__ = ["HELP", "add_arguments", "run"]

HELP = "studio edit (1 px nudge) -> changed pixel on the preview page, p50/p99"

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--edits", type=int, default=100, help="edits timed")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for one edit's pixels")
    p.add_argument("--watch", type=float, default=20.0, help="seconds the studio is watched on the playing channel for its CPU (0: not)")


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp
    from playwright.async_api import async_playwright

    from ..browser.chromium import CHROMIUM_ARGS, chromium_path

    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, TOKEN, timeout=30)
        try:
            await held_channel(base, TOKEN, "st")
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
                preview = await browser.new_page(viewport={"width": 1280, "height": 720})
                await preview.goto(f"{base}/overlay/st?output=preview&bench=1#token={TOKEN}")
                await preview.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnSeq > 0")
                await preview.evaluate("window.euchreOverlay.player.ready")
                studio = await browser.new_page(viewport={"width": 1500, "height": 900})
                await studio.goto(f"{base}/studio")
                await studio.fill("#token", TOKEN)
                await studio.click("#signin button")
                await studio.wait_for_selector("#overlay .box[data-id='ns-score']")
                await studio.click("#overlay .box[data-id='ns-score']")
                latencies: list[float] = []
                missed = 0
                for i in range(args.edits):
                    before = len(await preview.evaluate("window.euchreOverlay.bench()"))
                    t0 = time.time() * 1000
                    await studio.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
                    changed = None
                    deadline = time.monotonic() + args.timeout
                    while changed is None and time.monotonic() < deadline:
                        log = await preview.evaluate("window.euchreOverlay.bench()")
                        changed = next((r["changedAt"] for r in log[before:] if r.get("changedAt")), None)
                        if changed is None:
                            await asyncio.sleep(0.002)
                    if changed is None:
                        missed += 1
                    else:
                        latencies.append(changed - t0)
                    await asyncio.sleep(0.05)  # the studio's save settles before the next edit
                watched: float | None = None
                if args.watch > 0:
                    await preview.close()
                    async with aiohttp.ClientSession(headers=AUTH) as s:
                        async with s.post(f"{base}/api/channels/st/control/play", json={}) as r:
                            assert r.status == 200, await r.text()
                    await asyncio.sleep(2.0)  # the frames take up the play
                    c0, t0 = chromium_cpu(), time.monotonic()
                    await asyncio.sleep(args.watch)
                    watched = (chromium_cpu() - c0) / (time.monotonic() - t0)
                await browser.close()
        finally:
            proc.terminate()
            await proc.wait()
    return {
        "edits": args.edits,
        "missed": missed,
        "edit_to_pixel_p50_ms": round(pct(latencies, 50), 2),
        "edit_to_pixel_p99_ms": round(pct(latencies, 99), 2),
        "edit_to_pixel_max_ms": round(max(latencies), 2) if latencies else float("nan"),
        # Chromium's CPU seconds per second with the studio open on the playing channel
        "studio_watch_cpu_per_s": None if watched is None else round(watched, 3),
        "studio_watch_s": args.watch,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    return asyncio.run(_run(args))
