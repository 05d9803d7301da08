"""Channels in process (pytest-aiohttp): create, list, delete; restart, the demo, shutdown."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSCloseCode, WSMsgType

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service.feed import actions_of
from tests.support import AUTH, empty_game, game, make_channel, scene_msg
from tests.support import TOKEN as TOKEN_VALUE


async def test_channel_create_list_get_delete(client: Any) -> None:
    await make_channel(client, "alpha")
    r = await client.post("/api/channels", json={"id": "alpha"}, headers=AUTH)
    assert r.status == 409 and "already exists" in (await r.json())["error"]
    r = await client.get("/api/channels", headers=AUTH)
    assert [c["id"] for c in (await r.json())["channels"]] == ["alpha"]
    r = await client.get("/api/channels/alpha", headers=AUTH)
    info = await r.json()
    assert info["game"] is None and info["playhead"]["steps"] == 0
    r = await client.delete("/api/channels/alpha", headers=AUTH)
    assert r.status == 200
    for path in ("/api/channels/alpha", "/api/channels/alpha/settings"):
        r = await client.get(path, headers=AUTH)
        assert r.status == 404 and "alpha" in (await r.json())["error"]
    # a page URL never answers an error (OBS would draw it on air): the empty player, which
    # says why on its console (see tests/service/test_pages_on_air.py)
    r = await client.get("/overlay/alpha")
    assert r.status == 200 and "no channel 'alpha'" in await r.text()


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"id": "bad id!"}, "id"),
        ({"id": ""}, "id"),
        ({}, "id"),
        ({"id": "ok", "unknown": 1}, "unknown"),
        ({"id": "ok", "settings": {"outputs": {"program": {"delay": -1}}}}, "delay"),
    ],
)
async def test_channel_create_refuses_bad_input(client: Any, body: dict[str, Any], needle: str) -> None:
    r = await client.post("/api/channels", json=body, headers=AUTH)
    assert r.status == 400
    assert needle in (await r.json())["error"]


async def test_channel_create_refuses_non_json(client: Any) -> None:
    r = await client.post("/api/channels", data=b"{nope", headers=AUTH)
    assert r.status == 400 and "not JSON" in (await r.json())["error"]


async def test_delete_closes_pages(client: Any) -> None:
    await make_channel(client, doc=game())
    ws = await client.ws_connect("/ws/overlay/t1")
    await scene_msg(ws)
    await client.delete("/api/channels/t1", headers=AUTH)
    bye = await ws.receive_json(timeout=3)
    assert bye == {"type": "bye", "reason": "channel deleted"}
    msg = await ws.receive(timeout=3)
    assert msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING)
    # the code the server sent is in the CLOSE frame; the client's own close_code turns 1006
    # when the server has closed the connection before the client's reply got out
    sent = msg.data if msg.type == WSMsgType.CLOSE else ws.close_code
    assert sent == WSCloseCode.GOING_AWAY


async def test_restart_restores_channels(aiohttp_client: Any, settings: ServerSettings) -> None:
    doc = game(5, 1)
    app = create_app(settings)
    client = await aiohttp_client(app)
    await make_channel(client, doc=empty_game(doc))
    for a in actions_of(doc)[:6]:
        await client.post("/api/channels/t1/actions", json=a, headers=AUTH)
    s = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    s["outputs"]["clean"]["delay"] = 12
    await client.put("/api/channels/t1/settings", json=s, headers=AUTH)
    await client.post("/api/channels/t1/control", json={"op": "seek", "step": 3}, headers=AUTH)
    await client.post("/api/channels/t1/control", json={"op": "pause"}, headers=AUTH)
    await client.close()

    db = sqlite3.connect(settings.db_path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()

    client2 = await aiohttp_client(create_app(settings))
    info = await (await client2.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["seq"] == 6 and info["game"]["steps"] == 6
    assert info["playhead"]["step"] == 3 and info["playhead"]["playing"] is False
    assert info["settingsRevision"] == 2
    assert info["playhead"]["delays"]["clean"] == 12
    r = await client2.post("/api/channels/t1/actions", json=actions_of(doc)[6], headers=AUTH)
    assert r.status == 200 and (await r.json())["seq"] == 7


async def test_fresh_install_serves_the_looping_demo(aiohttp_client: Any, tmp_path: Path) -> None:
    s = ServerSettings(data_dir=tmp_path, token=TOKEN_VALUE, demo=True)
    client = await aiohttp_client(create_app(s))
    info = await (await client.get("/api/channels/demo", headers=AUTH)).json()
    assert info["game"]["steps"] > 100 and info["playhead"]["loop"] is True and info["playhead"]["playing"]
    assert (await client.get("/overlay/demo")).status == 200
    await client.delete("/api/channels/demo", headers=AUTH)
    await client.close()
    # a deleted demo stays deleted: it is only made on a fresh install
    client2 = await aiohttp_client(create_app(s))
    assert (await client2.get("/api/channels/demo", headers=AUTH)).status == 404


async def test_shutdown_closes_sockets_going_away(aiohttp_client: Any, settings: ServerSettings) -> None:
    client = await aiohttp_client(create_app(settings))
    await make_channel(client, doc=game())
    ws = await client.ws_connect("/ws/overlay/t1")
    await scene_msg(ws)
    closing = asyncio.ensure_future(client.server.close())
    while True:
        msg = await ws.receive(timeout=5)
        if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING):
            break
    await closing
    assert ws.close_code == WSCloseCode.GOING_AWAY
    await client.close()
