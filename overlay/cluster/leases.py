"""``serve --redis``: the channels of several service processes, shared through Redis.

Each channel's Director runs in exactly one process, the one holding the channel's lease
(``eo:lease:{id}``, a key that expires :data:`LEASE_TTL` seconds after its holder last
renewed it).  Every process renews its leases every :data:`TICK` seconds and takes free
channels while it holds fewer than its share (channels / live processes, rounded up), so a
dead owner's channels are taken over within ``LEASE_TTL + TICK`` seconds, and a process that
holds more than its share hands one back each tick.  Taking a channel over rebuilds it from
Redis (:mod:`overlay.cluster.takeover`): the settings, the last snapshot of the game and the
stream entries after it, the action log, the playhead and the studio's control key; a
followed file the new owner cannot read at the stored path is reported on the channel.

Pages connect to any process (:mod:`overlay.cluster.relay`).  The owner's scene pump treats each
(output, size) group that some process has pages in as one more page of the channel
(:class:`RemotePage`): its scenes are published on ``eo:scene:{id}:{group}``, and every
process with pages in that group passes them on to its own pages' outboxes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from aiohttp import web

from renderer.settings import OUTPUTS, OutputName

if TYPE_CHECKING:
    from redis.asyncio import Redis

from ..service.channel import Channel
from ..service.clients import Outbox, Page, StateSub
from ..service.hub import Hub
from ..service.store import CONTROL_KEY, FEED_KEYS, Store
from . import takeover
from .redisstore import Keys, RedisStore, text_of

__all__ = ["Cluster", "RemotePage", "RemoteSub", "LEASE_TTL", "TICK", "group_name", "parse_group"]

log = logging.getLogger("overlay.cluster")

#: seconds a lease lasts without renewal (a dead owner's channels wait at most this long)
LEASE_TTL = 2.0
#: seconds between two rounds of renewing leases and taking free channels
TICK = 0.25
#: seconds a process must hold a channel before it hands it back to even out the load
SETTLE = 3.0

# Lua: renew a lease only while holding it.
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
"""
# Lua: publish a channel's message only while holding its lease (the fence: a process that
# froze past its lease and resumed never puts its stale pictures on air).
FENCED_PUBLISH = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
return redis.call('PUBLISH', ARGV[2], ARGV[3])
"""
#: seconds of a lease this process does not count on (renewals are timed from when they were
#: sent; this margin covers the clocks of Redis and this process drifting apart)
MARGIN = 0.25
# Lua: give a lease back only while holding it.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


#: the mark before a group message its publisher's own relay delivered already:
#: TAG + process id + TAG + the message (a page never sees it: relays take it off)
TAG = b"\x1e"


def tagged(me: str, text: str | bytes) -> bytes:
    """``text`` marked as published by process ``me`` (see :meth:`Cluster.send_group`)."""
    return TAG + me.encode() + TAG + (text.encode() if isinstance(text, str) else text)


def group_name(output: str, width: int, height: int) -> str:
    """The pub/sub name part of a page group ("program:1920x1080"); state clients: "state:clean"."""
    return f"{output}:{width}x{height}"


def parse_group(name: str) -> tuple[str, int, int] | None:
    """The (output, width, height) of a page group name; None for a state group or junk."""
    output, _, size = name.partition(":")
    w, _, h = size.partition("x")
    if output not in OUTPUTS or not (w.isdigit() and h.isdigit()):
        return None
    return output, int(w), int(h)


def _report(task: asyncio.Task[None]) -> None:
    """A background task of the cluster must never end quietly: log why it stopped."""
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped", task.get_name(), exc_info=task.exception())


class _Publish(Outbox):
    """An outbox that publishes on a Redis channel instead of writing to a socket (fenced by
    the channel's lease)."""

    def __init__(self, cluster: Cluster, topic: str, channel: str) -> None:
        super().__init__(web.WebSocketResponse(), None, name=topic)
        self.cluster = cluster
        self.topic = topic
        self.channel = channel
        self.group = topic[len(f"eo:scene:{channel}:") :]

    def offer(self, text: str | bytes, after: Callable[[], None] | None = None) -> None:
        self.cluster.send_group(self.channel, self.group, self.topic, text)
        self.sent += 1
        if after is not None:
            after()

    def offer_aside(self, text: str | bytes) -> None:
        # the receiving relay tells an aside (an analysis message) by its type
        self.cluster.send_group(self.channel, self.group, self.topic, text)
        self.sent += 1

    async def stop(self) -> None:
        return None


class RemotePage(Page):
    """Every page of one (output, size) group on every process, as one page of the owner."""

    topic: str = ""

    def attach(self, cluster: Cluster, channel: str) -> RemotePage:
        self.topic = f"eo:scene:{channel}:{group_name(self.output, self.width, self.height)}"
        self.outbox = _Publish(cluster, self.topic, channel)
        return self

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.ws, None)

    def status(self, now: float) -> dict[str, Any]:
        out = super().status(now)
        out["remote"] = "redis " + self.topic
        return out


