"""Persistence in Redis for ``serve --redis``: the store of a process that shares its channels.

Each process keeps the SQLite :class:`~overlay.service.store.Store` in memory as its working copy
(revision checks, the action log for duplicates, all synchronous as the channel's parts
expect) and :class:`RedisStore` sends every write on to Redis through one ordered writer
task.  :meth:`RedisStore.sync` is what the service already awaits before an answer leaves
(the durable middleware, the feed socket), so an action is acknowledged only once Redis has
it, as an fsync is awaited on one box.

What lives in Redis, per channel (keys under ``eo:ch:{id}:``): the settings document with
its revision, the log of accepted feed entries as a Redis Stream (``log``: actions, whole
games, loads), the action text under each seq (``actions``), the last seq (``meta``), a
snapshot of the game (``snap``; older stream entries are trimmed) once
:data:`SNAPSHOT_EVERY` entries came after the last one and the game's bytes are at hand (a
whole game, or the game an action made when the channel's record writes one:
:mod:`overlay.service.record`, every ``SNAPSHOT_EVERY`` actions), the playhead, the followed
file, the studio's control key (``control``) and the channel's feed keys, hashed
(``feedkeys``).  Every write checks, in the same Lua
script, that this process still holds the channel's lease (``eo:lease:{id}``): a process
that lost its lease can no longer write, so two owners never interleave.  An action is
appended only if its seq is the next one (the same check the owner made in memory).

The scripts are loaded into Redis's script cache once per connection and the writes call
them by SHA1 (EVALSHA), a batch of writes as one MULTI.  A batch Redis refuses with NOSCRIPT
(its script cache emptied by ``SCRIPT FLUSH`` or a restart) ran none of its writes: the
scripts are loaded again and the same writes are sent again, in their order, before any
later one.  The game itself is not kept in the working copy, only sent on (see
:meth:`RedisStore.save_game`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from renderer.settings import ChannelSettings

if TYPE_CHECKING:
    from redis.asyncio import Redis

from ..service.errors import StoreFailed
from ..service.protocol import dump
from ..service.record import SNAPSHOT_EVERY
from ..service.store import CONTROL_KEY, FEED_KEYS, Store

__all__ = ["RedisStore", "Keys", "SNAPSHOT_EVERY", "WAIT_LIMIT", "Op", "RedisTimeout"]

log = logging.getLogger("overlay.cluster.redisstore")

#: seconds an answer waits for Redis before it is refused (503); the write is still retried
WAIT_LIMIT = 10.0

# Lua: append one feed entry (action, whole game or load) and the playhead, if the caller
# holds the lease and, for an action, its seq is the next one.
APPEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'lease', redis.call('GET', KEYS[1]) or ''} end
local kind = ARGV[2]
local id = ''
if kind == 'action' then
  local seq = tonumber(ARGV[3])
  local cur = tonumber(redis.call('HGET', KEYS[2], 'seq') or '0')
  if seq <= cur then
    local old = redis.call('HGET', KEYS[3], ARGV[3])
    if old == ARGV[4] then return {'duplicate', ''} end
    return {'conflict', old or ''}
  end
  if seq ~= cur + 1 then return {'gap', tostring(cur + 1)} end
  id = redis.call('XADD', KEYS[4], '*', 'kind', 'action', 'seq', ARGV[3], 'data', ARGV[4])
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
  redis.call('HSET', KEYS[2], 'seq', ARGV[3])
elseif kind == 'load' then
  id = redis.call('XADD', KEYS[4], '*', 'kind', 'load', 'seq', '0', 'data', ARGV[4], 'source', ARGV[5])
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[2], 'seq', '0')
elseif kind == 'put' then
  id = redis.call('XADD', KEYS[4], '*', 'kind', 'put', 'seq', ARGV[3], 'data', ARGV[4], 'source', ARGV[5])
end
if ARGV[6] ~= '' then redis.call('SET', KEYS[5], ARGV[6]) end
return {'ok', id}
"""

