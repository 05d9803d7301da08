"""The aiohttp application: ``create_app(settings)`` wires the store, the hub, the token,
the middlewares and every area's routes (:mod:`overlay.service.routes`).

Errors are JSON with a precise message (:mod:`overlay.service.refusals`); the token guards every
changing route (:mod:`overlay.service.auth`).  ``serve --redis`` plugs the cluster in through
:class:`ScaleOut` (:mod:`overlay.cluster.routing` implements it): the service never imports
the cluster.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from aiohttp import WSCloseCode, web
from aiohttp.typedefs import Middleware

from engine.errors import EgnError
from engine.load import MAX_INPUT

from .auth import Handler, auth_middleware, ensure_token, protected
from .config import ServerSettings
from .demo import install_demo
from .hub import Hub
from .analysis import LiveAnalysis
from .guard import Guard
from .keys import ANALYSIS, GUARD, HUB, RENDERS, SETTINGS, SOCKETS, STORE, TOKEN, TOKEN_CREATED
from .refusals import error_middleware
from .routes import TABLES
from .store import Store
from .renders import mount_renders
from .studiohost import mount_studio

__all__ = ["ScaleOut", "create_app"]

log = logging.getLogger("overlay.service.app")


async def _hub_ctx(app: web.Application) -> AsyncIterator[None]:
    """Restore the channels (and, on a fresh install, the demo), run them, stop them (and the
    live analysis's workers)."""
    hub = app[HUB]
    store = app[STORE]
    hub.restore()
    if app[SETTINGS].demo and app[SETTINGS].redis is None and store.meta("initialized") is None:
        try:
            install_demo(hub)
        except (EgnError, OSError, ImportError) as exc:
            log.error("demo channel not installed: %s", exc)
    store.set_meta("initialized", "1")
    hub.start()
    yield
    await hub.stop()
    await app[ANALYSIS].close()
    store.close()


@web.middleware
async def durable_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """An answer leaves only once what its request wrote is durable (:meth:`Store.sync`:
    one fsync off the event loop, shared by the answers waiting for it)."""
    response = await handler(request)
    await request.app[STORE].sync()
    return response


async def _close_sockets(app: web.Application) -> None:
    sockets: weakref.WeakSet[web.WebSocketResponse] = app[SOCKETS]
    for ws in list(sockets):
        await ws.close(code=WSCloseCode.GOING_AWAY, message=b"server shutdown")


class ScaleOut(Protocol):
    """What a process sharing its channels with others plugs into the service
    (``serve --redis``: :class:`overlay.cluster.routing.RedisScaleOut`)."""

    #: runs after the token check and before the durable wait (a forwarded request waits
    #: on its owner, not on this process's store); it reads the matched route
    middleware: Middleware

    def open_store(self, settings: ServerSettings) -> tuple[Store, str, str | None]:
        """The working store, the API token's hash, and the token itself when this start
        created it (printed once)."""

    def install(self, app: web.Application) -> None:
        """Wire the rest into ``app`` (its keys and the cleanup contexts that run it), once
        the service's own keys are set."""


def create_app(settings: ServerSettings | None = None, *, scale_out: ScaleOut | None = None) -> web.Application:
    """The whole service.  The store opens now (so the token exists before serving).

    Raises:
        ValueError: ``settings.redis`` is set but no ``scale_out`` is given.
    """
    settings = settings or ServerSettings()
    if settings.redis is not None and scale_out is None:
        raise ValueError("settings.redis needs the cluster: create_app(settings, scale_out=RedisScaleOut()) (overlay.cluster.routing)")
    guard = Guard(header_timeout=settings.header_timeout, body_timeout=settings.body_timeout, per_address=settings.per_address)
    # the guard's first: a connection's time limits change for the whole of its answer
    middlewares: list[Middleware] = [guard.middleware, error_middleware, auth_middleware]
    if scale_out is not None:
        middlewares.append(scale_out.middleware)
    middlewares.append(durable_middleware)
    # request bodies up to the engine's input cap (a whole game)
    app = web.Application(client_max_size=MAX_INPUT, middlewares=middlewares)
    store: Store
    if scale_out is not None:  # serve --redis: channels shared with other processes
        store, token, created = scale_out.open_store(settings)
    else:
        store = Store(settings.db_path, synchronous=settings.synchronous, hold=True)
        token, created = ensure_token(store, settings.token)
    app[SETTINGS] = settings
    app[STORE] = store
    app[ANALYSIS] = LiveAnalysis(on=settings.analysis, clean=settings.analysis_clean)
    app[HUB] = Hub(store, clock=settings.clock, max_delay=settings.max_delay, allow_dirs=settings.allow_dirs, analysis=app[ANALYSIS])
    app[TOKEN] = token
    app[TOKEN_CREATED] = created or ""
    app[SOCKETS] = weakref.WeakSet()
    app[GUARD] = guard
    app.cleanup_ctx.append(_hub_ctx)
    app.on_shutdown.append(_close_sockets)
    if scale_out is not None:
        scale_out.install(app)
    for table in TABLES:
        app.router.add_routes(table)
    bridge = mount_studio(app, app[HUB], Path(settings.data_dir), protected, allow_dirs=settings.allow_dirs, host=settings.host)
    app[RENDERS] = mount_renders(app, app[HUB], Path(settings.data_dir), protected, bridge.export_look)
    return app
