"""The game stored as an action log with snapshots (overlay.service.record): a logger action
is logged, the game it made is written every SNAPSHOT_EVERY actions, and a restart (a clean
one, a kill -9, a takeover through Redis) loads the last snapshot and pushes the logged
actions after it: exactly the game that was acknowledged, byte for byte."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from overlay.bench.rediserver import RedisServer
from overlay.service import feed
from overlay.service.feed import actions_of
from overlay.service.hub import Hub
from overlay.service.protocol import ActionIn
from overlay.service.record import SNAPSHOT_EVERY
from overlay.service.store import Store
from tests.cluster_support import AUTH as CLUSTER_AUTH, redis_server, services
from tests.support import empty_game, game

__all__ = ["redis_server"]  # the fixture, imported for the Redis test


def _local(doc: dict[str, Any], count: int) -> feed.Loaded:
    """The game the first ``count`` actions of ``doc`` make, pushed here by the engine."""
    loaded = feed.load_bytes(json.dumps(empty_game(doc)).encode(), source="k.egn")
    for a in actions_of(doc)[:count]:
        loaded, _ = feed.push_action(loaded, ActionIn.model_validate(a), source="k.egn")
    return loaded


def _rows(db: Path, cid: str) -> tuple[int, list[int]]:
    """The stored snapshot's seq and the logged actions' seqs of channel ``cid``."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        snap = conn.execute("SELECT seq FROM games WHERE channel = ?", (cid,)).fetchone()[0]
        logged = [s for (s,) in conn.execute("SELECT seq FROM actions WHERE channel = ? ORDER BY seq", (cid,))]
    return int(snap), logged


def _open(db: Path) -> tuple[Store, Hub]:
    store = Store(db)
    hub = Hub(store)
    hub.restore()
    return store, hub


@pytest.mark.parametrize("count", [1, SNAPSHOT_EVERY - 1, SNAPSHOT_EVERY, SNAPSHOT_EVERY + 1, 2 * SNAPSHOT_EVERY + 5])
def test_a_restart_restores_the_exact_game_from_the_snapshot_and_the_log(tmp_path: Path, count: int) -> None:
    doc = game(23, deals=6)
    acts = actions_of(doc)
    assert len(acts) > 2 * SNAPSHOT_EVERY + 5
    db = tmp_path / "overlay.sqlite3"
    store, hub = _open(db)
    ch = hub.create("k")
    ch.ingest.put_game(json.dumps(empty_game(doc)).encode(), source="k.egn")
    for a in acts[:count]:
        ch.ingest.apply_action(ActionIn.model_validate(a))
    before = ch.game
    assert before is not None
    data, digest, document, steps = before.data, before.digest, before.document, list(before.steps)
    store.close()
    # a snapshot every SNAPSHOT_EVERY actions, the actions after it in the log only
    snap, logged = _rows(db, "k")
    assert snap == count - count % SNAPSHOT_EVERY
    assert logged == list(range(1, count + 1))
    store, hub = _open(db)
    try:
        after = hub.get("k")
        assert after.load_error is None and after.seq == count
        assert after.game is not None
        assert after.game.data == data and after.game.digest == digest and after.game.document == document
        assert list(after.game.steps) == steps
        # and it is the game the engine makes of those actions from scratch
        assert after.game.data == _local(doc, count).data
        # the logger goes on where it left, and the log keeps growing on the restored game
        after.ingest.apply_action(ActionIn.model_validate(acts[count]))
        assert after.seq == count + 1 and after.game.data == _local(doc, count + 1).data
    finally:
        store.close()


