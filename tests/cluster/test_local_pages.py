"""``serve --redis``: the pages on the process that runs their channel get its scenes from that
process directly, and Redis carries a group's scenes only while another process has members.

Real ``serve --redis`` processes and a real ``redis-server``; a plain Redis client subscribes
to every scene topic of the channel, as a relay does, and counts what goes through Redis.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest
from redis.asyncio import Redis

from overlay.bench.rediserver import RedisServer
from overlay.bench.services import live_channel
from overlay.cluster.leases import TAG
from overlay.service.feed import actions_of
from tests.cluster.test_redis import _replayed_steps
from tests.cluster_support import AUTH, FAST, post_json, redis_server, services
from tests.support import game

__all__ = ["redis_server"]  # the fixture, imported for this module's tests

pytestmark = pytest.mark.slow


class Page:
    """A page socket that keeps the text of every scene message it gets."""

    def __init__(self) -> None:
        self.scenes: list[str] = []
        self.task: asyncio.Task[None] | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None

    async def open(self, s: aiohttp.ClientSession, base: str, cid: str) -> Page:
        self.ws = await s.ws_connect(f"{base}/ws/overlay/{cid}?output=preview", headers=AUTH)

        async def read() -> None:
            assert self.ws is not None
            async for msg in self.ws:
                if msg.type == aiohttp.WSMsgType.TEXT and msg.data.startswith('{"type":"scene"'):
                    self.scenes.append(msg.data)

        self.task = asyncio.ensure_future(read())
        return self

    async def until(self, steps: int, timeout: float = 15.0) -> None:
        """Until the scene of the last of ``steps`` steps has come."""
        deadline = time.monotonic() + timeout
        while not (self.scenes and f'"step":{steps - 1},"steps":{steps},' in self.scenes[-1][:600]):
            assert time.monotonic() < deadline, f"no scene of step {steps - 1} came ({len(self.scenes)} scenes)"
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        if self.ws is not None:
            await self.ws.close()


async def test_pages_on_the_owner_are_fed_without_redis_and_others_through_it(redis_server: RedisServer, tmp_path: Path) -> None:
    doc = game(16, deals=1)
    acts = actions_of(doc)
    cid = "loc"
    heard: list[tuple[str, bytes]] = []  # (topic, message) of every scene published in Redis
    client = Redis.from_url(redis_server.url)
    pubsub = client.pubsub()
    await pubsub.psubscribe(f"eo:scene:{cid}:*")

    async def listen() -> None:
        async for msg in pubsub.listen():
            if msg["type"] == "pmessage":
                heard.append((msg["channel"].decode(), msg["data"]))

    listener = asyncio.ensure_future(listen())
    try:
        async with services(redis_server.url, tmp_path, 2) as cluster, aiohttp.ClientSession() as s:
            await live_channel(s, cluster.bases[0], cid, FAST, doc, headers=AUTH)
            owner = await cluster.owner(cid)
            other = next(b for b in cluster.bases if b != owner)
            mine = await Page().open(s, owner, cid)
            await asyncio.sleep(1.0)  # the owner's ticks read who has members where
            heard.clear()
            for act in acts[:6]:
                assert (await post_json(s, f"{owner}/api/channels/{cid}/actions", act))[0] == 200
            await mine.until(_replayed_steps(doc, acts[:6]))
            # every scene reached the page on the owner, and none went through Redis
            assert heard == [], [t for t, _ in heard]

            theirs = await Page().open(s, other, cid)
            deadline = time.monotonic() + 10.0
            while not theirs.scenes:  # its snapshot: the owner has heard of the group elsewhere
                assert time.monotonic() < deadline, "the page on the other process got no snapshot"
                await asyncio.sleep(0.02)
            topic = f"eo:scene:{cid}:preview:1920x1080"
            first, published = len(mine.scenes), sum(t == topic for t, _ in heard)
            for act in acts[6:12]:
                assert (await post_json(s, f"{other}/api/channels/{cid}/actions", act))[0] == 200
            steps = _replayed_steps(doc, acts[:12])
            await mine.until(steps)
            await theirs.until(steps)
            await asyncio.sleep(0.3)
            # now the group's scenes go through Redis, marked with the owner's id ...
            scenes = [m for t, m in heard if t == topic][published:]
            assert scenes and all(m.startswith(TAG) for m in scenes), [m[:40] for m in scenes[:3]]
            # ... which the pages never see; each page got each scene once and both end alike
            for page in (mine, theirs):
                assert not any(t.startswith(TAG.decode()) for t in page.scenes)
                later = page.scenes[first:] if page is mine else page.scenes[1:]
                assert all(a != b for a, b in zip(later, later[1:])), "a scene came twice"
            assert mine.scenes[-1] == theirs.scenes[-1]
            assert len(mine.scenes) - first == len(scenes)  # the owner's page: one copy of each
            await mine.close()
            await theirs.close()
    finally:
        listener.cancel()
        await pubsub.aclose()
        await client.aclose()
