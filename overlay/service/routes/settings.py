"""Channel settings (token): read, replace (PUT, the whole document) or change part of them
(PATCH, an RFC 7396 merge patch); both carry the revision read and a stale one is refused
with the current document."""

from __future__ import annotations

from aiohttp import web

from typing import Any

from ..auth import protected
from ..errors import BadRequest
from ..protocol import OUTPUTS, ChannelSettings, dump
from .common import channel_of, read_json

__all__ = ["routes", "merge_patch"]

routes = web.RouteTableDef()


@routes.get("/api/channels/{channel}/settings")
@protected
async def get_settings(request: web.Request) -> web.Response:
    return web.json_response(dump(channel_of(request).settings))


@routes.put("/api/channels/{channel}/settings")
@protected
async def put_settings(request: web.Request) -> web.Response:
    """Replace the whole document.  One missing a top-level field or an output is refused (a
    partial PUT used to reset what it left out): a partial change is a PATCH.  Fields added
    since (:attr:`ChannelSettings.LATER_FIELDS`) may be left out by a client written before
    them: such a client cannot mean to change what it does not know, so they keep their
    stored values (a producer's analysis switch survives an old script's PUT).  A wrong or
    unknown field is refused all the same."""
    ch = channel_of(request)
    body = await read_json(request)
    if isinstance(body, dict) and any(name not in body for name in ChannelSettings.LATER_FIELDS):
        stored = dump(ch.settings)
        body = {**{name: stored[name] for name in ChannelSettings.LATER_FIELDS if name in stored}, **body}
    doc = ChannelSettings.model_validate(body)
    missing = [name for name in ChannelSettings.put_required() if name not in body]
    missing += [f"outputs.{o}" for o in OUTPUTS if "outputs" in body and o not in (body.get("outputs") or {})]
    if missing:
        raise BadRequest(
            f"PUT replaces the whole settings document; missing {', '.join(missing)} "
            "(send PATCH with a JSON merge patch to change part of it)"
        )
    return web.json_response(dump(ch.put_settings(doc)))


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: ``patch`` applied to ``target`` (objects merge, null removes, anything else replaces)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


@routes.patch("/api/channels/{channel}/settings")
@protected
async def patch_settings(request: web.Request) -> web.Response:
    """Change part of the settings: a JSON merge patch holding the ``revision`` read.  The
    merged document is validated whole before it is stored."""
    ch = channel_of(request)
    body = await read_json(request)
    if not isinstance(body, dict):
        raise BadRequest("a settings PATCH is a JSON object (RFC 7396 merge patch)")
    revision = body.pop("revision", None)
    if not isinstance(revision, int) or isinstance(revision, bool):
        raise BadRequest("a settings PATCH needs the 'revision' you read (a whole number)")
    merged = merge_patch(dump(ch.settings), body)
    merged["revision"] = revision
    return web.json_response(dump(ch.put_settings(ChannelSettings.model_validate(merged))))
