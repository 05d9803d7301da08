"""``serve --redis``: several real service processes sharing channels through a real Redis.

No part is simulated: a ``redis-server`` with its append-only file (:mod:`tests.cluster_support`),
``euchre-overlay serve --redis`` subprocesses, page sockets and Chromium on the processes that
do not run the channel, a logger posting to any process.  A process or Redis is killed with
SIGKILL mid-feed: every acknowledged action must still be there, in order, and the pages must
go on getting scenes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine.generate import generate_game
from overlay.bench.rediserver import RedisServer
from overlay.bench.services import live_channel
from overlay.service.feed import actions_of
from overlay.cluster.redisstore import SCRIPTS
from tests.cluster_support import AUTH, FAST, Pages, Services, post_json, redis_server, services
from tests.support import empty_game, game

__all__ = ["redis_server"]  # the fixture, imported for this module's tests

pytestmark = pytest.mark.slow


class Logger:
    """Posts a game's actions in order to any live process (the next one after a refusal
    or a dead connection), resending an action until one process acknowledges it."""

    def __init__(self, session: aiohttp.ClientSession, cluster: Services, cid: str, acts: list[dict[str, Any]]) -> None:
        self.session = session
        self.cluster = cluster
        self.cid = cid
        self.acts = acts
        self.acked: list[int] = []  # seqs acknowledged, in the order the answers came
        self.retries = 0
        self.turn = itertools.count()

    async def send(self, action: dict[str, Any]) -> dict[str, Any]:
        while True:
            alive = self.cluster.alive()
            base = alive[next(self.turn) % len(alive)]
            try:
                async with self.session.post(f"{base}/api/channels/{self.cid}/actions", json=action, headers=AUTH) as r:
                    body = await r.json()
                    if r.status == 200:
                        self.acked.append(action["seq"])
                        return dict(body)
                    assert r.status >= 500, body  # a refusal of the action itself would be a bug here
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            self.retries += 1
            await asyncio.sleep(0.05)

    async def run(self, acts: list[dict[str, Any]], *, rate: float) -> None:
        for a in acts:
            began = time.monotonic()
            await self.send(a)
            await asyncio.sleep(max(0.0, 1 / rate - (time.monotonic() - began)))


async def _channel(session: aiohttp.ClientSession, base: str, cid: str, doc: dict[str, Any]) -> None:
    await live_channel(session, base, cid, FAST, doc, headers=AUTH)


async def _owner_and_other(session: aiohttp.ClientSession, cluster: Services, cid: str, doc: dict[str, Any]) -> tuple[str, str]:
    """Channel ``cid`` made live through the first process; the process that runs it and
    one that does not."""
    await _channel(session, cluster.bases[0], cid, doc)
    owner = await cluster.owner(cid)
    return owner, next(b for b in cluster.bases if b != owner)


def _replayed_steps(doc: dict[str, Any], acts: list[dict[str, Any]]) -> int:
    """Steps of the game the logger's actions write, replayed here by the engine."""
    from overlay.service import feed
    from overlay.service.protocol import ActionIn

    loaded = feed.load_bytes(json.dumps(empty_game(doc)).encode(), source="local.egn")
    for a in acts:
        loaded, _ = feed.push_action(loaded, ActionIn.model_validate(a), source="local.egn")
    return len(loaded.steps)


def _ordered(seen: list[tuple[int, float]]) -> bool:
    steps = [s for s, _ in seen]
    return steps == sorted(steps)


def _longest_gap(seen: list[tuple[int, float]], after: float) -> float:
    times = [t for _, t in seen if t >= after - 1.0]
    return max((b - a for a, b in zip(times, times[1:])), default=float("inf"))