# Lua: the game as it is after stream entry ARGV[5]; older entries are no longer needed.
SNAPSHOT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lease' end
redis.call('HSET', KEYS[2], 'data', ARGV[2], 'source', ARGV[3], 'seq', ARGV[4], 'upto', ARGV[5])
redis.call('XTRIM', KEYS[3], 'MINID', ARGV[5])
return 'ok'
"""

# Lua: the settings document, if the stored revision is the one the owner replaced.
SETTINGS = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'lease', ''} end
local cur = redis.call('GET', KEYS[2])
if cur == ARGV[3] then return {'ok', ''} end
if cur and tonumber(ARGV[2]) >= 0 then
  local rev = cjson.decode(cur)['revision']
  if rev ~= tonumber(ARGV[2]) then return {'stale', cur} end
end
redis.call('SET', KEYS[2], ARGV[3])
return {'ok', ''}
"""

# Lua: a value only the lease holder may set (playhead, follow); '' deletes.
OWNED_SET = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lease' end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2]) end
return 'ok'
"""

# Lua: forget a channel (its keys, its place in the list, its lease) and tell every process.
DELETE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lease' end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('HDEL', 'eo:channels', ARGV[2])
redis.call('PUBLISH', 'eo:ctl', cjson.encode({deleted = ARGV[2]}))
return 'ok'
"""


#: the Lua script of each kind of write.  They are loaded once per connection (SCRIPT LOAD,
#: all in one MULTI) and called by their SHA1 (EVALSHA): a script called through redis-py's
#: ``Script`` on a pipeline makes it ask ``SCRIPT EXISTS`` before every pipeline, one more
#: command and round trip per write batch
SCRIPTS = {"append": APPEND, "snapshot": SNAPSHOT, "settings": SETTINGS, "owned": OWNED_SET, "delete": DELETE}
SHAS = {name: hashlib.sha1(text.encode()).hexdigest() for name, text in SCRIPTS.items()}


class Keys:
    """The Redis keys of channel ``cid``."""

    def __init__(self, cid: str) -> None:
        base = f"eo:ch:{cid}:"
        self.lease = f"eo:lease:{cid}"
        self.settings = base + "settings"
        self.log = base + "log"
        self.meta = base + "meta"
        self.actions = base + "actions"
        self.snap = base + "snap"
        self.playhead = base + "playhead"
        self.follow = base + "follow"
        self.groups = base + "groups"
        self.control = base + "control"
        self.feedkeys = base + "feedkeys"

    def all(self) -> list[str]:
        return [self.settings, self.log, self.meta, self.actions, self.snap, self.playhead, self.follow, self.groups, self.control, self.feedkeys]


class RedisTimeout(StoreFailed):
    """Redis did not confirm a write within :data:`WAIT_LIMIT` (503; the write goes on)."""


@dataclass
class Op:
    """One write for Redis, in the order the channel made it."""

    channel: str
    kind: str  # action | put | load | playhead | settings | follow | control | feedkeys | create | delete | snapshot
    args: dict[str, Any] = field(default_factory=dict)
    waiter: asyncio.Task[Any] | None = None  # the request task that awaits it (sync)
    done: asyncio.Future[None] | None = None


@dataclass
class _Batch:
    """The writes of one transaction of one channel."""

    game: tuple[bytes, str, int] | None = None
    action: tuple[int, str] | None = None
    reset: bool = False
    playhead: str | None = None


