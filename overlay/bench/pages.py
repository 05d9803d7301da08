"""``euchre-overlay bench pages``: Chromium's CPU to open one overlay page, draw it, close it.

Every part of the project that drives a browser opens pages: ``capture`` one, the tests some
hundred a run, each in a browser context of its own.  This bench runs the real server in a
subprocess with a channel held at one step, and opens ``--pages`` contexts one after the other,
each with the channel's program page at ``--size``: loaded, drawn (the page's first draw is
in), closed.  The figure is the CPU of every Chromium process over those pages (the closed
pages' renderers included) divided by their number.

It does so twice a round, in alternating launches: with the flags every launch of the project
uses (:data:`overlay.browser.chromium.CHROMIUM_ARGS`) and with the same flags but playwright's
own ``--disable-features`` (what a launch without the project's list turns off): the difference
is what the list saves (Chromium 156's address-bar pop-up pages, a renderer for each window).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from typing import Any

from .server import chromium_cpu, held_channel, start_server

__all__ = ["HELP", "add_arguments", "run"]

HELP = "Chromium CPU per overlay page opened, drawn and closed: the project's flags and playwright's, alternating"

TOKEN = "bench-token"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pages", type=int, default=10, help="pages opened per launch")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each a launch with each set of flags")
    p.add_argument("--size", default="1920x1080", help="the page's size, WxH")


def run(args: argparse.Namespace) -> dict[str, Any]:
    return asyncio.run(_run(args))


async def _pages(pw: Any, flags: list[str], url: str, size: tuple[int, int], pages: int) -> float:
    """Chromium CPU seconds per page over ``pages`` pages, in a browser launched with ``flags``."""
    from ..browser.chromium import chromium_path

    browser = await pw.chromium.launch(executable_path=chromium_path(), args=flags, headless=True)
    try:

        async def one() -> None:
            ctx = await browser.new_context(viewport={"width": size[0], "height": size[1]})
            page = await ctx.new_page()
            await page.goto(url)
            await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnSeq > 0")
            await ctx.close()

        await one()  # the browser's own first-page costs are not a page's
        c0 = chromium_cpu(reaped=True)
        for _ in range(pages):
            await one()
        return (chromium_cpu(reaped=True) - c0) / pages
    finally:
        await browser.close()


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    from ..browser.chromium import CHROMIUM_ARGS

    w, h = (int(v) for v in args.size.lower().split("x"))
    ours = list(CHROMIUM_ARGS)
    theirs = [a for a in CHROMIUM_ARGS if not a.startswith("--disable-features=")]
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, TOKEN, timeout=30)
        try:
            await held_channel(base, TOKEN, "pg", settings={"outputs": {"program": {"width": w, "height": h}}})
            url = f"{base}/overlay/pg?output=program"
            with_list: list[float] = []
            without: list[float] = []
            async with async_playwright() as pw:
                for _ in range(args.rounds):
                    with_list.append(await _pages(pw, ours, url, (w, h), args.pages))
                    without.append(await _pages(pw, theirs, url, (w, h), args.pages))
        finally:
            proc.terminate()
            await proc.wait()
    return {
        "pages": args.pages,
        "rounds": args.rounds,
        # Chromium CPU seconds per page: the project's flags, then playwright's features list
        "page_cpu_s": round(statistics.median(with_list), 3),
        "page_cpu_s_playwright_features": round(statistics.median(without), 3),
        "page_cpu_s_rounds": [round(v, 3) for v in with_list],
        "page_cpu_s_playwright_features_rounds": [round(v, 3) for v in without],
        # per round, the project's flags over playwright's (1.0: no saving)
        "ratio_rounds": [round(a / b, 3) if b > 0 else None for a, b in zip(with_list, without)],
    }
