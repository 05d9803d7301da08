"""Hardening of the page side (issue 9 items 1, 3, 9): a page that never reads cannot freeze
its channel; each output's state carries only what that output may show; sockets check
``Origin``; the number of page sizes a channel draws is bounded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import WSServerHandshakeError

from overlay.service import clients
from overlay.service.fanout import MAX_SIZES
from overlay.bench.server import never_reading_socket
from tests.support import AUTH, TOKEN, game, make_channel, scene_msg


async def test_a_page_that_never_reads_does_not_hold_up_the_others(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the fix the pump awaited each page in turn: once the stuck page's buffers were
    full, every page of the channel stopped getting scenes.  Now the healthy page gets every
    step it is sent to at once, and the stuck page is dropped after the send timeout."""
    monkeypatch.setattr(clients, "SEND_TIMEOUT", 1.0)
    await make_channel(client, doc=game(7, 3))
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    stuck = never_reading_socket(client.server.host, client.server.port, f"/ws/overlay/t1?output=preview&token={TOKEN}")
    healthy = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    await scene_msg(healthy)
    try:
        for i in range(240):  # ~5 MB of scenes: far more than the stuck socket's buffers hold
            step = 10 + i % 30
            r = await client.post(f"/api/channels/t1/control/seek?step={step}", headers=AUTH)
            assert r.status == 200
            while True:
                msg = await scene_msg(healthy, timeout=2.0)
                if msg["step"] == step:
                    break
        st = await (await client.get("/api/channels/t1/status", headers=AUTH)).json()
        for _ in range(50):
            if len(st["outputs"]["preview"]["pages"]) == 1:
                break
            await asyncio.sleep(0.1)
            st = await (await client.get("/api/channels/t1/status", headers=AUTH)).json()
        assert len(st["outputs"]["preview"]["pages"]) == 1, "the stuck page was not dropped"
    finally:
        stuck.close()
        await healthy.close()


def test_outbox_keeps_only_the_latest_message() -> None:
    """A page that falls behind gets the latest snapshot, not a backlog."""

    class Blocked:
        closed = False

        def __init__(self) -> None:
            self.sent: list[str] = []
            self.gate = asyncio.Event()

        async def send_str(self, text: str) -> None:
            await self.gate.wait()
            self.sent.append(text)

    async def scenario() -> None:
        ws = Blocked()
        box = clients.Outbox(ws, None)  # type: ignore[arg-type]
        for i in range(100):
            box.offer(f"scene {i}")
            await asyncio.sleep(0)
        ws.gate.set()
        for _ in range(20):
            await asyncio.sleep(0)
        await box.stop()
        assert ws.sent == ["scene 0", "scene 99"] and box.replaced == 98

    asyncio.run(scenario())


async def test_clean_state_shows_no_hole_cards(client: Any) -> None:
    await make_channel(client, doc=game(7, 1))
    await client.post("/api/channels/t1/control/seek?step=12", headers=AUTH)
    clean = (await (await client.get("/api/channels/t1/state?output=clean")).json())["state"]
    live = (await (await client.get("/api/channels/t1/state?output=preview", headers=AUTH)).json())["state"]
    assert any(c != "Xx" for hand in live["hands"] for c in hand)
    assert clean["hands"] == [["Xx"] * len(h) for h in live["hands"]]
    assert clean["discard"] is None and clean["annotations"] == [] and clean["problems"] == []
    # what the table shows publicly is still there
    assert clean["trick"] == live["trick"] and clean["upCard"] == live["upCard"] and clean["score"] == live["score"]
    ws = await client.ws_connect("/api/channels/t1/state/ws?output=clean")
    msg = await ws.receive_json(timeout=3)
    assert all(c == "Xx" for hand in msg["state"]["hands"] for c in hand)
    await ws.close()


@pytest.mark.parametrize("path", ["/api/channels/t1/state?output=preview", "/api/channels/t1/state/ws?output=preview"])
async def test_live_state_needs_the_token(client: Any, path: str) -> None:
    await make_channel(client, doc=game(7, 1))
    r = await client.get(path)
    assert r.status == 401
    r = await client.get(path, headers=AUTH)
    assert r.status in (200, 101, 400)  # 400: a plain GET of the socket route (no upgrade)


@pytest.mark.parametrize(
    "origin, allowed",
    [
        (None, True),
        ("SELF", True),
        ("http://absolute", True),  # OBS's browser source with a local file
        ("https://evil.example", False),
        ("null", False),
    ],
)
@pytest.mark.parametrize("path", ["/ws/overlay/t1?output=program", "/api/channels/t1/state/ws?output=clean"])
async def test_sockets_check_origin(client: Any, path: str, origin: str | None, allowed: bool) -> None:
    await make_channel(client, doc=game(7, 1))
    headers = {}
    if origin is not None:
        headers["Origin"] = f"http://{client.server.host}:{client.server.port}" if origin == "SELF" else origin
    if allowed:
        ws = await client.ws_connect(path, headers=headers)
        assert json.loads((await ws.receive(timeout=3)).data)["type"] in ("scene", "state")
        await ws.close()
    else:
        with pytest.raises(WSServerHandshakeError) as err:
            await client.ws_connect(path, headers=headers)
        assert err.value.status == 403