async def test_kill9_owner_mid_feed(redis_server: RedisServer, tmp_path: Path) -> None:
    """Three processes; the channel's owner is killed with SIGKILL mid-feed: pages on the
    other two keep getting scenes within 3 s, no acknowledged action is lost or reordered."""
    doc = game(11, deals=2)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 3) as cluster, aiohttp.ClientSession() as s:
        await _channel(s, cluster.bases[0], "k9", doc)
        owner = await cluster.owner("k9")
        others = [b for b in cluster.bases if b != owner]
        pages = Pages(s)
        for base in others:
            await pages.open(base, "k9")
        await pages.wait_steps(0)
        await asyncio.sleep(0.5)
        # each page got one picture at once; the second process's first page did not
        # make the owner cut the first page's animation with another snapshot
        assert pages.snapshots == [1, 1]
        logger = Logger(s, cluster, "k9", acts)
        half = len(acts) // 2
        await logger.run(acts[:half], rate=20)
        steps_at_half = (await logger.send({**acts[half - 1]}))["steps"]  # a duplicate: the step count
        await pages.wait_steps(steps_at_half)
        killed_at = time.monotonic()
        await cluster.kill9(owner)
        await logger.run(acts[half:], rate=20)
        new_owner = await cluster.owner("k9")
        assert new_owner != owner
        async with s.get(f"{others[0]}/api/channels/k9", headers=AUTH) as r:
            info = await r.json()
        steps = info["game"]["steps"]
        await pages.wait_steps(steps, timeout=5.0)
        assert info["game"]["seq"] == len(acts) == max(logger.acked)  # nothing acknowledged lost
        assert logger.acked == sorted(logger.acked)
        for seen in pages.seen:
            assert _ordered(seen), [x for x, _ in seen]  # 0 reordered
            gap = _longest_gap(seen, killed_at)
            assert gap <= 3.0, f"a page waited {gap:.2f} s for a scene across the failover"
        # the new owner rebuilt the logger's game: as many steps as a fresh replay of it
        assert steps == _replayed_steps(doc, acts)
        async with s.get(f"{new_owner}/api/channels/k9/state?output=preview", headers=AUTH) as r:
            state = await r.json()
        assert state["steps"] == steps
        await pages.close()


async def test_redis_killed_and_restarted_mid_feed(redis_server: RedisServer, tmp_path: Path) -> None:
    """Redis is killed (SIGKILL) and restarted on its append-only file mid-feed: the
    processes reconnect, every acknowledged action is still there, the pages go on."""
    doc = game(12, deals=1)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "rr", doc)
        pages = Pages(s)
        await pages.open(other, "rr")
        logger = Logger(s, cluster, "rr", acts)
        third = len(acts) // 3
        await logger.run(acts[:third], rate=20)
        acked_before = max(logger.acked)
        redis_server.kill()
        feeding = asyncio.ensure_future(logger.run(acts[third:], rate=20))
        await asyncio.sleep(0.6)
        redis_server.start()
        await asyncio.wait_for(feeding, 60)
        assert max(logger.acked) == len(acts) and acked_before == third
        async with s.get(f"{other}/api/channels/rr", headers=AUTH) as r:
            info = await r.json()
        assert info["game"]["seq"] == len(acts), info
        await pages.wait_steps(info["game"]["steps"], timeout=8.0)
        assert _ordered(pages.seen[0])
        # what Redis holds after the restart is the whole log: a new owner rebuilds it all
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(redis_server.url)
        stored = await client.hget("eo:ch:rr:meta", "seq")
        assert stored is not None and int(stored) == len(acts)
        assert (await client.config_get("appendonly"))["appendonly"] == "yes"
        await client.aclose()
        await pages.close()


async def test_api_across_processes(redis_server: RedisServer, tmp_path: Path) -> None:
    """A seq clash across two processes is a 409; settings revisions, playback control, the
    channel list, creation and deletion behave through any process as on one box."""
    doc = game(13, deals=1)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        a, b = cluster.bases
        await _channel(s, a, "api", doc)
        assert await cluster.owner("api") == a
        # the same seq, different content, through the two processes at once
        clash = {"seq": 1, "kind": "new_deal", "dealer": (acts[0]["dealer"] + 1) % 4, "upCard": acts[0]["upCard"]}
        results = await asyncio.gather(
            post_json(s, f"{a}/api/channels/api/actions", acts[0]), post_json(s, f"{b}/api/channels/api/actions", clash)
        )
        assert sorted(st for st, _ in results) == [200, 409], results
        refused = next(body for st, body in results if st == 409)
        assert "already accepted" in refused["error"]
        accepted = acts[0] if results[0][0] == 200 else clash
        assert (await post_json(s, f"{b}/api/channels/api/actions", accepted))[1]["duplicate"] is True
        assert (await post_json(s, f"{b}/api/channels/api/actions", {**acts[2], "seq": 5}))[0] == 409  # a gap
        # settings through the process that does not run the channel
        async with s.get(f"{b}/api/channels/api/settings", headers=AUTH) as r:
            rev = (await r.json())["revision"]
        st, body = await post_json(s, f"{b}/api/channels/api/settings", {"revision": rev, "title": "Table 9"}, "PATCH")
        assert st == 200 and body["revision"] == rev + 1
        st, body = await post_json(s, f"{a}/api/channels/api/settings", {"revision": rev, "title": "stale"}, "PATCH")
        assert st == 409 and body["current"]["title"] == "Table 9"
        # playback control through either process drives the one Director
        st, ph = await post_json(s, f"{b}/api/channels/api/control/pause", {})
        assert st == 200 and ph["playing"] is False
        st, ph = await post_json(s, f"{a}/api/channels/api/control/play", {})
        assert st == 200 and ph["playing"] is True
        st, body = await post_json(s, f"{b}/api/channels/api/control/seek?deal=7", {})
        assert st == 400 and "no deal 7" in body["error"]
        # the list, creation and deletion
        assert (await post_json(s, f"{b}/api/channels", {"id": "api"}))[0] == 409
        assert (await post_json(s, f"{b}/api/channels", {"id": "second"}))[0] == 201
        async with s.get(f"{a}/api/channels", headers=AUTH) as r:
            listed = [c["id"] for c in (await r.json())["channels"]]
        assert listed == ["api", "second"]
        async with s.delete(f"{a}/api/channels/second", headers=AUTH) as r:
            assert r.status == 200, await r.text()
        for base in (a, b):
            async with s.get(f"{base}/api/channels/second", headers=AUTH) as r:
                assert r.status == 404