def test_a_logged_action_that_no_longer_replays_keeps_what_did(tmp_path: Path) -> None:
    """A log row the engine refuses (damaged here by hand): the channel starts with the game
    up to the action before it, says which action stopped the replay, and the other
    channels start as they were."""
    doc = game(5, deals=3)
    acts = actions_of(doc)
    db = tmp_path / "overlay.sqlite3"
    store, hub = _open(db)
    for cid in ("a", "b"):
        ch = hub.create(cid)
        ch.ingest.put_game(json.dumps(empty_game(doc)).encode(), source=f"{cid}.egn")
        for a in acts[:10]:
            ch.ingest.apply_action(ActionIn.model_validate(a))
    store.close()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("""UPDATE actions SET data = '{"seq": 7, "kind": "card", "card": "Zz"}' WHERE channel = 'a' AND seq = 7""")
        conn.commit()
    store, hub = _open(db)
    try:
        a, b = hub.get("a"), hub.get("b")
        assert a.seq == 6 and a.game is not None and a.game.data == _local(doc, 6).data
        assert a.load_error is not None and "channel 'a'" in a.load_error and "logged action 7" in a.load_error
        assert b.load_error is None and b.seq == 10 and b.game is not None and b.game.data == _local(doc, 10).data
    finally:
        store.close()


async def test_kill_9_restores_the_exact_game(tmp_path: Path) -> None:
    """A real server is killed with SIGKILL while a logger posts actions, past a snapshot:
    after a restart the game is, byte for byte, the game of the actions it holds, and it
    holds every acknowledged one (the snapshot before them and the log after it)."""
    from overlay.bench.faults import AUTH, start_server

    doc = game(17, deals=4)
    acts = actions_of(doc)
    acked = 0
    proc, base = await start_server(str(tmp_path))
    async with aiohttp.ClientSession(headers=AUTH) as s:
        async with s.post(f"{base}/api/channels", json={"id": "k"}) as r:
            assert r.status == 201
        async with s.put(f"{base}/api/channels/k/game", data=json.dumps(empty_game(doc))) as r:
            assert r.status == 200

        async def post_all() -> None:
            nonlocal acked
            for a in acts:
                async with s.post(f"{base}/api/channels/k/actions", json=a) as r:
                    if r.status == 200:
                        acked = a["seq"]

        task = asyncio.ensure_future(post_all())
        while acked < SNAPSHOT_EVERY + 10:
            await asyncio.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        with contextlib.suppress(aiohttp.ClientError):
            await task
    proc, base = await start_server(str(tmp_path))
    try:
        async with aiohttp.ClientSession(headers=AUTH) as s:
            async with s.get(f"{base}/api/channels/k") as r:
                info = (await r.json())["game"]
    finally:
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    seq = info["seq"]
    assert seq >= acked
    assert info["digest"] == _local(doc, seq).digest and info["steps"] == len(_local(doc, seq).steps)
    snap, logged = _rows(tmp_path / "overlay.sqlite3", "k")
    assert SNAPSHOT_EVERY <= snap < seq and logged[-1] == seq  # the snapshot and the log after it were read


@pytest.mark.slow
async def test_a_takeover_through_redis_restores_the_exact_game(redis_server: RedisServer, tmp_path: Path) -> None:
    """``serve --redis``: past two snapshots the owner is killed with SIGKILL; the process
    that takes the channel over rebuilds it from Redis's snapshot and the stream after it:
    the same game, byte for byte; the stream was trimmed at the snapshot."""
    import redis.asyncio

    doc = game(23, deals=6)
    acts = actions_of(doc)[: 2 * SNAPSHOT_EVERY + 9]
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession(headers=CLUSTER_AUTH) as s:
        from overlay.bench.services import live_channel
        from tests.cluster_support import FAST

        await live_channel(s, cluster.bases[0], "rk", FAST, doc)
        owner = await cluster.owner("rk")
        for a in acts:
            async with s.post(f"{owner}/api/channels/rk/actions", json=a) as r:
                assert r.status == 200, await r.text()
        client = redis.asyncio.Redis.from_url(redis_server.url)
        try:
            snap = await client.hgetall("eo:ch:rk:snap")
            entries = await client.xlen("eo:ch:rk:log")
        finally:
            await client.aclose()
        assert int(snap[b"seq"]) == 2 * SNAPSHOT_EVERY and entries <= len(acts) - SNAPSHOT_EVERY
        await cluster.kill9(owner)
        other = cluster.alive()[0]
        new_owner = await cluster.owner("rk", timeout=15.0)
        assert new_owner == other
        async with s.get(f"{other}/api/channels/rk") as r:
            info = (await r.json())["game"]
    assert info["seq"] == len(acts)
    assert info["digest"] == _local(doc, len(acts)).digest
