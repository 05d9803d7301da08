"""The service's routes, one ``RouteTableDef`` per area, registered by ``create_app``.

Read-only (no token): ``GET /`` (the channel list only with the token), ``GET
/overlay/{channel}``, ``/static/*``, ``/fonts/*``, ``/media/*`` (uploaded
images by content id), ``WS /ws/overlay/{channel}``, ``GET
/api/channels/{id}/state`` and its socket for the ``clean`` and ``program`` outputs (the
live ``preview`` state needs the token).  Sockets check ``Origin``.  Everything else under
``/api`` is marked :func:`overlay.service.auth.protected` (the feed routes also take the
channel's feed key: :func:`overlay.service.feedkeys.feed_route`).

What a route means for ``serve --redis`` hangs on the route itself, never on a second list
of URL patterns: a route whose path names ``{channel}`` belongs to that channel (its owner
answers it), and the few routes the cluster serves its own way carry a resource name
(``page_socket``, ``state_socket``, ``feed_socket``, ``status``, ``channels``; the studio's
``studio_channels``), read from the matched route (:mod:`overlay.cluster.routing`).
"""

from __future__ import annotations

from aiohttp import web

from . import channels, control, feed, logger, loggers, media, pages, settings, state

__all__ = ["TABLES"]

#: every area's table, in registration order
TABLES: tuple[web.RouteTableDef, ...] = (
    pages.routes,
    media.routes,
    channels.routes,
    feed.routes,
    loggers.routes,
    logger.routes,
    control.routes,
    settings.routes,
    state.routes,
)
