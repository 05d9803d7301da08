"""Stream Deck / Companion (issue 23 item 6): links only for what exists (each named view,
each deal, each alternative line and the way back), a small state route for button feedback
under the same control key, in process against the real service."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from tests.lines import lined_game
from tests.support import AUTH, game, match_doc


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    c = await aiohttp_client(create_app(settings))
    assert (await c.post("/api/channels", json={"id": "t1"}, headers=AUTH)).status == 201
    return c


async def _put(client: Any, doc: dict[str, Any]) -> None:
    r = await client.put("/api/channels/t1/game", data=json.dumps(doc), headers=AUTH)
    assert r.status == 200, await r.text()


async def _views(client: Any, *names: str) -> None:
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    views = [{**schema["defaults"]["views"]["preview"], "id": f"v{i}", "name": n} for i, n in enumerate(names)]
    r = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "views": views}, headers=AUTH)
    assert r.status == 200, await r.text()


async def _links(client: Any) -> dict[str, str]:
    body = await (await client.post("/studio/api/channels/t1/control-key", headers=AUTH)).json()
    return dict(body["links"])


async def test_links_only_for_what_exists_and_each_one_answers(client: Any) -> None:
    await _put(client, game(3, deals=2))
    await _views(client, "Wide", "Close-up")
    links = await _links(client)
    views = sorted(k for k in links if k.startswith("view"))
    assert views == ["view1 Wide", "view1 Wide (preview)", "view2 Close-up", "view2 Close-up (preview)"]
    assert sorted(k for k in links if k.startswith("seek")) == ["seek deal 1", "seek deal 2"]
    assert "mainline" not in links and not any(k.startswith("line") for k in links)  # a game without lines
    for name, url in links.items():  # every listed link answers (none is a 404)
        r = await client.get(url)
        assert r.status == 200, (name, r.status, await r.text())
    # the state a button shows follows the presses
    key = dict(x.split("=") for x in urlsplit(links["state"]).query.split("&"))["key"]
    await client.get(f"/studio/link/t1/pause?key={key}")
    await client.get(f"/studio/link/t1/view?n=2&key={key}")
    await client.get(f"/studio/link/t1/seek?deal=2&key={key}")
    state = await (await client.get(links["state"])).json()
    assert state["playing"] is False and state["program"] == {"view": 2, "name": "Close-up"} and state["deal"] == 2
    assert state["views"] == 2 and state["game"] == 1 and state["step"] > 0
    assert (await client.get("/studio/link/t1/state?key=wrong")).status == 401


async def test_a_game_with_alternative_lines_lists_each_line_and_the_way_back(client: Any) -> None:
    await _put(client, lined_game())
    links = await _links(client)
    lines = [k for k in links if k.startswith("line ")]
    assert lines and "mainline" in links
    r = await client.get(links[lines[0]])
    assert r.status == 200, await r.text()
    state = await (await client.get(links["state"])).json()
    assert state["line"] is not None
    assert (await client.get(links["mainline"])).status == 200
    assert (await (await client.get(links["state"])).json())["line"] is None


async def test_a_match_lists_each_games_deals(client: Any) -> None:
    await _put(client, match_doc((1, 2)))
    links = await _links(client)
    seeks = [k for k in links if k.startswith("seek")]
    assert seeks and all(" deal " in k for k in seeks) and len({urlsplit(links[k]).query.split("&")[0] for k in seeks}) == 2
    for k in seeks[:3] + seeks[-2:]:
        assert (await client.get(links[k])).status == 200, k


# --------------------------------------------------------------------------- in Chromium


@pytest.mark.browser
async def test_a_stream_deck_press_between_two_edits_is_merged_and_only_the_same_field_asks(browser: Any, tmp_path: Any) -> None:
    """A view key pressed on a Stream Deck changes the program's view: the studio's next
    nudge on the preview saves without a conflict (merged field by field); a key that puts a
    view on the preview itself changes the same field the nudge does, and the studio asks."""
    from renderer.view import default_view
    from tests.studio.test_browser import Studio, _wait_revision
    from tests.support import Server

    srv = Server(tmp_path)
    await srv.start()
    try:
        await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
        await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(game(5, deals=2)))
        base = default_view().model_dump(mode="json")
        wide = json.loads(json.dumps({**base, "id": "wide", "name": "Wide"}))
        for e in wide["elements"]:
            if e["id"] == "ew-score":
                e["y"] += 40  # the named view places the E/W score elsewhere
        doc = await srv.api("GET", "/api/channels/t1/settings")
        await srv.api("PATCH", "/api/channels/t1/settings", json={
            "revision": doc["revision"], "views": [wide], "outputs": {"preview": {"view": base}}})
        key = (await srv.api("POST", "/studio/api/channels/t1/control-key"))["key"]
        s = await Studio.open(browser, srv)
        rev = (await srv.api("GET", "/api/channels/t1/settings"))["revision"]
        import aiohttp

        async with aiohttp.ClientSession() as http:
            async with http.get(f"{srv.base}/studio/link/t1/view?n=1&key={key}") as r:  # program: a Stream Deck key
                assert r.status == 200
        await s.drag("ns-score", 0, 120)
        saved = await _wait_revision(srv, rev + 2)
        ys = {e["id"]: e["y"] for e in saved["outputs"]["preview"]["view"]["elements"]}
        start = next(e.y for e in default_view().elements if e.id == "ns-score")
        assert 100 <= ys["ns-score"] - start <= 140 and saved["outputs"]["program"]["view"]["name"] == "Wide"  # moved (a snap may shift it)
        assert not await s.page.locator("#conflict").is_visible()
        # the same field: a key puts the view on the preview (the E/W score moves), then the
        # studio, not having seen it yet, nudges the E/W score
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{srv.base}/studio/link/t1/view?n=1&output=preview&key={key}") as r:
                assert r.status == 200
        await s.page.locator("#overlay .box[data-id='ew-score']").wait_for()
        await s.drag("ew-score", 0, 120)
        await s.page.locator("#conflict").wait_for(state="visible")
        assert "ew-score" in await s.page.locator("#conflict").text_content()
        assert [e for e in s.errors if "409 (Conflict)" not in e] == []  # the browser logs each refused save
    finally:
        await srv.stop()