async def test_index_lists_channels_only_with_the_token(client: Any) -> None:
    await make_channel(client, "secret-table")
    assert "secret-table" not in await (await client.get("/")).text()
    assert "secret-table" in await (await client.get("/", headers=AUTH)).text()
    # a browser opened at the server's address: a page that links to the studio (it read the
    # line meant for scripts), naming no channel; the address it came by is escaped
    r = await client.get("/", headers={"Accept": "text/html,application/xhtml+xml", "Host": "<b>x</b>:8765"})
    page = await r.text()
    assert r.content_type == "text/html" and '<a href="/studio"' in page and "secret-table" not in page
    assert "http://&lt;b&gt;x&lt;/b&gt;:8765/overlay/CHANNEL" in page and "<b>" not in page
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]


async def test_page_sizes_are_bounded_per_channel(client: Any) -> None:
    """Pages with the token draw at their own sizes, at most MAX_SIZES with the outputs'."""
    await make_channel(client, doc=game(7, 1))
    pages = [await client.ws_connect(f"/ws/overlay/t1?width={1280 + i}", headers=AUTH) for i in range(MAX_SIZES - 1)]
    with pytest.raises(WSServerHandshakeError) as err:
        await client.ws_connect(f"/ws/overlay/t1?width={1280 + MAX_SIZES}", headers=AUTH)
    assert err.value.status == 400
    same = await client.ws_connect("/ws/overlay/t1?width=1280", headers=AUTH)  # a size already drawn is fine
    for ws in [*pages, same]:
        await ws.close()


async def test_pages_without_the_token_cannot_lock_out_the_obs_page(client: Any) -> None:
    """Issue 22 item 3: before the fix 8 anonymous page sockets at widths 1281..1288 took the
    channel's 8 sizes and the OBS program page at 1920x1080 was refused (400) until they
    left.  Now an anonymous odd size shares the nearest allowed size (the outputs' sizes and
    those of pages with the token): the attackers are drawn at 1920x1080 (their pages scale),
    and the OBS page gets its scene."""
    await make_channel(client, doc=game(7, 1))
    attackers = [await client.ws_connect(f"/ws/overlay/t1?width={1281 + i}&height=720") for i in range(MAX_SIZES)]
    for ws in attackers:
        msg = await scene_msg(ws)
        assert (msg["width"], msg["height"]) == (1920, 1080) and msg["scene"]["w"] == 1920
    obs = await client.ws_connect("/ws/overlay/t1?output=program&width=1920&height=1080")
    msg = await scene_msg(obs)
    assert msg["scene"] is not None and (msg["width"], msg["height"]) == (1920, 1080)
    # a page with the token keeps its own size, and then anonymous pages near it share it
    own = await client.ws_connect("/ws/overlay/t1?width=1300&height=740", headers=AUTH)
    assert (await scene_msg(own))["width"] == 1300
    near = await client.ws_connect("/ws/overlay/t1?width=1302&height=741")
    msg = await scene_msg(near)
    assert (msg["width"], msg["height"]) == (1300, 740)
    st = await (await client.get("/api/channels/t1/status", headers=AUTH)).json()
    sizes = {(p["width"], p["height"]) for p in st["outputs"]["program"]["pages"]}
    assert sizes == {(1920, 1080), (1300, 740)}
    assert sorted(p["asked"] for p in st["outputs"]["program"]["pages"] if p["asked"])[:2] == ["1281x720", "1282x720"]
    for ws in [*attackers, obs, own, near]:
        await ws.close()


async def test_an_anonymous_page_shares_the_nearest_output_size(client: Any) -> None:
    """The outputs' own sizes are always allowed: with the clean output set to 1280x720, an
    anonymous page at 1281x721 is drawn at 1280x720, one at 3000x1700 at 1920x1080."""
    await make_channel(client, doc=game(7, 1))
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    r = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "outputs": {"clean": {"width": 1280, "height": 720}}}, headers=AUTH)
    assert r.status == 200, await r.text()
    for asked, drawn in [((1281, 721), (1280, 720)), ((3000, 1700), (1920, 1080)), ((1280, 720), (1280, 720))]:
        ws = await client.ws_connect(f"/ws/overlay/t1?output=program&width={asked[0]}&height={asked[1]}")
        msg = await scene_msg(ws)
        assert (msg["width"], msg["height"]) == drawn, asked
        await ws.close()


async def test_the_preview_page_needs_the_token(client: Any) -> None:
    """The preview output shows live hole cards (it skips the program's anti-cheat delay): a
    page socket without the token gets nothing of the channel, only an error saying how to
    open it; the token in the hello message (read from the page URL's fragment) admits it."""
    await make_channel(client, doc=game(5, 1))
    ws = await client.ws_connect("/ws/overlay/t1?output=preview")
    await ws.send_json({"type": "hello", "output": "preview"})
    msg = await ws.receive_json(timeout=5)
    assert msg["type"] == "error" and "#token=" in msg["error"]
    await ws.send_json({"type": "hello", "output": "preview", "token": "wrong"})
    assert (await ws.receive_json(timeout=5))["type"] == "error"
    await ws.send_json({"type": "hello", "output": "preview", "token": TOKEN})
    first = await ws.receive_json(timeout=5)
    assert first["type"] == "scene"
    await ws.close()
    # program and clean stay open to anyone (what OBS shows)
    for output in ("program", "clean"):
        open_ws = await client.ws_connect(f"/ws/overlay/t1?output={output}")
        assert (await open_ws.receive_json(timeout=5))["type"] == "scene"
        await open_ws.close()
