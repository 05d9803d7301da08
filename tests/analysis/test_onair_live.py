"""Analysis on air, live, in the system Chromium against the real service: a logger's action
brings the page its step scene and then the step's analysis layer; a newer action drops the
older analysis; the clean page draws only the public estimate; the channel's switch and the
studio's forms.  Analysis runs in a real worker process (``overlay/service/analysis.py``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.cards import card_name
from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from overlay.service.feed import actions_of
from tests.support import AUTH, TOKEN, Server, assert_no_analysis, make_channel

#: layers wait for a worker process to start and fit its model (a few seconds, once)
FIRST = 60_000


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """The real service; the analysis pool is its app's, stopped with it."""
    srv = Server(tmp_path)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def analysis_on(srv: Server, cid: str = "t1", *, clean: str = "public") -> None:
    doc = await srv.api("GET", f"/api/channels/{cid}/settings")
    await srv.api("PATCH", f"/api/channels/{cid}/settings", json={"revision": doc["revision"], "analysis": {"enabled": True, "clean": clean}})


async def open_page(browser: Any, srv: Server, output: str) -> tuple[Any, list[str]]:
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(f"{srv.base}/overlay/t1?output={output}&width=1280&height=720#token={TOKEN}")
    await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.connected", timeout=10_000)
    return page, errors


async def layer_of(page: Any, step: int, timeout: float = FIRST) -> dict[str, Any]:
    """Wait until the page draws the analysis layer of ``step``; returns that layer scene."""
    await page.wait_for_function(f"window.euchreOverlay.state.analysisStep === {step}", timeout=timeout)
    layer: dict[str, Any] = await page.evaluate("window.euchreOverlay.player.layer")
    return layer


def texts(scene: dict[str, Any]) -> list[str]:
    return [op[5] for op in scene["ops"] if op[0] == "t"]


