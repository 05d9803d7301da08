"""The state stream (read-only): the GameState an output shows, for third-party graphics.

Each output's state carries exactly what that output may show: ``clean`` has no hole cards
and no commentary, ``program`` runs behind its delay; ``preview`` is live and complete, so
it needs the token.  The socket checks ``Origin`` like the page socket.
"""

from __future__ import annotations

from aiohttp import web

from renderer.settings import OutputName

from ..auth import require_token
from .common import channel_of, clock_of, output_of
from .pagesocket import open_state


def state_output(request: web.Request) -> OutputName:
    """The output asked for; the live one needs the token.

    Raises:
        BadRequest: no such output.  Unauthorized: ``preview`` without the token.
    """
    output = output_of(request)
    if output == "preview":
        require_token(request)
    return output

__all__ = ["routes", "state_output"]

routes = web.RouteTableDef()


@routes.get("/api/channels/{channel}/state")
async def get_state(request: web.Request) -> web.Response:
    ch = channel_of(request)
    text = ch.fanout.state_text(state_output(request), clock_of(request))
    return web.Response(text=text, content_type="application/json")


@routes.get("/api/channels/{channel}/state/ws", name="state_socket")
async def state_socket(request: web.Request) -> web.WebSocketResponse:
    ch = channel_of(request)
    output = state_output(request)
    sub = await open_state(request, output)
    ch.fanout.subs.add(sub)
    try:
        ch.fanout.send_state(sub)
        ch.poke()
        async for _ in sub.ws:
            pass  # nothing to read: the stream is one-way
    finally:
        ch.fanout.subs.discard(sub)
        await sub.outbox.stop()
    return sub.ws
