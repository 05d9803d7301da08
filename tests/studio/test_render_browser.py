"""Render from the studio in the system Chromium (issue 23 item 10): the producer picks a
deal, a size and a codec in the Render tab, watches the progress, downloads the file and it
decodes; the look is exported as one file."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import av
import pytest

from tests.studio.test_browser import Studio
from tests.support import Server, game

pytestmark = pytest.mark.browser


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(tmp_path)
    await srv.start()
    await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(game(9, deals=3)))
    yield srv
    await srv.stop()


@pytest.mark.slow
async def test_the_producer_renders_a_deal_and_downloads_it(browser: Any, server: Server, tmp_path: Path) -> None:
    s = await Studio.open(browser, server)
    page = s.page
    await page.click("#tabs button:text-is('Render')")
    await page.select_option("#render-codec", "vp9")
    await page.fill("#render-deals", "2")
    await page.select_option("#render-fps", "24")
    await page.fill("#render-size", "320x180")  # the form carries the size; small keeps VP9 quick
    await page.fill("#render-from", "0:01")  # a piece of the deal's video: frames 24 to 95
    await page.fill("#render-to", "4")
    await page.click("#render-start")
    await page.wait_for_selector(".renders li[data-status='running'], .renders li[data-status='done']", timeout=30_000)
    button = page.locator(".renders li[data-status='done'] button.download")
    await button.wait_for(timeout=180_000)
    async with page.expect_download() as dl:
        await button.click()
    download = await dl.value
    path = tmp_path / download.suggested_filename
    await download.save_as(path)
    assert path.suffix == ".webm"
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        n = sum(1 for _ in c.decode(video=0))
    assert (stream.width, stream.height) == (320, 180) and n == 72
    jobs = (await server.api("GET", "/studio/api/channels/t1/renders"))["renders"]
    assert jobs[0]["status"] == "done" and jobs[0]["total"] == n and (jobs[0]["from"], jobs[0]["to"]) == ("0:01", "4")
    assert await page.locator(f".renders li[data-render='{jobs[0]['id']}'] .name").inner_text() == "vp9 · deals 2 · 0:01 to 4 · 24 fps · 320x180"
    # the look, as one file
    async with page.expect_download() as dl:
        await page.click("#look-export-file")
    look = json.loads(Path(await (await dl.value).path()).read_text())
    assert look["export"]["channel"] == "t1" and "outputs" in look and "images" in look
    assert [e for e in s.errors if "Failed to load resource" not in e] == []
