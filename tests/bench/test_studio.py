"""The benches' Chromium CPU reading (``bench studio``, ``bench pages``): the Chromium
processes under this one, read from ``/proc``."""

from __future__ import annotations

from typing import Any

import pytest

from overlay.bench.server import chromium_cpu

pytestmark = pytest.mark.browser


async def test_chromium_cpu_counts_the_browser_started_under_this_process(browser: Any) -> None:
    page = await browser.new_page(viewport={"width": 640, "height": 360})
    before = chromium_cpu()
    assert before > 0  # the worker's Chromium runs under this process (playwright's driver started it)
    # a page drawing for a while: its renderer's CPU shows in the total
    await page.set_content("<canvas id=c width=640 height=360></canvas>")
    await page.evaluate(
        """() => new Promise((done) => { const c = document.getElementById('c').getContext('2d'); const t0 = performance.now();
            const frame = () => { for (let i = 0; i < 200; i++) { c.fillStyle = `hsl(${i},50%,50%)`; c.fillRect(i, i, 300, 200); }
                if (performance.now() - t0 < 400) requestAnimationFrame(frame); else done(); }; frame(); })"""
    )
    assert chromium_cpu() > before
