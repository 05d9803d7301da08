"""Issue 22 item 3 under ``serve --redis``: anonymous page sockets at odd sizes on a process
that does not run the channel (its pages are fed from Redis) cannot lock out the OBS page;
they share the nearest allowed size, as on one box (``overlay.service.fanout.draw_size``)."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

from engine.generate import generate_game
from overlay.bench.rediserver import RedisServer
from overlay.bench.services import live_channel
from overlay.service.fanout import MAX_SIZES
from tests.cluster_support import AUTH, FAST, redis_server, services

__all__ = ["redis_server"]  # the fixture, used by name


async def _scene(ws: aiohttp.ClientWebSocketResponse) -> dict[str, object]:
    while True:
        msg = await ws.receive(timeout=10)
        assert msg.type == aiohttp.WSMsgType.TEXT, msg
        data: dict[str, object] = json.loads(msg.data)
        if data["type"] == "scene" and data.get("scene") is not None:
            return data


async def test_anonymous_odd_sizes_on_the_other_process_do_not_lock_out_the_obs_page(redis_server: RedisServer, tmp_path: Path) -> None:
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        await live_channel(s, cluster.bases[0], "obs", FAST, generate_game(5, deals=1), headers=AUTH)
        owner = await cluster.owner("obs")
        other = next(b for b in cluster.bases if b != owner)
        attackers = [await s.ws_connect(f"{other}/ws/overlay/obs?width={1281 + i}&height=720") for i in range(MAX_SIZES)]
        for ws in attackers:
            msg = await _scene(ws)
            assert (msg["width"], msg["height"]) == (1920, 1080)
        obs = await s.ws_connect(f"{other}/ws/overlay/obs?output=program&width=1920&height=1080")
        msg = await _scene(obs)
        assert (msg["width"], msg["height"]) == (1920, 1080)
        for ws in [*attackers, obs]:
            await ws.close()
