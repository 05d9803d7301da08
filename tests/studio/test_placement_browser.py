"""A producer adds extras in the studio, in the system Chromium (issue 23 item 7): the
default layout opens with no overlap warning; *+ Event title*, *+ Player intro* and *+ Bidding
table* land in free space inside title-safe (where the server's placement says), still with no
warning; the bidding table brings the analysis extras drawn by default with it; and the
preview page draws the event title where it was placed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from renderer.placement import boxes, overlaps, place_extra
from renderer.view import ExtraType, View
from tests.studio.test_browser import Studio, alpha_at, overlay_page
from tests.support import Server, game, until

pytestmark = pytest.mark.browser


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(tmp_path)
    await srv.start()
    await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(game(3, deals=2)))
    yield srv
    await srv.stop()


async def _preview_view(srv: Server) -> View | None:
    doc = await srv.api("GET", "/api/channels/t1/settings")
    raw = doc["outputs"]["preview"]["view"]
    return None if raw is None else View.model_validate(raw)


async def test_extras_land_in_free_space_and_the_layout_stays_without_warnings(browser: Any, server: Server) -> None:
    s = await Studio.open(browser, server)
    page = s.page
    assert await page.inner_text("#warnings") == ""  # the default layout: no overlap, all inside title-safe
    assert await page.locator("#elements .warn").count() == 0
    expected = {}
    for label, kind in (("+ Event title", ExtraType.EVENT_TITLE), ("+ Player intro", ExtraType.PLAYER_INTRO), ("+ Bidding table", ExtraType.BIDDING_TABLE)):
        before = await _preview_view(server)
        if kind is not ExtraType.BIDDING_TABLE:
            assert before is not None or kind is ExtraType.EVENT_TITLE
            from renderer.settings import default_views

            p = place_extra(before or default_views()["preview"], kind)
            assert p.fits
            expected[kind.value] = (p.x, p.y)
        await page.click(f"#elements button:text-is('{label}')")
        await page.wait_for_selector(f"#elements li[data-id='{kind.value}']")

        async def saved() -> bool:
            v = await _preview_view(server)
            return v is not None and any(e.type is kind for e in v.extras)

        await until(saved, 5.0)
    view = await _preview_view(server)
    assert view is not None
    placed = {e.type.value: (e.x, e.y) for e in view.extras}
    for kind_name, at in expected.items():
        assert placed[kind_name] == at, (kind_name, placed[kind_name], at)
    # the bidding table came with the other analysis extras drawn by default
    assert {"win-bar", "win-graph", "best-play", "play-quality", "bidding-table"} <= set(placed)
    # the analysis extras placed after the others: where the view had no free room left the
    # studio said so, naming what each covers; every other extra covers nothing
    if overlaps(view):  # (said once the studio has the save's answer, which may come after the server has the save)
        await page.wait_for_selector("#notice:has-text('No free space')", timeout=5000)
    said = await page.inner_text("#notice")
    for a, b in overlaps(view):
        assert f"No free space for {a}" in said or f"No free space for {b}" in said, (a, b, said)
        assert {a, b}.isdisjoint({"event-title", "player-intro", "bidding-table"}), (a, b)
    # the preview page draws the event title where it was placed
    program = await overlay_page(browser, server, "preview")
    x, y = expected["event-title"]
    title = next(b for b in boxes(view) if b.type == "event-title")

    async def drawn() -> bool:
        return await alpha_at(program, x + title.w / 2, y + 20) > 200

    await until(drawn, 5.0)
    assert not s.errors and not s.dialogs

