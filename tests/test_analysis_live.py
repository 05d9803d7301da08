"""Live analysis (``overlay.service.analysis``): a real process pool beside the event loop; the scene
first, the analysis after; stale results dropped; the clean output analysed from public
information only."""

from __future__ import annotations

import asyncio
import json
from typing import Any


from engine.analysis import Analyst
from engine.load import load_game
from engine.ruleset import Ruleset
from overlay.service import analysis
from overlay.service.analysis import AnalysisPool
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


async def test_clean_output_can_get_no_analysis(client: Any, live_analysis: None) -> None:
    analysis.configure(on=True, clean="none")
    doc = game(5, 1)
    await make_channel(client, doc=doc)
    clean = await client.ws_connect("/ws/overlay/t1?output=clean")
    preview = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    await client.post("/api/channels/t1/control/seek?step=8", headers=AUTH)
    await _analysis_of(preview, 8)  # the preview's arrived: the clean one would have too
    await asyncio.sleep(0.2)
    await assert_no_analysis(clean, quiet=0.3)
    await clean.close()
    await preview.close()
