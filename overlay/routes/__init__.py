"""The service's routes, one ``RouteTableDef`` per area, registered by ``create_app``.

Read-only (no token): ``GET /`` (the channel list only with the token), ``GET
/overlay/{channel}``, ``/static/*``, ``/fonts/*``, ``/media/*`` (uploaded
images by content id), ``WS /ws/overlay/{channel}``, ``GET
/api/channels/{id}/state`` and its socket for the ``clean`` and ``program`` outputs (the
live ``preview`` state needs the token).  Sockets check ``Origin``.  Everything else under
``/api`` is marked :func:`overlay.auth.protected`.
"""

from __future__ import annotations

from aiohttp import web

from . import channels, control, feed, media, pages, settings, state

__all__ = ["TABLES"]

#: every area's table, in registration order
TABLES: tuple[web.RouteTableDef, ...] = (
    pages.routes,
    media.routes,
    channels.routes,
    feed.routes,
    control.routes,
    settings.routes,
    state.routes,
)
