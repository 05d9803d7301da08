"""Lower thirds that hide by themselves (issue 23 item 4): a player intro or a statistics line
put on air with an auto-out time leaves the air that many seconds later, as a stored settings
change every output follows; one put on air again restarts its time; 0 keeps it until Hide; a
channel started with one on air counts its time again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from tests.support import AUTH, game, make_channel


async def _settings(client: Any) -> dict[str, Any]:
    body: dict[str, Any] = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    return body


async def _patch(client: Any, match: dict[str, Any]) -> dict[str, Any]:
    doc = await _settings(client)
    r = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "match": match}, headers=AUTH)
    body: dict[str, Any] = await r.json()
    assert r.status == 200, body
    return body


async def _until(client: Any, check: Any, timeout: float) -> float:
    t0 = asyncio.get_running_loop().time()
    while True:
        if check(await _settings(client)):
            return asyncio.get_running_loop().time() - t0
        assert asyncio.get_running_loop().time() - t0 < timeout, await _settings(client)
        await asyncio.sleep(0.05)


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    c = await aiohttp_client(create_app(settings))
    await make_channel(c, "t1", doc=game(3, deals=1))
    return c


async def test_an_intro_and_a_statistics_line_hide_by_themselves(client: Any) -> None:
    await _patch(client, {"intro_seconds": 0.6, "stats_seconds": 1.2})
    await _patch(client, {"intro": 2, "stats": "team-0"})
    took = await _until(client, lambda d: d["match"]["intro"] is None, 3.0)
    assert 0.4 <= took <= 1.5
    assert (await _settings(client))["match"]["stats"] == "team-0"  # its own time is longer
    await _until(client, lambda d: d["match"]["stats"] is None, 3.0)


async def test_fired_again_restarts_and_zero_keeps_it_until_hide(client: Any) -> None:
    await _patch(client, {"intro_seconds": 0.8})
    await _patch(client, {"intro": 1})
    await asyncio.sleep(0.5)
    await _patch(client, {"intro": 3})  # another player's intro: its own 0.8 s
    await asyncio.sleep(0.5)
    assert (await _settings(client))["match"]["intro"] == 3
    await _until(client, lambda d: d["match"]["intro"] is None, 3.0)
    await _patch(client, {"intro_seconds": 0, "intro": 0})
    await asyncio.sleep(1.0)
    assert (await _settings(client))["match"]["intro"] == 0


async def test_a_restarted_channel_counts_its_time_again(aiohttp_client: Any, settings: ServerSettings) -> None:
    c = await aiohttp_client(create_app(settings))
    await make_channel(c, "t1", doc=game(3, deals=1))
    await _patch(c, {"intro_seconds": 60, "intro": 1})
    await c.close()
    again = await aiohttp_client(create_app(settings))
    assert (await _settings(again))["match"]["intro"] == 1
    await _patch(again, {"intro_seconds": 0.5})  # the time shortened while it is on air
    await _until(again, lambda d: d["match"]["intro"] is None, 3.0)
