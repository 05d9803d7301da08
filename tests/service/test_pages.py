"""Overlay pages and the state stream in process (pytest-aiohttp): the page, its socket, delays,
the clean output."""

from __future__ import annotations

import asyncio
from typing import Any

from overlay.service.feed import actions_of
from tests.support import AUTH, empty_game, game, make_channel, scene_msg


async def test_page_socket_snapshot_scenes_and_status(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    ws = await client.ws_connect("/ws/overlay/t1?output=preview&width=1280&height=720", headers=AUTH)
    snap = await scene_msg(ws)
    # players seated, no deal: the pre-show picture (tests/service/test_pages_on_air.py)
    assert snap["snapshot"] and snap["step"] is None and snap["scene"] is not None
    acts = actions_of(doc)
    await client.post("/api/channels/t1/actions", json=acts[0], headers=AUTH)
    msg = await scene_msg(ws)
    assert msg["step"] == 0 and msg["scene"]["w"] == 1280 and msg["scene"]["h"] == 720
    assert msg["rate"] == 1.0 and msg["age"] < 0.2
    await ws.send_json({"type": "drawn", "seq": msg["seq"], "step": 0})
    await ws.send_json({"type": "resync", "reason": "visible"})
    again = await scene_msg(ws)
    assert again["snapshot"] and again["step"] == 0
    st = await (await client.get("/api/channels/t1/status", headers=AUTH)).json()
    page = st["outputs"]["preview"]["pages"][0]
    assert page["lastDrawnStep"] == 0 and page["lagMs"] is not None and page["width"] == 1280
    assert st["outputs"]["program"]["pages"] == []
    await ws.send_str("not json")
    err = await ws.receive_json(timeout=3)
    assert err["type"] == "error"
    await ws.close()
    r = await client.get("/ws/overlay/t1?output=studio")
    assert r.status == 400


async def test_program_delay_runs_behind_preview(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    settings = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    settings["outputs"]["program"]["delay"] = 0.6
    assert (await client.put("/api/channels/t1/settings", json=settings, headers=AUTH)).status == 200
    program = await client.ws_connect("/ws/overlay/t1?output=program")
    preview = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    await scene_msg(program)
    await scene_msg(preview)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    live = await scene_msg(preview)
    t_live = loop.time() - t0
    delayed = await scene_msg(program)
    while delayed["step"] is None:  # older changes reach the delayed output first
        delayed = await scene_msg(program)
    t_delayed = loop.time() - t0
    assert live["step"] == delayed["step"] == 0
    assert t_live < 0.3 and t_delayed >= 0.55
    await program.close()
    await preview.close()


async def test_state_stream(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    ws = await client.ws_connect("/api/channels/t1/state/ws?output=preview", headers=AUTH)
    first = await ws.receive_json(timeout=3)
    assert first["type"] == "state" and first["state"] is None
    await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    nxt = await ws.receive_json(timeout=3)
    assert nxt["step"] == 0 and nxt["state"]["kind"] == "deal_start"
    await ws.close()


async def test_page_html_is_safe_and_sized(client: Any) -> None:
    await make_channel(client, doc=game())
    html = await (await client.get("/overlay/t1?output=clean&width=1280&height=720")).text()
    assert '"output": "clean"' in html and '"width": 1280' in html and "/static/player.js" in html
    assert "overflow: hidden" in html and "background: transparent" in html
    # a query the page cannot use still answers the (empty) player: the problem goes to its console
    for query, needle in [("width=100", "width"), ("height=9999", "height"), ("width=abc", "whole number"), ("output=x", "output")]:
        r = await client.get(f"/overlay/t1?{query}")
        text = await r.text()
        assert r.status == 200 and "/static/player.js" in text and needle in text.split('"problem": ')[1].split('",')[0]


async def test_bench_pages_get_the_server_stage_times(client: Any) -> None:
    doc = game(4, 1)
    await make_channel(client, doc=empty_game(doc))
    html = await (await client.get("/overlay/t1?output=preview&bench=1")).text()
    assert "&trace=1" in html
    plain = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    traced = await client.ws_connect("/ws/overlay/t1?output=preview&trace=1", headers=AUTH)
    await scene_msg(plain)
    await scene_msg(traced)
    r = await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    assert r.status == 200
    a, b = await scene_msg(plain), await scene_msg(traced)
    assert "trace" not in a and a["step"] == b["step"] == 0
    t = b["trace"]
    assert t["received"] <= t["replayed"] <= t["committed"] <= t["woke"] <= t["built"]


def test_clean_output_left_out_of_the_settings_still_hides_hole_cards() -> None:
    """A settings document that names only some outputs: the clean output it leaves out
    shows its own default (hands face down), not the program's (every hand face up)."""
    from renderer.settings import ChannelSettings, OutputSettings, RenderSettings
    from renderer.view import Perspective

    rs = RenderSettings(ChannelSettings(outputs={"program": OutputSettings()}))
    assert rs.view("clean").perspective is Perspective.PLAYED
    assert rs.view("program").perspective is Perspective.ALL


def test_clean_output_hides_hole_cards_and_commentary() -> None:
    from renderer.settings import ChannelSettings, RenderSettings
    from renderer.view import ElementType, Perspective

    rs = RenderSettings(ChannelSettings())
    clean, program = rs.view("clean"), rs.view("program")
    assert clean.perspective is Perspective.PLAYED and program.perspective is Perspective.ALL
    notes = [e for e in clean.elements if e.type is ElementType.ANNOTATIONS]
    assert notes and not any(e.visible for e in notes)