class RemoteSub(StateSub):
    """Every state-stream client of one output on every process, as one client of the owner."""

    def attach(self, cluster: Cluster, channel: str) -> RemoteSub:
        self.outbox = _Publish(cluster, f"eo:scene:{channel}:state:{self.output}", channel)
        return self


class Cluster:
    """This process's part in a set of processes sharing channels through Redis."""

    def __init__(self, url: str, hub: Hub, store: RedisStore, client: Redis) -> None:
        self.url = url
        self.hub = hub
        self.store = store
        self.client = client
        self.me = store.me
        self.base = ""  # this process's HTTP address (other processes forward requests to it)
        self.remote: dict[str, dict[str, RemotePage | RemoteSub]] = {}
        self.acquired: dict[str, float] = {}  # channel -> when this process took it
        self.procs = 1
        self.outgoing: deque[tuple[str, str | bytes, str | None]] = deque(maxlen=4096)
        self.fenced = 0  # messages not published: this process no longer held their channel
        self.publish_wake = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.relay: Any = None  # overlay.cluster.relay.Relay (set by it)
        #: channel -> its page groups with members on another process, as last read from
        #: Redis (a channel missing here is not known yet: its scenes all go through Redis)
        self.elsewhere: dict[str, set[str]] = {}
        #: channel -> group -> when a process elsewhere last asked to join it (monotonic): kept
        #: in :attr:`elsewhere` by a tick whose read of the announced groups came before it
        self.asked: dict[str, dict[str, float]] = {}
        self.takeovers: list[dict[str, Any]] = []  # when and how long each takeover took
        self.redis_ok = True
        self.renewed: dict[str, float] = {}  # channel -> when its lease was last renewed
        self.listening = asyncio.Event()  # set once this process's address is known
        self.ticks = 0
        self.background: set[asyncio.Task[None]] = set()
        store.on_lost = self._lost

    @staticmethod
    def new_id() -> str:
        return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    # ------------------------------------------------------------------ lifetime

    def listen(self, base: str) -> None:
        """This process's HTTP address, for the others to forward requests to."""
        self.base = base
        self.listening.set()

    def start(self, base: str) -> None:
        if base:
            self.listen(base)
        loop = asyncio.get_running_loop()
        self.tasks = [
            loop.create_task(self.store.run(), name="redis-writer"),
            loop.create_task(self._publisher(), name="redis-publisher"),
            loop.create_task(self._leases(), name="redis-leases"),
        ]
        for task in self.tasks:
            task.add_done_callback(_report)

    async def stop(self) -> None:
        """Save playheads, hand every lease back (the others take over at once), stop."""
        now = self.hub.clock()
        for cid, ch in list(self.hub.channels.items()):
            with contextlib.suppress(Exception):
                ch.save_playhead(now)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                while self.store.pending or self.store.queue:
                    await asyncio.sleep(0.01)
        with contextlib.suppress(Exception):  # Redis away: the leases simply expire
            async with asyncio.timeout(2.0):
                pipe = self.client.pipeline(transaction=False)
                for cid in list(self.hub.channels):
                    pipe.eval(RELEASE, 1, Keys(cid).lease, self.me)
                pipe.zrem("eo:procs", self.me)
                await pipe.execute()
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def describe(self) -> dict[str, Any]:
        """This process's part: its id, the channels it runs, the processes alive, the
        takeovers it made, and the persistence Redis runs with."""
        persistence: dict[str, Any] = {}
        try:
            for name in ("appendonly", "appendfsync"):
                reply = await self.client.config_get(name)
                persistence.update({text_of(k): None if v is None else text_of(v) for k, v in reply.items() if k is not None})
        except Exception as exc:  # CONFIG may be renamed or refused on a managed Redis
            persistence = {"unknown": str(exc)[:200]}
        return {
            "process": self.me,
            "address": self.base,
            "processes": self.procs,
            "runs": sorted(self.hub.channels),
            "redisReachable": self.redis_ok,
            "redisPersistence": persistence,
            "takeovers": self.takeovers[-20:],
            "fencedPublishes": self.fenced,
        }

    async def check_persistence(self) -> None:
        """Warn when Redis would lose acknowledged writes on a restart (no append-only file)."""
        try:
            info = await self.describe()
        except Exception:  # pragma: no cover - Redis away at start: the writer retries
            return
        p = info["redisPersistence"]
        if p.get("appendonly") == "no":
            log.warning(
                "redis at %s runs without its append-only file: a Redis restart loses acknowledged actions "
                "(set appendonly yes, appendfsync always; docs/scale-out.md)", self.url
            )

    # ------------------------------------------------------------------ publishing scenes

    def publish(self, topic: str, text: str | bytes, *, channel: str | None = None) -> None:
        """Publish ``text`` on ``topic``; with ``channel``, only while this process holds
        that channel's lease (checked here, then again in Redis as it publishes)."""
        self.outgoing.append((topic, text, channel))
        self.publish_wake.set()

    def send_group(self, cid: str, group: str, topic: str, text: str | bytes) -> None:
        """A message of a page group of ``cid`` (which this process runs): to this process's
        own members of the group at once, and through Redis to the other processes' members.

        While this process can count on holding the channel's lease (:meth:`holds`), its own
        pages and state clients get the message here, without a round trip through Redis;
        it is then published only when another process has members of the group (or when
        that is not known yet), marked with this process's id so that its own relay passes
        over the copy Redis sends back (:func:`tagged`).  Fenced as a publish is: a process
        that cannot count on the lease delivers nothing itself."""
        relay = self.relay
        if relay is not None and self.holds(cid) and relay.deliver(cid, group, text):
            known = self.elsewhere.get(cid)
            if known is not None and group not in known:
                return
            text = tagged(self.me, text)
        self.publish(topic, text, channel=cid)

    def holds(self, cid: str) -> bool:
        """Whether this process can count on holding ``cid``'s lease now: it runs the
        channel and renewed the lease less than ``LEASE_TTL - MARGIN`` seconds ago (a
        process that was frozen, or whose renewals failed, cannot)."""
        if cid not in self.hub.channels:
            return False
        renewed = self.renewed.get(cid, self.acquired.get(cid))
        return renewed is not None and time.monotonic() - renewed < LEASE_TTL - MARGIN

    async def confirm(self, cid: str) -> bool:
        """Whether this process still holds ``cid``'s lease, asking Redis when :meth:`holds`
        cannot say (renewing it if so); a lease found lost stops the channel here at once.
        False when Redis cannot be asked (the lease loop stops the channel if that lasts)."""
        if self.holds(cid):
            return True
        if cid not in self.hub.channels:
            return False
        sent = time.monotonic()
        try:
            async with asyncio.timeout(LEASE_TTL):
                ok = await self.client.eval(RENEW, 1, Keys(cid).lease, self.me, int(LEASE_TTL * 1000))
        except Exception:  # Redis unreachable (or not answering): not counted on
            return False
        if ok:
            self.renewed[cid] = sent
            return True
        log.warning("channel %s: lease lost (this process was frozen or cut off); another process runs it now", cid)
        await self.release(cid, save=False)
        return False

    async def _publisher(self) -> None:
        while True:
            await self.publish_wake.wait()
            self.publish_wake.clear()
            while self.outgoing:
                batch = [self.outgoing.popleft() for _ in range(min(len(self.outgoing), 256))]
                try:
                    pipe = self.client.pipeline(transaction=False)
                    sent = 0
                    for topic, text, cid in batch:
                        if cid is None:
                            pipe.publish(topic, text)
                        elif self.holds(cid):
                            pipe.eval(FENCED_PUBLISH, 1, Keys(cid).lease, self.me, topic, text)
                        else:
                            self.fenced += 1
                            continue
                        sent += 1
                    if sent:
                        replies = await pipe.execute()
                        self.fenced += sum(1 for r in replies if r == -1)
                except Exception as exc:  # Redis away: scenes are pictures, the next one follows
                    log.warning("publish failed (%s); %d scenes dropped", exc, len(batch))
                    await asyncio.sleep(0.1)

    # ------------------------------------------------------------------ leases

    async def owner_url(self, cid: str) -> str | None:
        """The HTTP address of the process holding ``cid``'s lease (None: nobody now)."""
        holder = await self.client.get(Keys(cid).lease)
        if holder is None:
            return None
        url = await self.client.get(f"eo:proc:{text_of(holder)}")
        return None if url is None else text_of(url)

    async def _leases(self) -> None:
        ttl = int(LEASE_TTL * 1000)
        await self.listening.wait()
        await self.check_persistence()
        while True:
            started = time.monotonic()
            try:
                await self._tick(ttl)
                if not self.redis_ok:
                    log.warning("redis is back")
                self.redis_ok = True
            except Exception as exc:
                if self.redis_ok:
                    log.warning("redis unreachable: %s", exc)
                self.redis_ok = False
                # a lease cannot have outlived LEASE_TTL without renewal: stop running those channels
                for cid, when in list(self.acquired.items()):
                    if time.monotonic() - self.renewed.get(cid, when) > LEASE_TTL:
                        await self.release(cid, save=False)
            await asyncio.sleep(max(0.0, TICK - (time.monotonic() - started)))

    async def _tick(self, ttl: int) -> None:
        now_ms = int(time.time() * 1000)
        pipe = self.client.pipeline(transaction=False)
        pipe.set(f"eo:proc:{self.me}", self.base, px=ttl)
        pipe.zadd("eo:procs", {self.me: now_ms + ttl})
        pipe.zremrangebyscore("eo:procs", 0, now_ms)
        pipe.zcard("eo:procs")
        pipe.hkeys("eo:channels")
        owned = list(self.hub.channels)
        for cid in owned:
            pipe.eval(RENEW, 1, Keys(cid).lease, self.me, ttl)
        for cid in owned:
            pipe.hgetall(Keys(cid).groups)
        sent = time.monotonic()  # a renewed lease lasts at least LEASE_TTL from here
        res = await pipe.execute()
        self.procs = max(1, int(res[3]))
        channels = [c.decode() for c in res[4]]
        renew = res[5 : 5 + len(owned)]
        groups = res[5 + len(owned) :]
        t = time.monotonic()
        self.ticks += 1
        for cid, ok, g in zip(owned, renew, groups):
            if not ok:
                log.warning("channel %s: lease lost; another process runs it now", cid)
                await self.release(cid, save=False)
                continue
            self.renewed[cid] = sent
            self._sync_groups(cid, g, now_ms)
            if self.ticks % 4 == 0 and t - self.acquired.get(cid, t) > 1.0:
                ch = self.hub.channels.get(cid)
                if ch is not None:
                    ch.save_playhead(self.hub.clock())  # a takeover resumes from here
        share = math.ceil(len(channels) / self.procs) if channels else 0
        mine = len(self.hub.channels)
        if mine > share:
            # only channels this process has held a while (one being created is not settled)
            settled = [c for c in self.hub.channels if c in self.acquired and t - self.acquired[c] > SETTLE]
            if settled:
                await self.release(settled[-1], save=True)
            return
        for cid in channels:
            if mine >= share:
                break
            if cid in self.hub.channels:
                continue
            asked = time.monotonic()
            if await self.client.set(Keys(cid).lease, self.me, nx=True, px=ttl):
                await self.take(cid, leased=asked)
                mine += 1

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background, keeping a reference until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def _lost(self, cid: str) -> None:
        """A write was refused (lease gone or log ahead of us): drop the channel here."""
        self._spawn(self.release(cid, save=False))

    async def release(self, cid: str, *, save: bool) -> None:
        """Stop running ``cid`` here (its pages elsewhere are served by the next owner)."""
        ch = self.hub.channels.pop(cid, None)
        self.acquired.pop(cid, None)
        self.renewed.pop(cid, None)
        self.remote.pop(cid, None)
        self.elsewhere.pop(cid, None)
        self.asked.pop(cid, None)
        if ch is not None:
            if save:
                with contextlib.suppress(Exception):
                    ch.save_playhead(self.hub.clock())
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(2.0):
                        while any(op.channel == cid for op in self.store.queue) or self.store.pending:
                            await asyncio.sleep(0.01)
            ch.fanout.pages = {p for p in ch.fanout.pages if not isinstance(p, RemotePage)}
            ch.fanout.subs = {s for s in ch.fanout.subs if not isinstance(s, RemoteSub)}
            await ch.close(reason="channel moved to another process")
        self.store.forget(cid)
        if cid in self.store.lost:
            self.store.lost.remove(cid)
        if save:
            with contextlib.suppress(Exception):
                await self.client.eval(RELEASE, 1, Keys(cid).lease, self.me)

    async def take(self, cid: str, *, leased: float | None = None) -> None:
        """Rebuild ``cid`` from Redis and run it here (this process holds its lease, taken
        at ``leased`` on the monotonic clock)."""
        began = time.monotonic()
        saved = await takeover.read(self.client, cid)
        game, seq, error = takeover.rebuild(cid, saved.snap, saved.entries)
        self.store.adopt(cid, saved.settings, saved.actions)
        if saved.problem is not None:
            self.store.settings_problems[cid] = saved.problem
        # the studio's control key: its links keep working across a takeover, and a key
        # revoked meanwhile is not revived from this process's earlier copy
        Store.set_meta(self.store, CONTROL_KEY + cid, saved.control)
        # its feed keys too (a key revoked meanwhile is gone here as well)
        if saved.feedkeys:
            Store.set_meta(self.store, FEED_KEYS + cid, saved.feedkeys)
        else:
            Store.delete_meta(self.store, FEED_KEYS + cid)
        self.store.since_snapshot[cid] = len(saved.entries)
        path = saved.follow
        unreadable = None if path is None else await asyncio.to_thread(takeover.unreadable, self.me, cid, path)
        ch = Channel(
            self.hub, cid, saved.settings, game=game, seq=seq, playhead=saved.playhead,
            follow=None if unreadable else path, load_error=saved.playhead_error or error,
        )
        if cid in self.hub.channels:  # pragma: no cover - a lease is taken once
            return
        self.hub.channels[cid] = ch
        self.acquired[cid] = time.monotonic()
        self.renewed[cid] = self.acquired[cid] if leased is None else leased
        self._sync_groups(cid, saved.groups, int(time.time() * 1000))
        ch.start()
        if unreadable:
            # not followed here (the channel keeps its game from Redis); the path stays, so a
            # process that can read it follows it again when it takes the channel over
            ch.follow.path, ch.follow.error = path, unreadable
            log.error("%s", unreadable)
        took = time.monotonic() - began
        self.takeovers.append({"channel": cid, "entries": len(saved.entries), "seconds": round(took, 4), "at": time.time()})
        log.info("channel %s taken over (%d stream entries replayed in %.3f s)", cid, len(saved.entries), took)

    # ------------------------------------------------------------------ remote page groups

    def _sync_groups(self, cid: str, raw: dict[bytes, bytes], now_ms: int) -> None:
        """Make the owner's remote pages match the groups processes announced (expired go).

        A process announces each group it has members of as ``"GROUP PROCESS"`` (an older
        field is the group alone, its process unknown: counted as another process's)."""
        fresh = [k.decode() for k, v in raw.items() if int(v) > now_ms]
        gone = [k for k, v in raw.items() if int(v) <= now_ms]
        if gone:  # no process renewed them: forget them in Redis too
            self._spawn(self._forget_groups(cid, gone))
        live = set()
        elsewhere = set()
        for field in fresh:
            name, _, proc = field.partition(" ")
            live.add(name)
            if proc != self.me:
                elsewhere.add(name)
        if cid in self.hub.channels:
            asked = self.asked.get(cid, {})
            recent = time.monotonic() - LEASE_TTL
            for name, when in list(asked.items()):
                if when >= recent:
                    elsewhere.add(name)
                else:
                    del asked[name]
            self.elsewhere[cid] = elsewhere
        for name in live:
            self.join(cid, name, snapshot=False)
        have = self.remote.get(cid, {})
        ch = self.hub.channels.get(cid)
        for name in [n for n in have if n not in live]:
            client = have.pop(name)
            if ch is not None:
                if isinstance(client, RemotePage):
                    ch.fanout.pages.discard(client)
                else:
                    ch.fanout.subs.discard(client)

    async def _forget_groups(self, cid: str, names: list[bytes]) -> None:
        with contextlib.suppress(Exception):
            await self.client.hdel(Keys(cid).groups, *names)

    def join(self, cid: str, name: str, *, snapshot: bool, reply: str | None = None) -> None:
        """A process has pages in group ``name`` of ``cid``: publish that group's scenes.
        With ``snapshot``, the current picture goes at once: to the whole group when the
        group is new, else only to ``reply`` (the asking process: the other pages of the
        group keep their animation)."""
        ch = self.hub.channels.get(cid)
        if ch is None:
            return
        groups = self.remote.setdefault(cid, {})
        client = groups.get(name)
        now = self.hub.clock()
        if client is None:
            if name.startswith("state:"):
                output = name[6:]
                if output not in OUTPUTS:
                    return
                out: OutputName = output
                sub = RemoteSub(ws=web.WebSocketResponse(), output=out).attach(self, cid)
                groups[name] = sub
                ch.fanout.subs.add(sub)
            else:
                g = parse_group(name)
                if g is None:
                    return
                page = RemotePage(
                    ws=web.WebSocketResponse(), output=g[0], remote="redis", connected_at=now, width=g[1], height=g[2]  # type: ignore[arg-type]
                ).attach(self, cid)
                groups[name] = page
                ch.fanout.pages.add(page)
            snapshot = True
        elif snapshot and reply is not None:
            client = groups[name]
            if isinstance(client, RemotePage):
                text = ch.fanout.scene_text(client.output, client.size, now, snapshot=True)[0]
            else:
                text = ch.fanout.state_text(client.output, now)
            self.publish(reply, json.dumps({"channel": cid, "group": name, "text": text}), channel=cid)
            return
        if snapshot:
            client = groups[name]
            if isinstance(client, RemotePage):
                ch.fanout.send_snapshot(client)
            else:
                ch.fanout.send_state(client)
            ch.poke()

    def on_control(self, data: bytes) -> None:
        """A message on ``eo:ctl``: a group joined somewhere, or a channel was deleted."""
        try:
            msg = json.loads(data)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if "join" in msg and msg.get("channel") in self.hub.channels:
            reply = msg.get("reply")
            if reply != f"eo:snap:{self.me}":  # a member on another process: publish its group from now on
                cid, group = str(msg["channel"]), str(msg["join"])
                self.asked.setdefault(cid, {})[group] = time.monotonic()
                known = self.elsewhere.get(cid)
                if known is not None:
                    known.add(group)
            self.join(str(msg["channel"]), str(msg["join"]), snapshot=True, reply=reply if isinstance(reply, str) and reply.startswith("eo:snap:") else None)
        if "deleted" in msg and self.relay is not None:
            self._spawn(self.relay.channel_deleted(str(msg["deleted"])))
