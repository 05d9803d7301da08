"""``serve --redis``: the pages and state clients of a process, fed from Redis, and the
forwarding of a request to the process that runs its channel.

Pages and state clients connect to any process.  The process keeps them here, by channel
and group (output and size), in the same per-page outboxes as on one box
(:class:`~overlay.service.clients.Page`), subscribes to the group's scenes in Redis and passes each
message on; it announces its groups in Redis (``eo:ch:{id}:groups``, renewed every tick) so
the channel's owner, and after a failover the next owner, publishes them.  A page that joins
a group gets the last scene of the group at once (a snapshot), or asks the owner for one
(``eo:ctl``) when the group is new here.

A request for a channel another process runs is forwarded over HTTP to that process (its
address is in Redis beside its lease; :meth:`Relay.forward`), so validation, 409s, revisions
and playback control are the owner's, as on one box.  While a channel changes hands (its
owner died) the request waits for the next owner, up to ``serve --forward-wait`` seconds
(:data:`~overlay.service.config.FORWARD_WAIT`, 8, by default).  A logger's feed socket on
such a process forwards each frame the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, cast

import aiohttp
from aiohttp import WSMsgType, web
from pydantic import ValidationError

from renderer.settings import OUTPUTS, ChannelSettings

from ..service.auth import check_origin, has_token
from ..service.clients import Page, StateSub
from ..service.config import FORWARD_WAIT, ServerSettings
from ..service.errors import BadRequest, NotFound, StoreFailed
from ..service.fanout import draw_size
from ..service.keys import SETTINGS, SOCKETS
from ..service.protocol import FeedRefused, dump
from ..service.routes.pagesocket import open_page, open_state, read_page
from ..service.store import settings_from_text
from .leases import LEASE_TTL, TAG, TICK, Cluster, group_name
from .redisstore import Keys, text_of

__all__ = ["Relay", "FORWARD_WAIT", "FORWARDED"]

log = logging.getLogger("overlay.cluster.relay")

#: seconds between two reads of the owner's lease while a forwarded request waits for its answer
WATCH = 0.25
#: seconds between two tries while Redis cannot be reached
REDIS_RETRY = 0.2
#: how an analysis message (overlay.service.analysis.message) begins: passed on as an aside
ASIDE = b'{"type":"analysis"'
#: header on a forwarded request (the receiver never forwards it again)
FORWARDED = "X-Overlay-Forwarded"



@dataclass(frozen=True)
class _Shape:
    """What :func:`~overlay.service.routes.common.page_query` reads of a channel: its settings."""

    settings: Any


class _Members:
    """This process's pages and state clients of one channel group."""

    def __init__(self) -> None:
        self.pages: set[Page] = set()
        self.subs: set[StateSub] = set()
        #: the group's last scene (or state) message, as Redis delivered it (UTF-8 bytes:
        #: pages get them as they are, never decoded and encoded again)
        self.last: bytes | None = None
        #: members that joined before this process had any picture of the group: the
        #: owner's snapshot for this process goes to them (the others are drawing already)
        self.fresh: set[Page | StateSub] = set()

    def __bool__(self) -> bool:
        return bool(self.pages or self.subs)


