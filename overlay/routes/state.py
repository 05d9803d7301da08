"""The state stream (read-only): the GameState an output shows, for third-party graphics."""

from __future__ import annotations

from aiohttp import web

from ..clients import StateSub
from ..keys import SOCKETS
from .common import channel_of, clock_of, output_of

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.get("/api/channels/{channel}/state")
async def get_state(request: web.Request) -> web.Response:
    ch = channel_of(request)
    text = ch.state_text(output_of(request), clock_of(request))
    return web.Response(text=text, content_type="application/json")


@routes.get("/api/channels/{channel}/state/ws")
async def state_socket(request: web.Request) -> web.WebSocketResponse:
    ch = channel_of(request)
    output = output_of(request)
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=4096)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    sub = StateSub(ws=ws, output=output)
    ch.subs.add(sub)
    try:
        await ch.send_state(sub)
        ch.poke()
        async for _ in ws:
            pass  # nothing to read: the stream is one-way
    finally:
        ch.subs.discard(sub)
    return ws
