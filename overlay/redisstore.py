"""Persistence in Redis for ``serve --redis``: the store of a process that shares its channels.

Each process keeps the SQLite :class:`~overlay.store.Store` in memory as its working copy
(revision checks, the action log for duplicates, all synchronous as the channel's parts
expect) and :class:`RedisStore` sends every write on to Redis through one ordered writer
task.  :meth:`RedisStore.sync` is what the service already awaits before an answer leaves
(the durable middleware, the feed socket), so an action is acknowledged only once Redis has
it, as an fsync is awaited on one box.

What lives in Redis, per channel (keys under ``eo:ch:{id}:``): the settings document with
its revision, the log of accepted feed entries as a Redis Stream (``log``: actions, whole
games, loads), the action text under each seq (``actions``), the last seq (``meta``), a
snapshot of the game every :data:`SNAPSHOT_EVERY` entries (``snap``; older stream entries
are trimmed), the playhead, the followed file and the studio's control key (``control``).  Every write checks, in the same Lua
script, that this process still holds the channel's lease (``eo:lease:{id}``): a process
that lost its lease can no longer write, so two owners never interleave.  An action is
appended only if its seq is the next one (the same check the owner made in memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import StoreFailed
from .protocol import ChannelSettings, dump
from .store import CONTROL_KEY, Store

__all__ = ["RedisStore", "Keys", "SNAPSHOT_EVERY", "WAIT_LIMIT", "Op", "RedisTimeout"]

log = logging.getLogger("overlay.redisstore")

#: stream entries between two snapshots of a channel's game (a new owner replays at most this many)
SNAPSHOT_EVERY = 64
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

    def all(self) -> list[str]:
        return [self.settings, self.log, self.meta, self.actions, self.snap, self.playhead, self.follow, self.groups, self.control]


class RedisTimeout(StoreFailed):
    """Redis did not confirm a write within :data:`WAIT_LIMIT` (503; the write goes on)."""


@dataclass
class Op:
    """One write for Redis, in the order the channel made it."""

    channel: str
    kind: str  # action | put | load | playhead | settings | follow | control | create | delete | snapshot
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
    now (it is restarting) is retried until it can.  A write refused because the lease is
    gone or the log disagrees (another process owns the channel) calls ``on_lost``.
    """

    def __init__(self, client: Any, me: str) -> None:
        super().__init__(":memory:", synchronous="NORMAL")
        self.client = client
        self.me = me
        self.queue: list[Op] = []
        self.wake = asyncio.Event()
        self._batches: dict[str, _Batch] | None = None
        #: stream entries since the last snapshot, per channel
        self.since_snapshot: dict[str, int] = {}
        #: writes Redis has not confirmed yet, with the task that made each (it awaits them)
        self.pending: dict[asyncio.Future[None], asyncio.Task[Any] | None] = {}
        self.lost: list[str] = []  # channels whose write was refused for want of the lease
        self.on_lost: Any = None
        self._scripts: dict[str, Any] = {}
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
        self.pending[op.done] = op.waiter
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
        if b.action is not None and b.game is not None:
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
        super().save_game(channel, data, source=source, seq=seq)
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
        me = asyncio.current_task()
        mine = [f for f, task in self.pending.items() if task is me]
        if not mine:
            return
        try:
            async with asyncio.timeout(WAIT_LIMIT):
                await asyncio.gather(*(asyncio.shield(f) for f in mine))
        except TimeoutError:
            raise RedisTimeout(f"Redis did not confirm the write within {WAIT_LIMIT:g} s (it is retried)") from None

    async def run(self) -> None:
        """The writer: send queued writes in order, in pipelines; retry while Redis is away."""
        from redis.exceptions import ConnectionError as RedisDown, TimeoutError as RedisSlow, BusyLoadingError

        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.queue:
                ops, self.queue = self.queue[:512], self.queue[512:]
                delay = 0.05
                while True:
                    try:
                        results = await self._send(ops)
                        break
                    except (RedisDown, RedisSlow, BusyLoadingError, OSError) as exc:
                        log.warning("redis unreachable (%s): retrying %d writes", exc, len(ops))
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, 0.5)
                for op, result in zip(ops, results):
                    self._finish(op, result)
                    if op.done is not None:
                        self.pending.pop(op.done, None)

    def _finish(self, op: Op, result: Any) -> None:
        status = _text(result[0] if isinstance(result, list) else result)
        ok = status in ("ok", "duplicate")
        if ok and op.kind in ("action", "put", "load"):
            n = self.since_snapshot.get(op.channel, 0) + 1
            self.since_snapshot[op.channel] = n
            entry = _text(result[1]) if isinstance(result, list) and len(result) > 1 else ""
            if n >= SNAPSHOT_EVERY and entry:
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

    def _script(self, name: str, text: str) -> Any:
        if name not in self._scripts:
            self._scripts[name] = self.client.register_script(text)
        return self._scripts[name]

    async def _send(self, ops: list[Op]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for op in ops:
            k = Keys(op.channel)
            a = op.args
            if op.kind in ("action", "put", "load"):
                await self._script("append", APPEND)(
                    keys=[k.lease, k.meta, k.actions, k.log, k.playhead],
                    args=[self.me, op.kind, a["seq"], a["data"], a.get("source", ""), a["playhead"]],
                    client=pipe,
                )
            elif op.kind in ("playhead", "follow", "control"):
                key = {"playhead": k.playhead, "follow": k.follow, "control": k.control}[op.kind]
                await self._script("owned", OWNED_SET)(keys=[k.lease, key], args=[self.me, a["value"]], client=pipe)
            elif op.kind == "settings":
                await self._script("settings", SETTINGS)(keys=[k.lease, k.settings], args=[self.me, a["old"], a["doc"]], client=pipe)
            elif op.kind == "snapshot":
                await self._script("snapshot", SNAPSHOT)(
                    keys=[k.lease, k.snap, k.log], args=[self.me, a["data"], a["source"], a["seq"], a["upto"]], client=pipe
                )
            elif op.kind == "delete":
                await self._script("delete", DELETE)(keys=[k.lease, *k.all(), k.lease], args=[self.me, op.channel], client=pipe)
        return list(await pipe.execute(raise_on_error=False))


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Exception):
        return f"error: {value}"
    return str(value)
