"""Playback control and channel settings in process (pytest-aiohttp)."""

from __future__ import annotations

from typing import Any

import pytest

from overlay.service.keys import HUB
from tests.support import AUTH, game, make_channel
from tests.support import TOKEN as TOKEN_VALUE


@pytest.mark.parametrize(
    "body, check",
    [
        ({"op": "pause"}, {"playing": False}),
        ({"op": "play"}, {"playing": True}),
        ({"op": "toggle"}, {"playing": False}),
        ({"op": "speed", "speed": 2.5}, {"speed": 2.5}),
        ({"op": "loop", "value": True}, {"loop": True}),
        ({"op": "auto", "value": False}, {"auto": False}),
        ({"op": "next"}, {"auto": False, "hold": 1}),
        ({"op": "step"}, {"step": 1, "playing": False}),
        ({"op": "back"}, {"step": 0, "playing": False}),
        ({"op": "seek", "step": 10}, {"step": 10}),
        ({"op": "seek", "deal": 1}, {"playing": True}),
        ({"op": "live"}, {"auto": True, "playing": True}),
    ],
)
async def test_control_ops(client: Any, body: dict[str, Any], check: dict[str, Any]) -> None:
    await make_channel(client, doc=game())
    r = await client.post("/api/channels/t1/control", json=body, headers=AUTH)
    assert r.status == 200, await r.text()
    ph = await r.json()
    assert {k: ph[k] for k in check} == check


async def test_control_by_path_for_stream_decks(client: Any) -> None:
    await make_channel(client, doc=game())
    r = await client.post("/api/channels/t1/control/seek?step=5", headers=AUTH)
    assert r.status == 200 and (await r.json())["hold"] == 5
    r = await client.post("/api/channels/t1/control/speed", params={"speed": "0.5", "token": TOKEN_VALUE})
    assert (await r.json())["speed"] == 0.5


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"op": "seek"}, "seek needs"),
        ({"op": "seek", "deal": 99}, "no deal 99"),
        ({"op": "seek", "step": 10_000}, "no step 10000"),
        ({"op": "speed"}, "speed needs"),
        ({"op": "speed", "speed": 0}, "speed"),
        ({"op": "loop"}, "loop needs"),
        ({"op": "rewind"}, "op"),
        ([1, 2], "JSON object"),
    ],
)
async def test_control_refusals(client: Any, body: Any, needle: str) -> None:
    await make_channel(client, doc=game())
    r = await client.post("/api/channels/t1/control", json=body, headers=AUTH)
    assert r.status == 400
    assert needle in (await r.json())["error"]


async def test_settings_revisions(client: Any) -> None:
    await make_channel(client, doc=game())
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    assert doc["revision"] == 1
    doc["outputs"]["program"]["delay"] = 30
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 200 and (await r.json())["revision"] == 2
    # a second writer still holding revision 1 is refused with the current document
    doc["title"] = "stale"
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 409
    body = await r.json()
    assert body["kind"] == "stale_revision" and body["current"]["revision"] == 2
    assert body["current"]["outputs"]["program"]["delay"] == 30


@pytest.mark.parametrize(
    "patch, needle",
    [
        ({"outputs": {"program": {"view": {"width": 10}}}}, "width"),
        ({"timing": {"card": {"run_time": -1}}}, "run_time"),
        ({"outputs": {"program": {"width": 100}}}, "width"),
        ({"outputs": {"studio": {}}}, "studio"),
    ],
)
async def test_settings_refusals(client: Any, patch: dict[str, Any], needle: str) -> None:
    await make_channel(client)
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    r = await client.put("/api/channels/t1/settings", json={**doc, **patch}, headers=AUTH)
    assert r.status == 400
    assert needle in (await r.json())["error"]


async def test_timing_change_retimes_the_director(client: Any) -> None:
    await make_channel(client, doc=game())
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    doc["timing"] = {"card": {"run_time": 0.1, "hold": 0.1, "ease": "out"}}
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 200
    ch = client.server.app[HUB].get("t1")
    assert 0.2 in ch.director.durations
