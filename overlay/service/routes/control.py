"""Playback control (token): play, pause, step, seek... from a script or a Stream Deck."""

from __future__ import annotations

from aiohttp import web

from ..auth import protected
from ..limits import parse
from ..errors import BadRequest
from ..protocol import ControlRequest
from .common import channel_of, read_json

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.post("/api/channels/{channel}/control")
@routes.post("/api/channels/{channel}/control/{op}")
@protected
async def control(request: web.Request) -> web.Response:
    """A Director command: the JSON body, or the op in the path with its arguments in the
    query (plain HTTP for buttons that cannot send a body)."""
    ch = channel_of(request)
    body = await read_json(request)
    if not isinstance(body, dict):
        raise BadRequest("control body must be a JSON object")
    op = request.match_info.get("op")
    if op:
        body = {**dict(request.query), **body, "op": op}
        body.pop("token", None)
    req = parse(ControlRequest, body)
    return web.json_response(ch.playback.control(req))
