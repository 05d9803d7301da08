"""The read-only sockets' shared half: opening a page or state socket and reading a page's
messages, the same on one box (``overlay.service.routes``) and under ``serve --redis``
(``overlay.cluster.relay``).

Only where the picture comes from differs between the two (a channel in this process, or a
group fed from Redis), so the callers pass that in (``admit``, ``resync``) and keep their
own clean-up; the preview lock, hello, drawn and resync handling live here once, so the two
faces cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import WSMsgType, web
from pydantic import ValidationError

from renderer.settings import OutputName

from ..auth import check_origin, token_matches
from ..clients import Page, StateSub
from ..keys import SETTINGS, SOCKETS
from ..protocol import PageDrawn, PageHello, PageResync, parse_page_message
from ..errors import excerpt
from ..refusals import pydantic_text
from .common import clock_of

__all__ = ["PREVIEW_LOCKED", "open_page", "read_page", "open_state"]

#: what a preview page without the token is told (on its console; it draws nothing)
PREVIEW_LOCKED = (
    "the preview output shows live hole cards and needs the API token: open the page as "
    "/overlay/CHANNEL?output=preview#token=TOKEN (the fragment never reaches a server log)"
)


async def open_page(request: web.Request, output: OutputName, width: int, height: int, *, trace: bool = False, monitor: bool = False) -> Page:
    """Accept a page's socket (no compression: it cost 3 ms a message) and register it for
    the shutdown's GOING_AWAY; the :class:`Page` holds the socket and its outbox."""
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=64 * 1024)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    return Page(
        ws=ws,
        output=output,
        remote=request.remote or "?",
        connected_at=clock_of(request),
        width=width,
        height=height,
        trace=trace,
        monitor=monitor,
        transport=request.transport,
    )


async def read_page(
    request: web.Request,
    page: Page,
    *,
    locked: bool,
    admit: Callable[[], Awaitable[None]],
    resync: Callable[[], None],
) -> None:
    """Read ``page``'s messages until its socket closes.

    A ``locked`` page (preview without the token) gets nothing of the channel until a hello
    carries the token; then ``admit`` joins it to its pictures.  ``resync`` sends an admitted
    page the current picture (it asked: it was hidden, or reconnected).  A malformed message
    is answered with an error and the page stays connected.
    """
    async for msg in page.ws:
        if msg.type != WSMsgType.TEXT:
            continue
        try:
            m = parse_page_message(msg.data)
        except ValidationError as exc:
            page.outbox.offer(json.dumps({"type": "error", "error": excerpt(pydantic_text(exc))}))
            continue
        if isinstance(m, PageHello):
            page.visible = m.visible
            if locked and token_matches(request, m.token):
                locked = False
                await admit()
            elif locked:
                page.outbox.offer(json.dumps({"type": "error", "error": PREVIEW_LOCKED}))
        elif locked:
            continue  # nothing of the channel for a page without the token
        elif isinstance(m, PageDrawn):
            page.note_drawn(m.seq, m.step, clock_of(request))
        elif isinstance(m, PageResync):
            page.visible = True
            resync()


async def open_state(request: web.Request, output: OutputName) -> StateSub:
    """Check ``Origin`` and accept a state client's socket (one-way: small messages in)."""
    check_origin(request, request.app[SETTINGS].allow_origins)
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=4096)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    return StateSub(ws=ws, output=output, transport=request.transport)
