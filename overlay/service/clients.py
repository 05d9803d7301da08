"""The sockets a channel writes to: overlay pages and state-stream clients.

Each page reads its own socket in its handler task.  Writes go through the page's
:class:`Outbox`: one slot holding the latest message and one sender task per socket, so
the channel's pump never awaits a page.  A page that falls behind gets the latest scene,
not a backlog (every scene message is a whole picture); beside it, one slot for an *aside*
(an analysis message: it follows the scene and never replaces it); a send that takes longer than
:data:`SEND_TIMEOUT` drops the page (its connection is aborted, the page reconnects and
resyncs).  A page that never reads therefore costs the others nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from renderer.settings import OutputName

__all__ = ["Page", "StateSub", "Outbox", "send_text", "close_socket", "bye", "bye_text", "SEND_TIMEOUT"]

log = logging.getLogger("overlay.service.clients")

#: seconds one message may take to leave; past it the client is dropped
SEND_TIMEOUT = 5.0


class Outbox:
    """The latest message for one socket and the task that sends it.

    :meth:`offer` never waits: it replaces a message not sent yet.  ``after`` runs once the
    message has left (the page's bookkeeping of what it was sent).  A message is text, or
    its UTF-8 bytes as they came from Redis (:mod:`overlay.cluster.relay`): those go out as the same
    text frame without being decoded and encoded again (a scene is about 25 kB).
    """

    def __init__(self, ws: web.WebSocketResponse, transport: asyncio.BaseTransport | None, *, name: str = "") -> None:
        self.ws = ws
        self.transport = transport
        self.name = name
        self.pending: tuple[str | bytes, Callable[[], None] | None] | None = None
        self.aside: str | bytes | None = None  # sent after ``pending``; a newer aside replaces it
        self.ready = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.sent = 0
        self.replaced = 0  # messages overwritten before they left (a slow page)
        self.dropped: str | None = None

    def offer(self, text: str | bytes, after: Callable[[], None] | None = None) -> None:
        if self.dropped is not None or self.ws.closed:
            return
        if self.pending is not None:
            self.replaced += 1
        self.pending = (text, after)
        self.ready.set()
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"send:{self.name}")

    def offer_aside(self, text: str | bytes) -> None:
        """Queue a message that goes after the pending one without replacing it (a newer
        aside replaces an older one not sent yet)."""
        if self.dropped is not None or self.ws.closed:
            return
        if self.aside is not None:
            self.replaced += 1
        self.aside = text
        self.ready.set()
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"send:{self.name}")

    async def _run(self) -> None:
        while not self.ws.closed and self.dropped is None:
            await self.ready.wait()
            self.ready.clear()
            item, self.pending = self.pending, None
            if item is not None and not await self._send(item[0]):
                return
            if item is not None and item[1] is not None:
                item[1]()
            aside, self.aside = self.aside, None
            if aside is not None and not await self._send(aside):
                return

    async def _send(self, text: str | bytes) -> bool:
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                if isinstance(text, bytes):
                    await self.ws.send_frame(text, WSMsgType.TEXT)
                else:
                    await self.ws.send_str(text)
        except asyncio.TimeoutError:
            self.drop(f"a message took over {SEND_TIMEOUT:g} s to leave")
            return False
        except (ConnectionError, RuntimeError):
            return False
        self.sent += 1
        return True

    def drop(self, reason: str) -> None:
        """Abort the connection: the handler's read loop ends and forgets the client."""
        if self.dropped is not None:
            return
        self.dropped = reason
        log.warning("socket %s dropped: %s", self.name, reason)
        if self.transport is not None:
            self.transport.abort()  # type: ignore[attr-defined]

    async def stop(self) -> None:
        """Cancel the sender (the socket is closing)."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
            self.task = None


@dataclass(eq=False)
class Page:
    """One connected overlay page (an OBS browser source, a preview, a capture)."""

    ws: web.WebSocketResponse
    output: OutputName
    remote: str
    connected_at: float
    width: int = 1920
    height: int = 1080
    visible: bool = True
    sent_seq: int = 0
    sent_step: int | None = None
    sent_at: dict[int, float] = field(default_factory=dict)
    drawn_seq: int = 0
    drawn_step: int | None = None
    lag: float | None = None  # seconds from sending a scene to the page's "drawn" report
    trace: bool = False  # bench pages get the server's stage times (wall clock ms) per scene
    monitor: bool = False  # the studio's own frame (?monitor=1): not counted as an OBS page
    #: the page came with the API token: its size is its own (overlay.service.fanout.draw_size)
    trusted: bool = False
    #: the size the page asked for, when it is drawn at another (the nearest allowed)
    asked: tuple[int, int] | None = None
    transport: asyncio.BaseTransport | None = None  # aborted when the page is dropped
    outbox: Outbox = field(init=False)

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.ws, self.transport, name=f"page {self.output} {self.remote}")

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    @property
    def group(self) -> tuple[Any, ...]:
        return (self.output, self.width, self.height)

    def note_sent(self, seq: int, step: int | None, clock: float) -> None:
        self.sent_seq, self.sent_step = seq, step
        self.sent_at[seq] = clock
        if len(self.sent_at) > 32:
            for old in sorted(self.sent_at)[:-16]:
                del self.sent_at[old]

    def note_drawn(self, seq: int, step: int | None, clock: float) -> None:
        if seq < self.drawn_seq:
            return
        self.drawn_seq, self.drawn_step = seq, step
        sent = self.sent_at.get(seq)
        if sent is not None:
            self.lag = clock - sent

    def status(self, now: float) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "width": self.width,
            "height": self.height,
            "visible": self.visible,
            "connectedFor": round(now - self.connected_at, 3),
            "sentStep": self.sent_step,
            "lastDrawnStep": self.drawn_step,
            "drawnSeq": self.drawn_seq,
            "sentSeq": self.sent_seq,
            "lagMs": None if self.lag is None else round(self.lag * 1000, 2),
            "asked": None if self.asked is None else f"{self.asked[0]}x{self.asked[1]}",
        }


@dataclass(eq=False)
class StateSub:
    """A third-party graphics client on the state stream."""

    ws: web.WebSocketResponse
    output: OutputName
    transport: asyncio.BaseTransport | None = None
    outbox: Outbox = field(init=False)

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.ws, self.transport, name=f"state {self.output}")


async def send_text(ws: web.WebSocketResponse, text: str, *, timeout: float = SEND_TIMEOUT) -> bool:
    """Send ``text`` within ``timeout`` seconds; False when the socket is gone or too slow
    (a closed page is not an error)."""
    if ws.closed:
        return False
    try:
        async with asyncio.timeout(timeout):
            await ws.send_str(text)
    except (ConnectionError, RuntimeError, asyncio.TimeoutError):
        return False
    return True


async def close_socket(
    ws: web.WebSocketResponse, transport: asyncio.BaseTransport | None, *, code: int, message: bytes, timeout: float = 1.0
) -> None:
    """Close ``ws`` politely, or abort its connection if the close frame cannot leave."""
    try:
        async with asyncio.timeout(timeout):  # in this task (wait_for would start another)
            await ws.close(code=code, message=message)
    except (asyncio.TimeoutError, ConnectionError, RuntimeError):
        if transport is not None:
            transport.abort()  # type: ignore[attr-defined]


def bye_text(reason: str) -> str:
    """The goodbye a closing channel sends every socket (``{"type": "bye", "reason": ...}``)."""
    return json.dumps({"type": "bye", "reason": reason})


async def bye(ws: web.WebSocketResponse, transport: asyncio.BaseTransport | None, text: str, reason: str) -> None:
    """Send ``text`` (a goodbye) within a time limit, then close ``ws`` with GOING_AWAY; a
    socket that cannot take it has its connection aborted."""
    if await send_text(ws, text, timeout=1.0) or ws.closed:
        await close_socket(ws, transport, code=WSCloseCode.GOING_AWAY, message=reason.encode()[:120])
    elif transport is not None:
        transport.abort()  # type: ignore[attr-defined]
