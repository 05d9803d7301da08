"""``serve --redis``: what every process shows as one box would, whichever process runs the
channel: the channel lists (API and the studio's picker), the studio's channel routes, the
demo channel, and a followed file the next owner cannot read.

Real parts only, as in :mod:`tests.cluster.test_redis`: a ``redis-server`` with its
append-only file and ``euchre-overlay serve --redis`` subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from overlay.bench.rediserver import RedisServer
from overlay.bench.services import live_channel
from tests.cluster_support import AUTH, FAST, Services, redis_server, services
from tests.support import game

__all__ = ["redis_server"]  # the fixture, imported for this module's tests

pytestmark = pytest.mark.slow


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    async with session.get(url, headers=AUTH) as r:
        return r.status, await r.json()


async def test_channel_lists_and_studio_routes_span_the_processes(redis_server: RedisServer, tmp_path: Path) -> None:
    """Channels created through two processes: both processes' channel list and studio
    picker list both, oldest first; the studio's timeline of a channel the asked process
    does not run is its owner's."""
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        a, b = cluster.bases
        for base, cid, seed in ((a, "first", 21), (b, "second", 22)):
            doc = game(seed, deals=1)
            await live_channel(s, base, cid, FAST, doc, headers=AUTH)
            async with s.put(f"{base}/api/channels/{cid}/game", data=json.dumps(doc), headers=AUTH) as r:
                assert r.status == 200, await r.text()
        for base in (a, b):
            assert (await _get(s, f"{base}/studio/api/channels")) == (200, {"channels": ["first", "second"]})
            status, body = await _get(s, f"{base}/api/channels")
            assert status == 200 and [c["id"] for c in body["channels"]] == ["first", "second"]
        for cid in ("first", "second"):
            owner = await cluster.owner(cid)
            other = next(x for x in (a, b) if x != owner)
            here = await _get(s, f"{owner}/studio/api/channels/{cid}/timeline")
            there = await _get(s, f"{other}/studio/api/channels/{cid}/timeline")
            assert here[0] == 200 and here == there and here[1]["steps"]
        # the studio's control key and links through the process that does not run the channel
        owner = await cluster.owner("first")
        other = next(x for x in (a, b) if x != owner)
        async with s.post(f"{other}/studio/api/channels/first/control-key", headers=AUTH) as r:
            assert r.status == 200, await r.text()
            key = (await r.json())["key"]
        for base in (a, b):
            async with s.get(f"{base}/studio/link/first/pause?key={key}") as r:
                assert r.status == 200 and (await r.json())["playing"] is False, await r.text()
            async with s.get(f"{base}/studio/link/first/pause?key=wrong") as r:
                assert r.status in (401, 403), await r.text()
        async with s.get(f"{a}/studio/api/channels") as r:  # the picker needs the token, as on one box
            assert r.status == 401
        assert (await _get(s, f"{b}/studio/api/channels/nosuch/timeline"))[0] == 404


async def test_one_demo_channel_when_processes_start_together(redis_server: RedisServer, tmp_path: Path) -> None:
    """Three processes started together on a fresh Redis, demo on: exactly one demo
    channel, run by the holder of its lease and playing its game through every process;
    the processes started after them add none."""
    cluster = await Services(redis_server.url, tmp_path).start(3, demo=True)
    try:
        async with aiohttp.ClientSession() as s:
            owner = await cluster.owner("demo")
            for base in cluster.bases:
                status, body = await _get(s, f"{base}/api/channels")
                assert status == 200 and [c["id"] for c in body["channels"]] == ["demo"], body
                info = body["channels"][0]
                assert info["game"]["steps"] > 0 and info["playhead"]["loop"] is True
            status, runs = await _get(s, f"{owner}/api/status")
            assert "demo" in runs["cluster"]["runs"]
            await cluster.start(1, demo=True)  # a process joining later: no second demo
            status, body = await _get(s, f"{cluster.bases[-1]}/studio/api/channels")
            assert body == {"channels": ["demo"]}
            # its banner gives the cluster's page to paste into OBS, though another process
            # runs that channel (it said "No channels yet: create one")
            printed = cluster.procs[-1].printed
            deadline = time.monotonic() + 10
            while not any(line.startswith("Studio") for line in printed) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert f"  {cluster.bases[-1]}/overlay/demo\n" in printed and not any("No channels" in line for line in printed), printed
    finally:
        await cluster.stop()


async def test_a_followed_file_the_next_owner_cannot_read(redis_server: RedisServer, tmp_path: Path) -> None:
    """The owner follows a file; its folder goes and the owner stops: the next owner keeps
    the game from Redis and says which channel follows which path it cannot read."""
    folder = tmp_path / "logger"
    folder.mkdir()
    path = folder / "table.egn"
    doc = game(23, deals=1)
    path.write_text(json.dumps(doc))
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        a, b = cluster.bases
        async with s.post(f"{a}/api/channels", json={"id": "fol", "settings": FAST}, headers=AUTH) as r:
            assert r.status == 201, await r.text()
        owner = await cluster.owner("fol")
        async with s.post(f"{owner}/api/channels/fol/follow", json={"path": str(path)}, headers=AUTH) as r:
            assert r.status == 200, await r.text()
        status, before = await _get(s, f"{owner}/api/channels/fol")
        assert before["game"]["steps"] > 0 and before["followError"] is None
        async with s.post(f"{owner}/studio/api/channels/fol/control-key", headers=AUTH) as r:
            key = (await r.json())["key"]
        shutil.rmtree(folder)
        proc = cluster.procs[cluster.bases.index(owner)]
        proc.send_signal(signal.SIGTERM)  # a clean stop hands the lease on at once
        await proc.wait()
        other = next(x for x in (a, b) if x != owner)
        deadline = time.monotonic() + 10
        info: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status, info = await _get(s, f"{other}/api/channels/fol")
            if status == 200 and info.get("followError"):
                break
            await asyncio.sleep(0.1)
        error = str(info.get("followError"))
        assert "'fol'" in error and str(path) in error and "same path on every process" in error, info
        assert info["follow"] == str(path) and info["game"]["steps"] == before["game"]["steps"]
        # the studio's control key came along with the channel
        async with s.get(f"{other}/studio/link/fol/pause?key={key}") as r:
            assert r.status == 200, await r.text()