@pytest.mark.browser
async def test_chromium_page_on_the_other_process(redis_server: RedisServer, tmp_path: Path, browser: Any) -> None:
    """A real Chromium page on the process that does not run the channel draws the scenes
    of the actions a logger sends (through that same process)."""
    doc = game(14, deals=1)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "web", doc)
        page = await browser.new_page(viewport={"width": 640, "height": 360})
        await page.goto(f"{other}/overlay/web?output=clean&width=1280&height=720")
        await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.seq > 0", timeout=10000)
        for act in acts[:4]:
            assert (await post_json(s, f"{other}/api/channels/web/actions", act))[0] == 200
        await page.wait_for_function("window.euchreOverlay.state.step >= 3", timeout=10000)
        drawn = await page.evaluate("window.euchreOverlay.state")
    assert drawn["connected"] and drawn["frames"] > 0 and drawn["snapshots"] >= 1


async def test_analysis_reaches_a_page_on_the_other_process(redis_server: RedisServer, tmp_path: Path) -> None:
    """With analysis on in the channel's settings, a page on the process that does not run
    the channel gets the owner's analysis message (with its layer) after the scene of the
    step, as a page on one box does."""
    doc = game(15, deals=1)
    acts = actions_of(doc)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "anl", doc)
        async with s.get(f"{other}/api/channels/anl/settings", headers=AUTH) as r:
            rev = (await r.json())["revision"]
        st, body = await post_json(s, f"{other}/api/channels/anl/settings", {"revision": rev, "analysis": {"enabled": True}}, "PATCH")
        assert st == 200, body
        ws = await s.ws_connect(f"{other}/ws/overlay/anl?output=program", headers=AUTH)
        for act in acts[:3]:
            assert (await post_json(s, f"{other}/api/channels/anl/actions", act))[0] == 200
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + 60  # the owner's first analysis starts its worker
        while time.monotonic() < deadline and not got:
            try:
                msg = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if msg.type == aiohttp.WSMsgType.TEXT and msg.data.startswith('{"type":"analysis"'):
                got.append(json.loads(msg.data))
        await ws.close()
        assert got, "no analysis message reached the page on the non-owner process"
        first = got[0]
        assert first["channel"] == "anl" and first["output"] == "program"
        assert first["analysis"]["winProbability"] is not None and first["layer"]["ops"]


async def _commandstats(client: Any) -> dict[str, dict[str, int]]:
    """``INFO commandstats``: command -> {calls, failed_calls, ...} (commands never called are absent)."""
    info = await client.info("commandstats")
    return {k.removeprefix("cmdstat_"): v for k, v in info.items()}


async def _stream(client: Any, cid: str) -> list[tuple[str, int]]:
    """(kind, seq) of every entry left in channel ``cid``'s Redis log, in stream order."""
    return [(f[b"kind"].decode(), int(f[b"seq"])) for _, f in await client.xrange(f"eo:ch:{cid}:log")]


