"""The channels API (token): list, create, read, delete channels; service status."""

from __future__ import annotations

from aiohttp import web

from renderer.settings import OUTPUTS, ChannelSettings

from ..auth import protected
from ..keys import GUARD
from ..limits import parse
from ..protocol import ChannelCreate
from .common import channel_of, clock_of, hub_of, read_json

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.get("/api/status", name="status")
@protected
async def status(request: web.Request) -> web.Response:
    now = clock_of(request)
    hub = hub_of(request)
    return web.json_response(
        {
            "channels": [ch.status(now) for ch in hub.channels.values()],
            "waitingPages": list(hub.waiting.values()),
            "connections": request.app[GUARD].status(),
        }
    )


@routes.get("/api/channels", name="channels")
@protected
async def list_channels(request: web.Request) -> web.Response:
    now = clock_of(request)
    return web.json_response({"channels": [ch.info(now) for ch in hub_of(request).channels.values()]})


@routes.post("/api/channels", name="channels")
@protected
async def create_channel(request: web.Request) -> web.Response:
    body = parse(ChannelCreate, await read_json(request))
    settings = body.settings or ChannelSettings(title=body.title or body.id)
    # every output stored (one left out runs on the defaults): the document passes its own PUT
    settings = settings.model_copy(update={"outputs": {o: settings.output(o) for o in OUTPUTS}})
    ch = hub_of(request).create(body.id, settings)
    return web.json_response(ch.info(clock_of(request)), status=201)


@routes.get("/api/channels/{channel}")
@protected
async def get_channel(request: web.Request) -> web.Response:
    return web.json_response(channel_of(request).info(clock_of(request)))


@routes.delete("/api/channels/{channel}")
@protected
async def delete_channel(request: web.Request) -> web.Response:
    await hub_of(request).delete(request.match_info["channel"])
    return web.json_response({"deleted": request.match_info["channel"]})


@routes.get("/api/channels/{channel}/status")
@protected
async def channel_status(request: web.Request) -> web.Response:
    return web.json_response(channel_of(request).status(clock_of(request)))
