"""Channel settings (token): read, replace (PUT, the whole document) or change part of them
(PATCH, an RFC 7396 merge patch); both carry the revision read and a stale one is refused
with the current document."""

from __future__ import annotations

from aiohttp import web

from typing import Any

from renderer.settings import OUTPUTS, ChannelSettings

from ..auth import protected
from ..errors import BadRequest
from ..limits import check_shape_of, parse
from ..protocol import dump
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
    doc = parse(ChannelSettings, body)
    missing = [(name,) for name in ChannelSettings.put_required() if name not in body] + _outputs_missing(body)
    if missing:
        raise BadRequest(
            f"PUT replaces the whole settings document; missing {', '.join('.'.join(m) for m in missing)} "
            "(send PATCH with a JSON merge patch to change part of it)",
            errors=[{"loc": list(m), "msg": "required"} for m in missing],
        )
    return web.json_response(dump(ch.playback.put_settings(doc)))


def _outputs_missing(doc: dict[str, Any]) -> list[tuple[str, ...]]:
    """The outputs ``doc`` lacks (an output left out would run on the defaults: no delay)."""
    outputs = doc.get("outputs")
    if not isinstance(outputs, dict):
        return []
    return [("outputs", o) for o in OUTPUTS if o not in outputs]


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
    check_shape_of(ChannelSettings, body)  # an oversized patch is refused before it is merged
    base = dump(ch.settings)
    # every output, as drawn (a document made with some left out draws them at the defaults)
    base["outputs"] = {o: dump(ch.settings.output(o)) for o in OUTPUTS}
    merged = merge_patch(base, body)
    merged["revision"] = revision
    # the outputs are required: a null that deletes one (or all) is refused with its place,
    # not stored as a silent reset to the defaults (issue 22 item 9: {"outputs": {"program":
    # null}} dropped the program's anti-cheat delay from 30 s to 0, and the document then
    # failed its own PUT).  Other nulls keep RFC 7396's meaning: the member goes, the model
    # gives its default (a title, a theme) or refuses the result with the place.
    missing = [("outputs",)] if "outputs" not in merged else _outputs_missing(merged)
    if missing:
        places = ", ".join(" -> ".join(m) for m in missing)
        raise BadRequest(
            f"settings: {places}: required; a PATCH cannot delete it (null): send its new value instead",
            errors=[{"loc": list(m), "msg": "required: a PATCH cannot delete it (null)"} for m in missing],
        )
    return web.json_response(dump(ch.playback.put_settings(parse(ChannelSettings, merged))))
