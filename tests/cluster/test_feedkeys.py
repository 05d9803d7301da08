"""``serve --redis``: a channel's feed key works through every process and after a takeover,
and a revoked one nowhere; a key of another channel is refused by its owner.

Real parts only, as in :mod:`tests.cluster.test_redis`: a ``redis-server`` and ``euchre-overlay
serve --redis`` subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from overlay.bench.rediserver import RedisServer
from overlay.service.feed import actions_of
from tests.cluster_support import AUTH, FAST, redis_server, services
from tests.support import empty_game, game

__all__ = ["redis_server"]  # the fixture, imported for this module's tests

pytestmark = pytest.mark.slow


async def _post(s: aiohttp.ClientSession, url: str, body: Any, key: str) -> tuple[int, Any]:
    async with s.post(url, json=body, headers={"Authorization": f"Bearer {key}"}) as r:
        return r.status, await r.json()


async def test_a_feed_key_through_every_process_and_after_a_takeover(redis_server: RedisServer, tmp_path: Path) -> None:
    doc = game(24, deals=1)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        a, b = cluster.bases
        for cid in ("fk", "other"):
            async with s.post(f"{a}/api/channels", json={"id": cid, "settings": FAST}, headers=AUTH) as r:
                assert r.status == 201, await r.text()
            owner = await cluster.owner(cid)
            async with s.put(f"{owner}/api/channels/{cid}/game", data=json.dumps(empty_game(doc)), headers=AUTH) as r:
                assert r.status == 200, await r.text()
        owner = await cluster.owner("fk")
        other = next(x for x in (a, b) if x != owner)
        # made through the process that does not run the channel
        async with s.post(f"{other}/api/channels/fk/feed-keys", json={"label": "north"}, headers=AUTH) as r:
            assert r.status == 201, await r.text()
            made = await r.json()
        key = made["key"]
        status, body = await _post(s, f"{owner}/api/channels/fk/actions", acts[0], key)
        assert status == 200 and body["seq"] == 1, body
        status, body = await _post(s, f"{other}/api/channels/fk/actions", acts[1], key)
        assert status == 200 and body["seq"] == 2
        # the feed socket through the other process: each frame forwarded, the key checked by the owner
        ws = await s.ws_connect(f"{other}/api/channels/fk/feed", headers={"Authorization": f"Bearer {key}"})
        await ws.send_json({"type": "action", "action": acts[2]})
        assert (await ws.receive_json(timeout=10))["type"] == "ack"
        await ws.send_json(acts[3])  # an action as POST …/actions takes it, no envelope
        ack = await ws.receive_json(timeout=10)
        assert ack["type"] == "ack" and ack["seq"] == 4, ack
        await ws.close()
        for base in (a, b):
            status, body = await _post(s, f"{base}/api/channels/other/actions", acts[0], key)
            assert status == 403 and "not a current key of channel 'other'" in body["error"], body
            async with s.get(f"{base}/api/channels/fk/settings", headers={"Authorization": f"Bearer {key}"}) as r:
                assert r.status == 403
        # the owner stops: the next owner takes the channel and its keys
        proc = cluster.procs[cluster.bases.index(owner)]
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
        deadline = time.monotonic() + 15
        status = 0
        while time.monotonic() < deadline:
            status, body = await _post(s, f"{other}/api/channels/fk/actions", acts[4], key)
            if status == 200:
                break
            await asyncio.sleep(0.2)
        assert status == 200, body
        # revoked there: refused
        async with s.delete(f"{other}/api/channels/fk/feed-keys/{made['id']}", headers=AUTH) as r:
            assert r.status == 200, await r.text()
        status, body = await _post(s, f"{other}/api/channels/fk/actions", acts[5], key)
        assert status == 403