class RedisStore(Store):
    """The in-memory working copy of this process's channels; every write also goes to Redis.

    ``client`` is a ``redis.asyncio.Redis``; ``me`` this process's lease value.  The writer
    task (:meth:`run`) sends the writes in order and in pipelines; a write Redis cannot take
    now (it is restarting, or it lost the scripts) is retried until it can.  A write refused because the lease is
    gone or the log disagrees (another process owns the channel) calls ``on_lost``.
    """

    def __init__(self, client: Redis, me: str) -> None:
        super().__init__(":memory:", synchronous="NORMAL")
        self.client = client
        self.me = me
        self.queue: list[Op] = []
        self.wake = asyncio.Event()
        self._batches: dict[str, _Batch] | None = None
        #: stream entries since the last snapshot, per channel
        self.since_snapshot: dict[str, int] = {}
        #: writes Redis has not confirmed yet, by the task that made them (it awaits them)
        self.pending: dict[asyncio.Task[Any] | None, set[asyncio.Future[None]]] = {}
        self.lost: list[str] = []  # channels whose write was refused for want of the lease
        self.on_lost: Any = None
        #: the scripts are in Redis's script cache as far as this process knows (they are
        #: loaded again after a reconnect and after a NOSCRIPT reply)
        self.loaded = False
        self.replaying = False  # a takeover rebuilding a channel: nothing to send

    # ------------------------------------------------------------------ capturing writes

    def _submit(self, op: Op) -> None:
        if self.replaying:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - only the event loop writes
            return
        op.done = loop.create_future()
        op.waiter = asyncio.current_task()
        self.pending.setdefault(op.waiter, set()).add(op.done)
        self.queue.append(op)
        self.wake.set()

    def _batch(self, channel: str) -> _Batch | None:
        return None if self._batches is None else self._batches.setdefault(channel, _Batch())

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        outer = self._batches is None
        if outer:
            self._batches = {}
        try:
            with super().transaction():
                yield
        except BaseException:
            if outer:
                self._batches = None
            raise
        if outer:
            batches, self._batches = self._batches or {}, None
            for channel, b in batches.items():
                self._submit_batch(channel, b)

    def _submit_batch(self, channel: str, b: _Batch) -> None:
        args: dict[str, Any] = {"playhead": b.playhead or ""}
        if b.action is not None:
            # the game it made comes with it only when the record wrote one (a snapshot)
            args.update(seq=b.action[0], data=b.action[1], game=b.game)
            self._submit(Op(channel, "action", args))
        elif b.reset and b.game is not None:
            args.update(seq=0, data=b.game[0], source=b.game[1], game=b.game)
            self._submit(Op(channel, "load", args))
        elif b.game is not None:
            args.update(seq=b.game[2], data=b.game[0], source=b.game[1], game=b.game)
            self._submit(Op(channel, "put", args))
        elif b.playhead is not None:
            self._submit(Op(channel, "playhead", {"value": b.playhead}))

    def save_game(self, channel: str, data: bytes, *, source: str, seq: int) -> None:
        # The game goes to Redis only, not into the working copy: its ``games`` rows are
        # read by nothing here (a process starts on an empty working copy and a takeover
        # rebuilds the game from Redis).  With an action (every SNAPSHOT_EVERY), it rides
        # along for the snapshot.
        b = self._batch(channel)
        if b is None:
            self._submit_batch(channel, _Batch(game=(data, source, seq)))
        else:
            b.game = (data, source, seq)

    def log_action(self, channel: str, seq: int, data: str) -> None:
        super().log_action(channel, seq, data)
        b = self._batch(channel)
        if b is not None:
            b.action = (seq, data)

    def clear_actions(self, channel: str) -> None:
        super().clear_actions(channel)
        b = self._batch(channel)
        if b is not None:
            b.reset = True

    def save_playhead(self, channel: str, data: dict[str, Any]) -> None:
        super().save_playhead(channel, data)
        text = json.dumps(data)
        b = self._batch(channel)
        if b is None:
            self._submit(Op(channel, "playhead", {"value": text}))
        else:
            b.playhead = text

    def set_follow(self, channel: str, path: str | None) -> None:
        super().set_follow(channel, path)
        self._submit(Op(channel, "follow", {"value": path or ""}))

    def set_meta(self, key: str, value: str) -> None:
        super().set_meta(key, value)
        if key.startswith(CONTROL_KEY):  # a channel's control key goes where its next owner finds it
            self._submit(Op(key[len(CONTROL_KEY) :], "control", {"value": value}))
        elif key.startswith(FEED_KEYS):  # so do its feed keys (hashed)
            self._submit(Op(key[len(FEED_KEYS) :], "feedkeys", {"value": value}))

    def delete_meta(self, key: str) -> None:
        super().delete_meta(key)
        if key.startswith(FEED_KEYS):  # the last feed key revoked
            self._submit(Op(key[len(FEED_KEYS) :], "feedkeys", {"value": ""}))

    def create_channel(self, channel: str, settings: ChannelSettings | None = None) -> ChannelSettings:
        doc = super().create_channel(channel, settings)
        self._submit(Op(channel, "settings", {"old": -1, "doc": json.dumps(dump(doc))}))
        return doc

    def put_settings(self, channel: str, doc: ChannelSettings) -> ChannelSettings:
        new = super().put_settings(channel, doc)
        self._submit(Op(channel, "settings", {"old": doc.revision, "doc": json.dumps(dump(new))}))
        return new

    def delete_channel(self, channel: str) -> None:
        super().delete_channel(channel)
        self._submit(Op(channel, "delete"))

    # ------------------------------------------------------------------ a channel taken over

    def adopt(self, channel: str, settings: ChannelSettings, actions: dict[int, str]) -> None:
        """Put a channel read from Redis into the working copy (no write goes to Redis)."""
        with contextlib.suppress(Exception):
            Store.delete_channel(self, channel)
        self.db.execute(
            "INSERT INTO channels(id, created, revision, settings) VALUES(?, 0, ?, ?)",
            (channel, settings.revision, json.dumps(dump(settings))),
        )
        self.db.executemany(
            "INSERT INTO actions(channel, seq, data) VALUES(?, ?, ?)", [(channel, s, d) for s, d in actions.items()]
        )

    def forget(self, channel: str) -> None:
        """Drop a channel from the working copy only (another process owns it now)."""
        with contextlib.suppress(Exception):
            Store.delete_channel(self, channel)
        self.since_snapshot.pop(channel, None)

    # ------------------------------------------------------------------ durability

    async def sync(self) -> None:
        """Wait until Redis has every write the calling task made (an answer leaves after).

        Raises:
            StoreFailed: Redis refused one of them (the channel moved to another process).
            RedisTimeout: Redis did not confirm within :data:`WAIT_LIMIT` seconds.
        """
        mine = self.pending.get(asyncio.current_task())
        if not mine:
            return
        try:
            async with asyncio.timeout(WAIT_LIMIT):
                await asyncio.gather(*(asyncio.shield(f) for f in list(mine)))
        except TimeoutError:
            raise RedisTimeout(f"Redis did not confirm the write within {WAIT_LIMIT:g} s (it is retried)") from None

    async def run(self) -> None:
        """The writer: send queued writes in order, in pipelines; retry while Redis is away.

        A write Redis answers with NOSCRIPT (its script cache was emptied: ``SCRIPT FLUSH``,
        or a restart) did not run: the scripts are loaded again and the refused writes go
        first, in their order, ahead of any write queued since.
        """
        from redis.exceptions import NoScriptError

        me = asyncio.current_task()
        while True:
            _stop_if_cancelled(me)
            await self.wake.wait()
            self.wake.clear()
            while self.queue:
                _stop_if_cancelled(me)
                ops, self.queue = self.queue[:512], self.queue[512:]
                results = await self._deliver(ops)
                refused = [op for op, result in zip(ops, results) if isinstance(result, NoScriptError)]
                if refused:
                    self.loaded = False
                    log.warning("redis lost the scripts (SCRIPT FLUSH, a restart): loading them, resending %d writes", len(refused))
                    if len(refused) < len(ops):  # pragma: no cover - one MULTI sees one script cache
                        log.error("redis ran part of a write batch without its scripts; the refused writes follow the others")
                for op, result in zip(ops, results):
                    if isinstance(result, NoScriptError):
                        continue
                    self._finish(op, result)
                    self._settled(op)
                self.queue[:0] = refused

    async def _deliver(self, ops: list[Op]) -> list[Any]:
        """Redis's answer to each of ``ops``, sent again until Redis can be reached."""
        from redis.exceptions import BusyLoadingError, ConnectionError as RedisDown, TimeoutError as RedisSlow

        delay = 0.05
        while True:
            try:
                return await self._send(ops)
            except (RedisDown, RedisSlow, BusyLoadingError, OSError) as exc:
                # a new connection may reach a Redis that restarted without the scripts
                self.loaded = False
                log.warning("redis unreachable (%s): retrying %d writes", exc, len(ops))
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _settled(self, op: Op) -> None:
        mine = self.pending.get(op.waiter)
        if mine is not None and op.done is not None:
            mine.discard(op.done)
            if not mine:
                del self.pending[op.waiter]

    def _finish(self, op: Op, result: Any) -> None:
        status = _text(result[0] if isinstance(result, list) else result)
        ok = status in ("ok", "duplicate")
        if ok and op.kind in ("action", "put", "load"):
            n = self.since_snapshot.get(op.channel, 0) + 1
            self.since_snapshot[op.channel] = n
            entry = _text(result[1]) if isinstance(result, list) and len(result) > 1 else ""
            if n >= SNAPSHOT_EVERY and entry and op.args.get("game") is not None:
                data, source, seq = op.args["game"]
                self.since_snapshot[op.channel] = 0
                self.queue.insert(0, Op(op.channel, "snapshot", {"data": data, "source": source, "seq": seq, "upto": entry}))
                self.wake.set()
        if op.done is None or op.done.done():
            return
        if ok:
            op.done.set_result(None)
            return
        why = f"channel {op.channel!r}: Redis refused the {op.kind} write ({status}"
        why += f": {_text(result[1])[:200]})" if isinstance(result, list) and len(result) > 1 and result[1] else ")"
        log.error("%s; the channel is reloaded from Redis by its owner", why)
        if status in ("lease", "conflict", "gap", "stale") and op.channel not in self.lost:
            self.lost.append(op.channel)
            if self.on_lost is not None:
                self.on_lost(op.channel)
        op.done.set_exception(StoreFailed(why + "; nothing was acknowledged"))
        op.done.exception()  # retrieved: a request that stopped waiting must not log it

    async def load_scripts(self) -> None:
        """Put every script in Redis's script cache, all at once (MULTI): another process's
        write batch sees all of them or none, never a part.

        Raises:
            redis.exceptions.RedisError: Redis unreachable or refusing.
        """
        pipe = self.client.pipeline(transaction=True)
        for text in SCRIPTS.values():
            pipe.script_load(text)
        shas = [_text(sha) for sha in await pipe.execute()]
        if shas != list(SHAS.values()):  # pragma: no cover - Redis names a script by its SHA1
            raise StoreFailed(f"redis named the scripts {shas}, expected {list(SHAS.values())}")
        self.loaded = True

    async def _send(self, ops: list[Op]) -> list[Any]:
        """Redis's answer to each of ``ops``, sent as one MULTI of EVALSHA calls.

        One MULTI: Redis runs the batch with nothing in between, so after a ``SCRIPT FLUSH``
        every write of it is refused (NOSCRIPT) or none is; a batch half run, its later
        writes ahead of its refused ones, would store them out of order.
        """
        from redis.exceptions import ResponseError

        if not self.loaded:
            await self.load_scripts()
        pipe = self.client.pipeline(transaction=True)
        for op in ops:
            k = Keys(op.channel)
            a = op.args
            if op.kind in ("action", "put", "load"):
                keys = [k.lease, k.meta, k.actions, k.log, k.playhead]
                pipe.evalsha(SHAS["append"], 5, *keys, self.me, op.kind, a["seq"], a["data"], a.get("source", ""), a["playhead"])
            elif op.kind in ("playhead", "follow", "control", "feedkeys"):
                key = {"playhead": k.playhead, "follow": k.follow, "control": k.control, "feedkeys": k.feedkeys}[op.kind]
                pipe.evalsha(SHAS["owned"], 2, k.lease, key, self.me, a["value"])
            elif op.kind == "settings":
                pipe.evalsha(SHAS["settings"], 2, k.lease, k.settings, self.me, a["old"], a["doc"])
            elif op.kind == "snapshot":
                pipe.evalsha(SHAS["snapshot"], 3, k.lease, k.snap, k.log, self.me, a["data"], a["source"], a["seq"], a["upto"])
            elif op.kind == "delete":
                keys = [k.lease, *k.all(), k.lease]
                pipe.evalsha(SHAS["delete"], len(keys), *keys, self.me, op.channel)
        try:
            return list(await pipe.execute(raise_on_error=False))
        except ResponseError as exc:  # refused while queued (EXECABORT: out of memory, read-only): none ran
            return [exc] * len(ops)


def _stop_if_cancelled(task: asyncio.Task[Any] | None) -> None:
    """Stop a task whose cancellation was swallowed: redis-py's pipeline can eat a cancel
    that lands while it runs (seen with redis 8.1 on Python 3.11), and the writer would then
    wait for writes forever instead of stopping.

    Raises:
        asyncio.CancelledError: ``task`` was asked to stop.
    """
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def text_of(value: bytes | str) -> str:
    """A reply as text: the client is made without ``decode_responses`` (replies are bytes;
    its types allow text too)."""
    return value.decode() if isinstance(value, bytes) else value


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Exception):
        return f"error: {value}"
    return str(value)
