"""The flags every Chromium launch gets (overlay/browser/chromium.py), in the system Chromium.

Chromium keeps only the last ``--disable-features`` on its command line, and playwright puts
one of its own before ours: ours must repeat all of playwright's, and it must turn off the
address bar's pop-up pages (a renderer process per window that costs more CPU than the
overlay page it opens beside).  Checked in the product's Chromium (``chromium_path()``, what
``capture`` and ``inject`` launch), not in the headless shell the other tests drive their pages
in (it has no address bar).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from overlay.browser.chromium import CHROMIUM_ARGS, DISABLED_FEATURES
from tests.support import chromium_or_skip

pytestmark = pytest.mark.browser


def _disabled_lists(pid: int) -> list[set[str]]:
    """Each ``--disable-features`` on a process's command line, in order."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return [set(a.split("=", 1)[1].split(",")) for a in args if a.startswith("--disable-features=")]


async def test_our_disabled_features_keep_playwrights_and_the_omnibox_popup_is_not_loaded() -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=chromium_or_skip(), args=CHROMIUM_ARGS, headless=True)
        try:
            page = await chromium.new_page()
            await page.goto("about:blank")
            cdp = await chromium.new_browser_cdp_session()
            try:
                processes = (await cdp.send("SystemInfo.getProcessInfo"))["processInfo"]
                targets = (await cdp.send("Target.getTargets", {}))["targetInfos"]
            finally:
                await cdp.detach()
            main = next(p["id"] for p in processes if p["type"] == "browser")
            *before, last = _disabled_lists(main)  # (read while the browser runs)
        finally:
            await chromium.close()
    assert last == set(DISABLED_FEATURES), "the last --disable-features is ours"
    assert before, "playwright passed no --disable-features of its own: this check sees nothing"
    for theirs in before:
        assert theirs <= last, f"playwright disables features ours drops: {sorted(theirs - last)}"
    # no WebUI page of the address bar's pop-up beside the page (nor beside any other window)
    assert any(t["type"] == "page" and t["url"] == "about:blank" for t in targets)
    assert [t["url"] for t in targets if t["url"].startswith("chrome://omnibox-popup")] == []
