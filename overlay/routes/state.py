"""The state stream (read-only): the GameState an output shows, for third-party graphics.

Each output's state carries exactly what that output may show: ``clean`` has no hole cards
and no commentary, ``program`` runs behind its delay; ``preview`` is live and complete, so
it needs the token.  The socket checks ``Origin`` like the page socket.
"""

from __future__ import annotations

from aiohttp import web

from ..auth import check_origin, require_token
from ..clients import StateSub
from ..keys import SETTINGS, SOCKETS
from ..protocol import OutputName
from .common import channel_of, clock_of, output_of


def _output(request: web.Request) -> OutputName:
    """The output asked for; the live one needs the token.

    Raises:
        BadRequest: no such output.  Unauthorized: ``preview`` without the token.
    """
    output = output_of(request)
    if output == "preview":
        require_token(request)
    return output

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.get("/api/channels/{channel}/state")
async def get_state(request: web.Request) -> web.Response:
    ch = channel_of(request)
    text = ch.state_text(_output(request), clock_of(request))
    return web.Response(text=text, content_type="application/json")


@routes.get("/api/channels/{channel}/state/ws")
async def state_socket(request: web.Request) -> web.WebSocketResponse:
    ch = channel_of(request)
    output = _output(request)
    check_origin(request, request.app[SETTINGS].allow_origins)
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=4096)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    sub = StateSub(ws=ws, output=output, transport=request.transport)
    ch.subs.add(sub)
    try:
        ch.send_state(sub)
        ch.poke()
        async for _ in ws:
            pass  # nothing to read: the stream is one-way
    finally:
        ch.subs.discard(sub)
        await sub.outbox.stop()
    return ws
