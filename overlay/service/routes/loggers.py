"""A channel's feed keys (token): list, make (the key is shown once), revoke.

A feed key lets a logger post actions, open the feed socket and PUT the game of one channel
(:mod:`overlay.service.feedkeys`); managing keys needs the API token, never a feed key.
"""

from __future__ import annotations

from aiohttp import web

from ..auth import protected
from ..errors import BadRequest
from ..feedkeys import FeedKeys
from ..keys import STORE
from .common import channel_of, read_json

__all__ = ["routes"]

routes = web.RouteTableDef()


def _keys(request: web.Request) -> FeedKeys:
    return FeedKeys(request.app[STORE])


@routes.get("/api/channels/{channel}/feed-keys")
@protected
async def list_keys(request: web.Request) -> web.Response:
    ch = channel_of(request)
    return web.json_response({"channel": ch.id, "keys": [k.public() for k in _keys(request).keys(ch.id)]})


@routes.post("/api/channels/{channel}/feed-keys")
@protected
async def make_key(request: web.Request) -> web.Response:
    """A new key: ``{"label": …}`` (optional); the answer carries ``key``, shown only now.

    Raises:
        Conflict: the channel has the most keys it may hold.
        BadRequest: a body other than ``{"label": …}``, or a label over 80 characters.
    """
    ch = channel_of(request)
    body = await read_json(request)
    label = body.get("label", "") if isinstance(body, dict) else None
    if not isinstance(label, str) or (isinstance(body, dict) and set(body) - {"label"}):
        raise BadRequest('a feed key is made with {"label": "…"} (optional) and nothing else')
    record, key = _keys(request).make(ch.id, label)
    return web.json_response({**record.public(), "key": key}, status=201)


@routes.delete("/api/channels/{channel}/feed-keys/{key}")
@protected
async def revoke_key(request: web.Request) -> web.Response:
    ch = channel_of(request)
    _keys(request).revoke(ch.id, request.match_info["key"])
    return web.json_response({"revoked": request.match_info["key"]})