@pytest.mark.parametrize("fault", ["script flush", "redis restart"])
async def test_writes_resent_after_redis_lost_the_scripts(redis_server: RedisServer, fault: str) -> None:
    """A RedisStore writing to a real Redis: 20 actions, then Redis loses its script cache
    (``SCRIPT FLUSH``, or a SIGKILL and a restart on the append-only file), then 20 more.
    Every action is acknowledged, stored once and in order, each write Redis refused
    (NOSCRIPT) was sent once more after the scripts were loaded again, and no pipeline
    asked ``SCRIPT EXISTS``."""
    import redis.asyncio

    from overlay.cluster.redisstore import Keys, RedisStore

    client = redis.asyncio.Redis.from_url(redis_server.url, protocol=2)
    store = RedisStore(client, "test:1:writer")
    writer = asyncio.ensure_future(store.run())
    admin = redis.asyncio.Redis.from_url(redis_server.url)  # the test's own connection
    try:
        await admin.set(Keys("c").lease, store.me)
        store.create_channel("c")

        def feed(seqs: range) -> None:
            for seq in seqs:
                with store.transaction():
                    store.log_action("c", seq, json.dumps({"seq": seq}))
                    store.save_game("c", f"game after {seq}".encode(), source="c.egn", seq=seq)
                    store.save_playhead("c", {"seq": seq})

        feed(range(1, 21))
        await store.sync()
        if fault == "script flush":
            await admin.script_flush()
        else:
            redis_server.kill()
            redis_server.start()
            await admin.aclose()
            admin = redis.asyncio.Redis.from_url(redis_server.url)
        await admin.config_resetstat()
        feed(range(21, 41))
        await store.sync()  # this task's writes (within WAIT_LIMIT)
        stats = await _commandstats(admin)
        assert await admin.hget(Keys("c").meta, "seq") == b"40"
        assert await _stream(admin, "c") == [("action", s) for s in range(1, 41)]  # none lost, none twice, in order
        stored = await admin.hgetall(Keys("c").actions)
        assert {int(k): json.loads(v) for k, v in stored.items()} == {s: {"seq": s} for s in range(1, 41)}
        assert json.loads(await admin.get(Keys("c").playhead)) == {"seq": 40}
        # after a flush the batch is refused (NOSCRIPT); after a restart it is refused too
        # when redis-py's own retry reconnected and resent it, else the writer reconnected
        # and loaded the scripts first; either way each refused write went exactly once more
        refused = stats["evalsha"]["failed_calls"]
        assert refused == 20 or (fault == "redis restart" and refused == 0)
        assert stats["evalsha"]["calls"] == 20 + refused
        assert stats["script|load"]["calls"] == len(SCRIPTS)  # loaded again, once
        assert "script|exists" not in stats and "eval" not in stats
        assert not store.pending and not store.queue
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
        await client.aclose()
        await admin.aclose()


async def test_script_flush_mid_feed_across_processes(redis_server: RedisServer, tmp_path: Path) -> None:
    """Two processes, a logger posting to both in turn.  First third: the writes are
    EVALSHA calls, no ``SCRIPT EXISTS``.  Then Redis's script cache is flushed every 30 ms
    while the logger goes on: every action is acknowledged at the first try, stored once and
    in order, and the owner's game is the whole game."""
    import redis.asyncio

    doc = game(16, deals=1)
    acts = actions_of(doc)
    client = redis.asyncio.Redis.from_url(redis_server.url, protocol=2)
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "fl", doc)
        logger = Logger(s, cluster, "fl", acts)
        third = len(acts) // 3
        await client.config_resetstat()
        await logger.run(acts[:third], rate=200)
        stats = await _commandstats(client)
        assert stats["evalsha"]["calls"] >= third and stats["evalsha"]["failed_calls"] == 0
        assert "script|exists" not in stats and "script|load" not in stats

        flushing = True

        async def flusher() -> None:
            while flushing:
                await client.script_flush()
                await asyncio.sleep(0.03)

        task = asyncio.ensure_future(flusher())
        await logger.run(acts[third:], rate=200)
        flushing = False
        await task
        stats = await _commandstats(client)
        assert stats["evalsha"]["failed_calls"] > 0  # the flushes did refuse writes
        assert stats["script|load"]["calls"] > 0 and "script|exists" not in stats
        assert logger.acked == [a["seq"] for a in acts] and logger.retries == 0
        assert await client.hget("eo:ch:fl:meta", "seq") == str(len(acts)).encode()
        stored = await client.hgetall("eo:ch:fl:actions")
        assert sorted(int(k) for k in stored) == [a["seq"] for a in acts]
        entries = [seq for kind, seq in await _stream(client, "fl") if kind == "action"]
        assert entries == list(range(entries[0], len(acts) + 1))  # (older entries are trimmed by snapshots)
        async with s.get(f"{other}/api/channels/fl", headers=AUTH) as r:
            info = await r.json()
        assert info["game"]["seq"] == len(acts) and info["game"]["steps"] == _replayed_steps(doc, acts)
    await client.aclose()


