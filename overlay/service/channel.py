"""A channel: one table (a game, a playhead, settings), its pages and its scene pump.

:class:`Channel` puts the channel's parts together (output fan-out, feed ingestion, file
following, director wiring, all over :class:`~overlay.service.core.ChannelCore`) and owns its
lifetime: the pump and the file watcher start with the hub and are awaited on close, so no
task outlives the channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from aiohttp import WSCloseCode
from aiohttp.web import WebSocketResponse

from .clients import Page, StateSub, close_socket, send_text
from .fanout import FanOut
from .follow import Following
from .playback import Playback

__all__ = ["Channel"]


class Channel(FanOut, Following, Playback):
    """One table: settings, the last good game, the Director, connected pages."""

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.pump_task = loop.create_task(self.pump(), name=f"pump:{self.id}")
        if self.follow_path:
            self.start_follow(self.follow_path)

    async def close(self, *, reason: str) -> None:
        """Stop the pump and the file watcher (awaited: no task outlives the channel) and
        close every socket of the channel (pages, state clients, logger feeds)."""
        self.closed = True
        self.stop_follow()
        tasks = [t for t in (self.pump_task, *self.stopped_follows) if t is not None]
        self.pump_task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        bye = json.dumps({"type": "bye", "reason": reason})
        members: list[Page | StateSub] = [*self.pages, *self.subs]
        clients = [(c.ws, c.transport, c.outbox) for c in members]
        for outbox in [o for _, _, o in clients]:
            await outbox.stop()
        # each with a time limit: a page that never reads cannot hold up the others' goodbye
        for ws, transport, _ in clients:
            await self._bye(ws, transport, bye, reason)
        for ws in list(self.feeds):
            await self._bye(ws, None, bye, reason)

    @staticmethod
    async def _bye(ws: WebSocketResponse, transport: asyncio.BaseTransport | None, bye: str, reason: str) -> None:
        if await send_text(ws, bye, timeout=1.0) or ws.closed:
            await close_socket(ws, transport, code=WSCloseCode.GOING_AWAY, message=reason.encode()[:120])
        elif transport is not None:
            transport.abort()  # type: ignore[attr-defined]