@pytest.mark.slow
@pytest.mark.browser
async def test_an_action_brings_the_scene_then_its_analysis_and_a_newer_one_drops_the_older(browser: Any, server: Server) -> None:
    doc = generate_game(12, deals=1)
    empty = {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}
    await server.api("POST", "/api/channels", json={"id": "t1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(empty))
    await analysis_on(server)
    page, errors = await open_page(browser, server, "program")
    actions = actions_of(doc)
    seq = 0

    async def post(action: dict[str, Any]) -> int:
        nonlocal seq
        seq += 1
        ack = await server.api("POST", "/api/channels/t1/actions", json={"seq": seq, **action})
        return int(ack["steps"]) - 1

    # the deal and the first bids, one by one: each step's scene, then its layer
    for action in actions[:3]:
        step = await post(action)
        layer = await layer_of(page, step)
        events = await page.evaluate("window.euchreOverlay.analysisEvents()")
        assert events.index(f"scene:{step}") < events.index(f"layer:{step}"), events
        assert layer["elements"], layer
    a = await page.evaluate("window.euchreOverlay.analysis()")
    assert a["step"] == step and a["analysis"]["calls"] is not None  # the bidding's table came
    assert any(t.startswith("BIDDING") for t in texts(layer))
    # two actions at once: the older step's analysis never lands on the newer step
    older = await post(actions[3])
    newer = await post(actions[4])
    assert newer > older
    await layer_of(page, newer)
    events = await page.evaluate("window.euchreOverlay.analysisEvents()")
    after = events[events.index(f"scene:{newer}") :]
    assert f"layer:{older}" not in after, events
    assert [e for e in after if e.startswith("layer:")] == [f"layer:{newer}"], events
    # and the page dropped the older layer when it left its step
    if f"layer:{older}" in events:
        assert f"drop:{older}" in events, events
    assert errors == []


@pytest.mark.browser
async def test_the_clean_page_draws_only_the_public_estimate(browser: Any, server: Server) -> None:
    doc = generate_game(12, deals=2)
    steps = load_game(json.dumps(doc), source="g.egn").timeline.steps
    await server.api("POST", "/api/channels", json={"id": "t1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(doc))
    await analysis_on(server)
    await server.api("POST", "/api/channels/t1/control/pause")
    clean, errors = await open_page(browser, server, "clean")
    preview, _ = await open_page(browser, server, "preview")
    bid = next(i for i, s in enumerate(steps) if s.kind is StepKind.CALL and s.maker is None and s.to_act is not None)
    cards = [i for i, s in enumerate(steps) if s.kind is StepKind.CARD and s.to_act is not None and s.trick is not None and len(s.trick.cards) == 2]
    # a card step where one play is better than another (where every card is as good, no card is BEST)
    card = None
    for step in cards:
        await server.api("POST", "/api/channels/t1/control/seek", json={"step": step})
        if "BEST" in texts(await layer_of(preview, step)):
            card = step
            break
    assert card is not None
    for step in (bid, card):
        await server.api("POST", "/api/channels/t1/control/seek", json={"step": step})
        full = await layer_of(preview, step)
        public = await layer_of(clean, step)
        hidden = {card_name(c) for hand in steps[step].hands for c in hand if c.known}
        # the preview (hole cards shown) has the best play or the bidding table: not vacuous
        assert any(t == "BEST" or t.startswith("BIDDING") for t in texts(full)), (step, texts(full))
        assert {e["type"] for e in public["elements"]} == {"win-bar", "win-graph"}
        words = texts(public)
        assert any("EST." in t for t in words), words
        assert not any(t in ("BEST", "BEST PLAY") or t.startswith(("BIDDING", "+", "\u2212")) for t in words), words
        assert not hidden & set(words)
        got = await clean.evaluate("window.euchreOverlay.analysis()")
        a = got["analysis"]
        assert got["output"] == "clean" and a["estimate"] is True
        assert a["ddTricks"] is None and a["ddPoints"] is None and a["best"] is None and a["cards"] is None and a["calls"] is None
    assert errors == []


async def test_analysis_is_off_by_default_and_the_clean_policy_none_sends_nothing(client: Any) -> None:
    doc = generate_game(5, deals=1)
    await make_channel(client, doc=doc)
    settings = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    assert settings["analysis"] == {"enabled": False, "clean": "public"}
    program = await client.ws_connect("/ws/overlay/t1?output=program")
    clean = await client.ws_connect("/ws/overlay/t1?output=clean")
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    await client.post("/api/channels/t1/control/seek?step=6", headers=AUTH)
    r = await client.patch("/api/channels/t1/settings", json={"revision": settings["revision"], "analysis": {"enabled": True, "clean": "none"}}, headers=AUTH)
    assert r.status == 200, await r.text()
    await client.post("/api/channels/t1/control/seek?step=7", headers=AUTH)
    try:
        seen: list[str] = []
        while True:  # the program page gets step 7's analysis (the switch is on)
            msg = json.loads((await program.receive(timeout=60)).data)
            seen.append(f"{msg['type']}:{msg.get('step')}")
            if msg["type"] == "analysis" and msg["step"] == 7:
                assert msg["layer"]["elements"] and msg["graph"]
                break
        assert "analysis:6" not in seen  # nothing before the switch was turned on
        await assert_no_analysis(clean, quiet=0.5)
    finally:
        await program.close()
        await clean.close()


async def test_the_studio_schema_carries_the_elements_and_the_switch(client: Any) -> None:
    await make_channel(client)
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    kinds = set(schema["view"]["$defs"]["ExtraType"]["enum"])
    assert {"win-bar", "win-graph", "best-play", "play-quality", "bidding-table"} <= kinds
    assert {"win-bar", "win-graph", "best-play", "play-quality", "bidding-table"} <= set(schema["sizes"])
    root = schema["settings"]
    assert root["$defs"]["AnalysisSettings"]["properties"]["clean"]["enum"] == ["public", "none"]
    assert "analysis" in schema["timing"]["properties"]


@pytest.mark.browser
async def test_the_studio_adds_the_elements_and_turns_analysis_on(browser: Any, server: Server) -> None:
    await server.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(generate_game(5, deals=1)))
    page = await browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(server.base + "/studio")
    await page.fill("#token", TOKEN)
    await page.click("#signin button")
    await page.wait_for_selector("#overlay .box[data-id]")
    # the first analysis extra brings those drawn by default with it: adding one removes none
    await page.click("#elements button:text-is('+ Win bar')")
    defaults = ("win-bar", "win-graph", "best-play", "play-quality", "bidding-table")
    for kind in defaults:
        await page.wait_for_selector(f"#elements li[data-id='{kind}']")
    assert await page.locator("#elements button:text-is('+ Bidding table')").count() == 0
    # an added element's form is generated from the schema and edits it
    await page.click("#elements li[data-id='win-bar'] .name")
    field = "#panel .field[data-path$='.scale'] input"
    await page.fill(field, "1.5")
    await page.press(field, "Enter")
    # the switch, in the Outputs tab
    await page.click("#tabs button:text-is('Outputs')")
    box = page.locator("#panel .field[data-path='analysis.enabled'] input[type=checkbox]")
    await box.check()
    for _ in range(100):
        doc = await server.api("GET", "/api/channels/t1/settings")
        extras = {e["type"]: e for e in doc["outputs"]["preview"]["view"]["extras"]} if doc["outputs"]["preview"]["view"] else {}
        if doc["analysis"]["enabled"] and extras.get("win-bar", {}).get("scale") == 1.5:
            break
        await asyncio.sleep(0.05)  # polling the server for the studio's saves
    assert doc["analysis"]["enabled"] is True
    assert set(extras) == set(defaults) and extras["win-bar"]["scale"] == 1.5
    assert errors == []