@pytest.mark.parametrize("after", [0.0, 0.0005, 0.001, 0.002, 0.005])
async def test_writer_stops_when_cancelled_mid_batch(redis_server: RedisServer, after: float) -> None:
    """The writer cancelled ``after`` seconds into a batch (after a ``SCRIPT FLUSH``, so
    the batch is refused, the scripts loaded and the batch resent): it stops, as a
    process's shutdown expects, even where redis-py swallowed the cancel mid-pipeline."""
    import redis.asyncio

    from overlay.cluster.redisstore import Keys, RedisStore

    client = redis.asyncio.Redis.from_url(redis_server.url, protocol=2)
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    store = RedisStore(client, "test:1:cancel")
    writer = asyncio.ensure_future(store.run())
    try:
        await admin.set(Keys("c").lease, store.me)
        store.create_channel("c")
        await store.sync()
        await admin.script_flush()
        for seq in range(1, 21):
            with store.transaction():
                store.log_action("c", seq, json.dumps({"seq": seq}))
                store.save_game("c", b"game", source="c.egn", seq=seq)
        await asyncio.sleep(after)
        writer.cancel()
        done, _ = await asyncio.wait({writer}, timeout=5)
        assert writer in done and writer.cancelled(), f"the writer did not stop: {writer!r}"
    finally:
        writer.cancel()
        await client.aclose()
        await admin.aclose()


async def test_a_match_logged_across_processes_survives_its_owner(redis_server: RedisServer, tmp_path: Path) -> None:
    """A match at one table under ``serve --redis``: the first game logged through the
    process that does not run the channel, the logger's next game started there too
    (forwarded to the owner), half of the second game logged, the owner killed with SIGKILL:
    the new owner rebuilds the match from the stored match and the actions after it, and the
    second game ends on it as one process ends it."""
    first = generate_game(3, ruleset={"num_deals": 2})
    second = generate_game(4, ruleset={"num_deals": 2}, players=first["metadata"]["players"])
    one, two = actions_of(first), actions_of(second)
    logger = {**AUTH, "X-Logger": "tablet", "X-Logger-Name": "Table%20tablet"}
    async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
        owner, other = await _owner_and_other(s, cluster, "mt", first)
        for a in one:
            assert (await post_json(s, f"{other}/api/channels/mt/logger/actions", a, headers=logger))[0] == 200
        st, body = await post_json(s, f"{other}/api/channels/mt/logger/next-game", {"seq": len(one)}, headers=logger)
        assert st == 201, body
        assert body["view"]["game"]["number"] == 2
        half = len(two) // 2
        for a in two[:half]:
            assert (await post_json(s, f"{other}/api/channels/mt/actions", {**a, "seq": len(one) + a["seq"]}))[0] == 200
        await cluster.kill9(owner)
        for a in two[half:]:
            while (await post_json(s, f"{other}/api/channels/mt/actions", {**a, "seq": len(one) + a["seq"]}))[0] >= 500:
                await asyncio.sleep(0.05)  # the channel moving to its new owner
        assert await cluster.owner("mt") == other
        async with s.get(f"{other}/api/channels/mt", headers=AUTH) as r:
            info = (await r.json())["game"]
        assert info["match"] and info["seq"] == len(one) + len(two)
        assert [g["deals"] for g in info["games"]] == [2, 2] and info["games"][1]["label"].startswith("Game 2")
        # as one process replays the same actions
        from overlay.service import feed
        from overlay.service.protocol import ActionIn

        local = feed.load_bytes(json.dumps(empty_game(first)).encode(), source="local")
        for a in one:
            local, _ = feed.push_action(local, ActionIn.model_validate(a), source="local")
        local = feed.load_bytes(feed.next_game_bytes(local, date="2026-12-06T10:00:00Z"), source="local")
        for a in two:
            local, _ = feed.push_action(local, ActionIn.model_validate({**a, "seq": len(one) + a["seq"]}), source="local")
        assert info["steps"] == len(local.steps)
