"""Channel settings (token): read, and write with the revision read (stale writes refused)."""

from __future__ import annotations

from aiohttp import web

from ..auth import protected
from ..protocol import ChannelSettings, dump
from .common import channel_of, read_json

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.get("/api/channels/{channel}/settings")
@protected
async def get_settings(request: web.Request) -> web.Response:
    return web.json_response(dump(channel_of(request).settings))


@routes.put("/api/channels/{channel}/settings")
@protected
async def put_settings(request: web.Request) -> web.Response:
    ch = channel_of(request)
    doc = ChannelSettings.model_validate(await read_json(request))
    return web.json_response(dump(ch.put_settings(doc)))
