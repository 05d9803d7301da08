"""Live analysis (``overlay.service.analysis``): a real process pool beside the event loop; the scene
first, the analysis after; stale results dropped; the clean output analysed from public
information only."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any


from engine.analysis import Analyst
from engine.load import load_game
from engine.ruleset import Ruleset
from overlay.service.analysis import AnalysisPool
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from tests.support import AUTH, assert_no_analysis, game, make_channel


async def test_pool_keeps_only_the_newest_request() -> None:
    """Six requests in a row for one output: the first five are cancelled or dropped, the
    last equals the analysis computed in process."""
    states = load_game(json.dumps(game(5, 1)), source="g.egn").timeline.steps
    pool = AnalysisPool()
    try:
        key = ("t1", "program")
        results = await asyncio.gather(*(pool.analyse(key, s, Ruleset(), public=False) for s in states[4:10]))
        assert results[:-1] == [None] * 5
        assert results[-1] == Analyst(Ruleset()).analyse(states[9]).to_json()
        assert pool.dropped == 5
        other = await pool.analyse(("t1", "clean"), states[9], Ruleset(), public=True)
        assert other is not None and other["estimate"] and other["ddTricks"] is None
    finally:
        pool.shutdown()


async def _analysis_of(ws: Any, step: int, timeout: float = 60.0) -> tuple[dict[str, Any], list[str]]:
    """Read a page socket until the analysis of ``step``; returns it and the message types
    seen before it."""
    seen: list[str] = []
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        msg = json.loads((await ws.receive(timeout=max(0.1, end - loop.time()))).data)
        if msg["type"] == "analysis" and msg["step"] == step:
            return msg, seen
        seen.append(f"{msg['type']}:{msg.get('step')}")


async def test_pages_get_the_scene_first_then_the_analysis(client: Any, live_analysis: None) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=doc)
    program = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    clean = await client.ws_connect("/ws/overlay/t1?output=clean")
    step = 12  # a card in the first trick
    await client.post("/api/channels/t1/control/pause", headers=AUTH)  # playing on would supersede it
    r = await client.post(f"/api/channels/t1/control/seek?step={step}", headers=AUTH)
    assert r.status == 200, await r.text()
    full, before = await _analysis_of(program, step)
    assert f"scene:{step}" in before  # the scene did not wait for the analysis
    assert full["analysis"]["ddTricks"] is not None and full["analysis"]["best"]
    assert not full["analysis"]["estimate"]
    public, before = await _analysis_of(clean, step)
    assert f"scene:{step}" in before
    a = public["analysis"]
    assert a["estimate"] and a["ddTricks"] is None and a["best"] is None and a["cards"] is None
    assert a["winProbability"] is not None
    # the game moves on: the newest step's analysis arrives after its scene
    await client.post("/api/channels/t1/control/seek?step=20", headers=AUTH)
    await client.post("/api/channels/t1/control/seek?step=21", headers=AUTH)
    late, before = await _analysis_of(program, 21)
    assert "scene:21" in before and late["analysis"]["step"] == 21
    await program.close()
    await clean.close()


async def test_clean_output_can_get_no_analysis(aiohttp_client: Any, settings: ServerSettings) -> None:
    """The service's switch on for every channel, with nothing for the clean output."""
    client = await aiohttp_client(create_app(replace(settings, analysis=True, analysis_clean="none")))
    doc = game(5, 1)
    await make_channel(client, doc=doc)
    clean = await client.ws_connect("/ws/overlay/t1?output=clean")
    preview = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    # the clean page is read all along (a page that stops reading answers no ping and is
    # dropped on a loaded machine), and nothing it gets may be an analysis
    kinds: list[str] = []

    async def read_clean() -> None:
        async for msg in clean:
            kinds.append(json.loads(msg.data)["type"])

    reader = asyncio.get_running_loop().create_task(read_clean())
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    await client.post("/api/channels/t1/control/seek?step=8", headers=AUTH)
    await _analysis_of(preview, 8)  # the preview's arrived: the clean one would have too
    await asyncio.sleep(0.5)
    reader.cancel()
    assert "scene" in kinds and "analysis" not in kinds, kinds
    await clean.close()
    await preview.close()


async def test_each_service_keeps_its_own_analysis(aiohttp_client: Any, settings: ServerSettings, tmp_path: Any) -> None:
    """Live analysis is the app's, not the process's: two services in one process, one with
    analysis on for every channel and one with it off, each as its settings say; the pool's
    workers stop with their app."""
    from overlay.service.keys import ANALYSIS

    on_app = create_app(replace(settings, analysis=True))
    off_app = create_app(replace(settings, data_dir=tmp_path / "off", analysis=False))
    assert on_app[ANALYSIS] is not off_app[ANALYSIS]
    on, off = await aiohttp_client(on_app), await aiohttp_client(off_app)
    pages = []
    for client in (on, off):  # one after the other: a page is read while it waits
        await make_channel(client, doc=game(5, 1))
        pages.append(await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH))
        await client.post("/api/channels/t1/control/pause", headers=AUTH)
        await client.post("/api/channels/t1/control/seek?step=8", headers=AUTH)
        if client is on:
            await _analysis_of(pages[0], 8)
    await assert_no_analysis(pages[1], quiet=0.5)
    assert on_app[ANALYSIS].pool._executor is not None and off_app[ANALYSIS].pool._executor is None
    for page in pages:
        await page.close()
    await on.close()
    assert on_app[ANALYSIS].pool._executor is None and not on_app[ANALYSIS].tasks
