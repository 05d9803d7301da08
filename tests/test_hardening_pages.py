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


async def test_page_sizes_are_bounded_per_channel(client: Any) -> None:
    await make_channel(client, doc=game(7, 1))
    pages = [await client.ws_connect(f"/ws/overlay/t1?width={1280 + i}") for i in range(MAX_SIZES)]
    with pytest.raises(WSServerHandshakeError) as err:
        await client.ws_connect(f"/ws/overlay/t1?width={1280 + MAX_SIZES}")
    assert err.value.status == 400
    same = await client.ws_connect("/ws/overlay/t1?width=1280")  # a size already drawn is fine
    for ws in [*pages, same]:
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
