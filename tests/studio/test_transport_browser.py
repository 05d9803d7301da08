"""The studio's transport as a producer seeks (issue 23 item 4), in the system Chromium
against the real service: a click on deal marker D5 lands on deal 5 (it landed on deal 4:
the marker stood where the slider's value was still deal 4's), and the "go to" box takes a
deal and a trick."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.load import load_game
from tests.studio.test_browser import Studio, until
from tests.support import Server, game

pytestmark = pytest.mark.browser

DOC = game(7, deals=6)
STEPS = load_game(json.dumps(DOC), source="g.egn").timeline.steps


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(tmp_path)
    await srv.start()
    await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(DOC))
    await srv.api("POST", "/api/channels/t1/control/pause")
    yield srv
    await srv.stop()


async def _step(srv: Server) -> int:
    return int((await srv.api("GET", "/api/channels/t1"))["playhead"]["step"])


async def test_a_deal_marker_lands_on_its_deal_and_the_box_on_a_trick(browser: Any, server: Server) -> None:
    s = await Studio.open(browser, server)
    page = s.page
    await page.wait_for_selector("#markers .mark[data-deal='5']")
    # the marker stands over the slider where the slider's value is the deal's first step
    box = await page.locator("#markers .mark[data-deal='5']").bounding_box()
    first5 = next(i for i, st in enumerate(STEPS) if st.deal == 4)
    await page.click("#markers .mark[data-deal='5']")

    async def at(step: int) -> bool:
        return await _step(server) == step

    await until(lambda: at(first5), 5.0)
    assert STEPS[await _step(server)].deal == 4
    await page.wait_for_selector("#markers .mark.here[data-deal='5']")
    # the slider's own value under the marker's left edge is deal 5's too
    scrub = await page.locator("#scrub").bounding_box()
    frac = (box["x"] + 1 - scrub["x"] - 8) / (scrub["width"] - 16)
    assert STEPS[round(frac * (len(STEPS) - 1))].deal == 4
    # the box: deal 3, trick 2 -> the first card of deal 3's second trick
    await page.fill("#seek-to", "D3 T2")
    await page.press("#seek-to", "Enter")
    deal3 = [i for i, st in enumerate(STEPS) if st.deal == 2]
    taken = [i for i in deal3 if STEPS[i].kind.value == "trick_taken"]
    want = next(i for i in deal3 if i > taken[0] and STEPS[i].kind.value == "card")
    await until(lambda: at(want), 5.0)
    # a deal the game does not have is said, and nothing moves
    await page.fill("#seek-to", "D40")
    await page.press("#seek-to", "Enter")
    await page.wait_for_selector("#notice:has-text('No D40 in this game')")
    assert await _step(server) == want
    assert not s.errors