class Relay:
    """Pages and state clients of every channel on this process, fed from Redis."""

    def __init__(self, cluster: Cluster, settings: ServerSettings) -> None:
        self.cluster = cluster
        self.settings = settings
        self.client = cluster.client
        self.groups: dict[str, dict[str, _Members]] = {}  # channel -> group -> members
        self.pubsub: Any = None
        self.session: aiohttp.ClientSession | None = None
        self.task: asyncio.Task[None] | None = None
        self.announce_task: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()
        self.me = cluster.me.encode()
        self.reply = f"eo:snap:{cluster.me}"  # where owners send this process its snapshots
        cluster.relay = self

    # ------------------------------------------------------------------ lifetime

    def start(self) -> None:
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self._listen(), name="redis-subscriber")
        self.announce_task = loop.create_task(self._announce(), name="redis-groups")

    async def stop(self) -> None:
        for task in (self.task, self.announce_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self.session is not None:
            await self.session.close()

    @staticmethod
    def topic(cid: str, group: str) -> str:
        return f"eo:scene:{cid}:{group}"

    async def _listen(self) -> None:
        """Receive scenes and control messages; after a lost connection, subscribe again
        (every group then asks its owner for a snapshot)."""
        while True:
            try:
                self.pubsub = self.client.pubsub()
                await self.pubsub.subscribe("eo:ctl", self.reply)
                for cid, groups in self.groups.items():
                    for g, members in groups.items():
                        # scenes published while the connection was down are gone: every
                        # member gets the owner's current picture (asked on the confirmation)
                        members.fresh = {*members.pages, *members.subs}
                        await self.pubsub.subscribe(self.topic(cid, g))
                self.subscribed.set()
                async for msg in self.pubsub.listen():
                    self._on_message(msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("redis subscription lost (%s); subscribing again", exc)
                self.subscribed.clear()
                with contextlib.suppress(Exception):
                    await self.pubsub.aclose()
                await asyncio.sleep(0.2)

    def _on_message(self, msg: dict[str, Any]) -> None:
        name = msg["channel"].decode() if isinstance(msg.get("channel"), bytes) else str(msg.get("channel"))
        if name == "eo:ctl":
            if msg["type"] == "message":
                self.cluster.on_control(msg["data"])
            return
        if name == self.reply:
            if msg["type"] == "message":
                self._on_snapshot(msg["data"])
            return
        if not name.startswith("eo:scene:"):
            return
        cid, _, group = name[9:].partition(":")  # eo:scene:{id}:{group}; ids hold no ":"
        members = self.groups.get(cid, {}).get(group)
        if members is None:
            return
        if msg["type"] == "subscribe":
            # subscribed: now the owner's snapshot cannot be missed
            self._ask(cid, group)
            return
        if msg["type"] != "message":
            return
        text = msg["data"]
        if not isinstance(text, bytes):  # pragma: no cover - the client is made without decode_responses
            text = str(text).encode()
        if text.startswith(TAG):
            # marked by its publisher: passed over when that is this process (its members
            # have it already, Cluster.send_group), else taken off
            origin, _, text = text[1:].partition(TAG)
            if origin == self.me:
                return
        self._offer(members, text)

    def deliver(self, cid: str, group: str, text: str | bytes) -> bool:
        """A message of group ``group`` of ``cid`` from the owner in this process, to this
        process's members of the group; False when it has none."""
        members = self.groups.get(cid, {}).get(group)
        if not members:
            return False
        self._offer(members, text.encode() if isinstance(text, str) else text)
        return True

    @staticmethod
    def _offer(members: _Members, text: bytes) -> None:
        if text.startswith(ASIDE):
            # an analysis message: after the scene, never replacing it, pages only
            for page in members.pages:
                page.outbox.offer_aside(text)
            return
        members.last = text
        members.fresh.clear()
        for page in members.pages:
            page.outbox.offer(text)
        for sub in members.subs:
            sub.outbox.offer(text)

    def _on_snapshot(self, data: bytes) -> None:
        """The owner's picture for members that have none yet (never older than what the
        group sent since: a group message clears :attr:`_Members.fresh`)."""
        try:
            msg = json.loads(data)
            members = self.groups[msg["channel"]][msg["group"]]
            text = str(msg["text"]).encode()
        except (ValueError, KeyError, TypeError):
            return
        if members.last is None:
            members.last = text
        for client in members.fresh:
            client.outbox.offer(text)
        members.fresh.clear()

    def _ask(self, cid: str, group: str) -> None:
        self.cluster.publish("eo:ctl", json.dumps({"channel": cid, "join": group, "reply": self.reply}))

    async def _announce(self) -> None:
        """Keep this process's groups alive in Redis (the owner drops groups not renewed)."""
        while True:
            try:
                expiry = int(time.time() * 1000 + LEASE_TTL * 2000)
                pipe = self.client.pipeline(transaction=False)
                for cid, groups in self.groups.items():
                    live = [g for g, m in groups.items() if m]
                    if live:
                        pipe.hset(Keys(cid).groups, mapping={self._field(g): expiry for g in live})
                await pipe.execute()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("groups not announced: %s", exc)
            await asyncio.sleep(TICK * 2)

    def _field(self, group: str) -> str:
        """How this process announces its members of ``group`` (the owner publishes a group
        through Redis only while another process announces it)."""
        return f"{group} {self.cluster.me}"

    async def _join(self, cid: str, group: str) -> _Members:
        groups = self.groups.setdefault(cid, {})
        members = groups.get(group)
        if members is None:
            members = groups[group] = _Members()
            expiry = int(time.time() * 1000 + LEASE_TTL * 2000)
            with contextlib.suppress(Exception):
                await self.client.hset(Keys(cid).groups, self._field(group), expiry)
            if self.pubsub is not None and self.subscribed.is_set():
                with contextlib.suppress(Exception):
                    await self.pubsub.subscribe(self.topic(cid, group))  # its confirmation asks for a snapshot
        return members

    async def _leave(self, cid: str, group: str) -> None:
        groups = self.groups.get(cid, {})
        members = groups.get(group)
        if members is not None and not members:
            del groups[group]
            if not groups:
                self.groups.pop(cid, None)
            with contextlib.suppress(Exception):
                await self.pubsub.unsubscribe(self.topic(cid, group))

    async def channel_deleted(self, cid: str) -> None:
        bye = json.dumps({"type": "bye", "reason": "channel deleted"})
        for members in list(self.groups.get(cid, {}).values()):
            clients: list[Page | StateSub] = [*members.pages, *members.subs]
            for c in clients:
                with contextlib.suppress(Exception):
                    await c.ws.send_str(bye)
                    await c.ws.close()

    # ------------------------------------------------------------------ sockets

    async def settings_of(self, cid: str) -> ChannelSettings:
        """The channel's settings from Redis (the defaults for a channel created a moment
        ago, whose settings are on their way).

        Raises:
            NotFound: no such channel.
            StoreFailed: Redis unreachable for ``serve --forward-wait`` seconds (503).
        """
        if not await self.exists(cid):
            raise NotFound(f"no channel {cid!r}", channel=cid)
        try:
            raw = await self.client.get(Keys(cid).settings)
        except Exception as exc:
            raise StoreFailed(f"channel {cid!r}: Redis cannot be reached ({str(exc)[:160] or type(exc).__name__}); retry") from None
        return settings_from_text(text_of(raw))[0] if raw else ChannelSettings()

    async def page_socket(self, request: web.Request) -> web.WebSocketResponse:
        """``/ws/overlay/{channel}`` as on one box, fed from Redis."""
        from ..service.routes.common import hub_of, is_monitor, page_query

        cid = request.match_info["channel"]
        try:
            settings = await self.settings_of(cid)
        except NotFound as exc:
            hub_of(request).page_waiting(cid, str(exc), monitor=is_monitor(request))
            raise

        output, width, height = page_query(request, cast(Any, _Shape(settings)))
        check_origin(request, request.app[SETTINGS].allow_origins)
        # sizes as on one box (draw_size): a page without the token shares the nearest allowed
        trusted = has_token(request) or output == "preview"  # preview is admitted by the token only
        reserved = {(o.width, o.height) for o in (settings.output(n) for n in OUTPUTS)}
        taken = {p.size for m in self.groups.get(cid, {}).values() for p in m.pages if p.trusted}
        size = draw_size((width, height), trusted=trusted, reserved=reserved, taken=taken, channel=cid)
        group = group_name(output, *size)
        page = await open_page(request, output, *size)
        page.trusted = trusted
        page.asked = None if size == (width, height) else (width, height)
        locked = output == "preview" and not has_token(request)
        members: _Members | None = None

        async def admit() -> None:
            nonlocal members
            members = await self._join(cid, group)
            members.pages.add(page)
            self._snapshot(cid, group, members, page)

        def resync() -> None:
            if members is not None:
                self._snapshot(cid, group, members, page)

        if not locked:
            await admit()
        try:
            await read_page(request, page, locked=locked, admit=admit, resync=resync)
        finally:
            if members is not None:
                members.pages.discard(page)
                members.fresh.discard(page)
                await self._leave(cid, group)
            await page.outbox.stop()
        return page.ws

    def _snapshot(self, cid: str, group: str, members: _Members, page: Page | None) -> None:
        """The group's last picture for a page that joined or asked to resync (or, when this
        process has none yet, a request to the owner for one)."""
        if members.last is not None and page is not None:
            page.outbox.offer(members.last.replace(b'"snapshot":false', b'"snapshot":true', 1))
        else:
            if page is not None:
                members.fresh.add(page)
            self._ask(cid, group)

    async def state_socket(self, request: web.Request) -> web.WebSocketResponse:
        """``/api/channels/{id}/state/ws`` as on one box, fed from Redis."""
        from ..service.routes.state import state_output

        cid = request.match_info["channel"]
        await self.settings_of(cid)
        output = state_output(request)
        sub = await open_state(request, output)
        group = f"state:{output}"
        members = await self._join(cid, group)
        members.subs.add(sub)
        if members.last is not None:
            sub.outbox.offer(members.last)
        else:
            members.fresh.add(sub)
            self._ask(cid, group)
        try:
            async for _ in sub.ws:
                pass
        finally:
            members.subs.discard(sub)
            members.fresh.discard(sub)
            await self._leave(cid, group)
            await sub.outbox.stop()
        return sub.ws

    async def feed_socket(self, request: web.Request) -> web.WebSocketResponse:
        """A logger's feed socket for a channel another process runs: each frame is
        forwarded to the owner (``POST …/actions`` or ``PUT …/game``) and its answer sent back."""
        from engine.load import MAX_INPUT

        from ..service.feed import feed_game_bytes
        from ..service.protocol import FeedGame, parse_feed_message

        cid = request.match_info["channel"]
        await self.settings_of(cid)
        ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=MAX_INPUT * 4 // 3 + 4096)
        await ws.prepare(request)
        request.app[SOCKETS].add(ws)
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("authorization", "x-token")}
        async for msg in ws:
            seq: int | None = None
            try:
                if msg.type == WSMsgType.BINARY:
                    method, path, body = "PUT", f"/api/channels/{cid}/game", bytes(msg.data)
                elif msg.type == WSMsgType.TEXT:
                    m = parse_feed_message(msg.data)
                    if isinstance(m, FeedGame):
                        method, path, body = "PUT", f"/api/channels/{cid}/game", feed_game_bytes(m)
                    else:
                        seq = m.action.seq
                        method, path = "POST", f"/api/channels/{cid}/actions"
                        body = json.dumps(m.action.model_dump(mode="json", by_alias=True, exclude_none=True)).encode()
                else:
                    continue
                status, _, answer = await self.forward(cid, method, path + "?" + request.query_string, headers, body)
                if status >= 400:
                    b = json.loads(answer)
                    out = FeedRefused(seq=seq, status=status, error=b.get("error", ""), kind=b.get("kind", "error"), expected=b.get("expected"))
                    text = json.dumps(dump(out))
                else:
                    text = answer.decode()
            except Exception as exc:
                from ..service.refusals import error_body

                status, b = error_body(exc) if isinstance(exc, (BadRequest, ValidationError, ValueError, StoreFailed)) else (503, {"error": str(exc)})
                text = json.dumps(dump(FeedRefused(seq=seq, status=status, error=b["error"], kind=b.get("kind", "error"))))
            if ws.closed:
                break
            await ws.send_str(text)
        return ws

    # ------------------------------------------------------------------ forwarding

    async def exists(self, cid: str, deadline: float | None = None) -> bool:
        """Whether channel ``cid`` exists in Redis; while Redis cannot be reached, asks again
        until ``deadline`` (``serve --forward-wait`` from now, 8 s by default), then refuses
        with a 503.

        Raises:
            StoreFailed: Redis unreachable for the whole wait.
        """
        deadline = time.monotonic() + self.settings.forward_wait if deadline is None else deadline
        while True:
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    return bool(await self.client.hexists("eo:channels", cid))
            except Exception as exc:  # redis-py's ConnectionError, TimeoutError, ...
                if time.monotonic() >= deadline:
                    raise StoreFailed(f"channel {cid!r}: Redis cannot be reached ({str(exc)[:160] or type(exc).__name__}); retry") from None
                await asyncio.sleep(REDIS_RETRY)

    async def forward(self, cid: str, method: str, path_qs: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        """The owner's answer to this request (waiting for an owner while the channel moves).

        While the owner has not answered, its lease is read again every :data:`WATCH`
        seconds: when it has moved (the owner froze or died and another process took the
        channel), the request goes to the new owner, so a frozen owner costs about a lease
        (``LEASE_TTL``), not a request's timeout.  A resend is safe: actions and games are
        idempotent by seq and digest, and the old owner, fenced by its lease, refuses what it
        would answer after it resumes.

        Raises:
            StoreFailed: no process took the channel within ``serve --forward-wait`` seconds, or
                Redis could not be reached (503).
            NotFound: the channel was deleted meanwhile.
        """
        assert self.session is not None
        deadline = time.monotonic() + self.settings.forward_wait
        last = "no process holds its lease"
        while time.monotonic() < deadline:
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    url = await self.cluster.owner_url(cid)
            except Exception as exc:  # Redis restarting, or not answering at all
                url, last = None, f"Redis cannot be reached ({str(exc)[:160] or type(exc).__name__})"
            if url is not None and url != self.cluster.base:
                attempt = asyncio.ensure_future(self._send(url, method, path_qs, headers, body))
                try:
                    answer = await self._watch(cid, url, attempt)
                finally:
                    if not attempt.done():
                        attempt.cancel()
                if isinstance(answer, tuple):
                    return answer
                last = answer
            elif url is not None and self.cluster.hub.channels.get(cid) is not None:
                return -1, {}, b""  # it is ours now: the caller runs the handler
            if not await self.exists(cid, max(deadline, time.monotonic() + REDIS_RETRY)):
                raise NotFound(f"no channel {cid!r}", channel=cid)
            await asyncio.sleep(0.05)
        raise StoreFailed(f"channel {cid!r}: no process runs it now ({last}); retry")

    async def _send(self, url: str, method: str, path_qs: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes] | str:
        """One attempt at the owner: its answer, or why there is none (a text)."""
        assert self.session is not None
        try:
            async with self.session.request(method, url + path_qs, headers={**headers, FORWARDED: self.cluster.me}, data=body) as resp:
                answer = await resp.read()
                if resp.status != 421:
                    return resp.status, {"Content-Type": resp.headers.get("Content-Type", "application/json")}, answer
                return "the owner had just handed it on"
        except aiohttp.ClientConnectorError as exc:
            return f"owner unreachable ({exc})"
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            # it may have died mid-request: actions and games are idempotent by seq and
            # digest, so a resend is a duplicate if the first one landed
            return f"owner went away ({exc})"
        except asyncio.TimeoutError:
            return "the owner did not answer in time"

    async def _watch(self, cid: str, url: str, attempt: asyncio.Future[tuple[int, dict[str, str], bytes] | str]) -> tuple[int, dict[str, str], bytes] | str:
        """The attempt's result; or, once the channel's lease is no longer ``url``'s, why it
        was given up (the attempt is cancelled by the caller)."""
        while True:
            done, _ = await asyncio.wait({attempt}, timeout=WATCH)
            if done:
                return attempt.result()
            try:
                async with asyncio.timeout(WATCH):
                    now = await self.cluster.owner_url(cid)
            except Exception:  # Redis away: the owner may still answer
                continue
            if now != url:
                return f"the owner at {url} stopped answering and its lease moved"
