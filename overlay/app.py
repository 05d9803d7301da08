"""The aiohttp application: ``create_app(settings)`` wires the store, the hub, the token,
the middlewares and every area's routes (:mod:`overlay.routes`).

Errors are JSON with a precise message (:mod:`overlay.refusals`); the token guards every
changing route (:mod:`overlay.auth`).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import WSCloseCode, web

from engine.errors import EgnError
from engine.load import MAX_INPUT

from .auth import Handler, auth_middleware, ensure_token, protected
from .config import ServerSettings
from .demo import install_demo
from .hub import Hub
from .keys import HUB, SETTINGS, SOCKETS, STORE, TOKEN, TOKEN_CREATED
from .refusals import error_middleware
from .routes import TABLES
from .store import Store
from .studiohost import mount_studio

__all__ = ["create_app"]

log = logging.getLogger("overlay.app")


async def _hub_ctx(app: web.Application) -> AsyncIterator[None]:
    """Restore the channels (and, on a fresh install, the demo), run them, stop them."""
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


def create_app(settings: ServerSettings | None = None) -> web.Application:
    """The whole service.  The store opens now (so the token exists before serving)."""
    settings = settings or ServerSettings()
    # request bodies up to the engine's input cap (a whole game)
    app = web.Application(
        client_max_size=MAX_INPUT, middlewares=[error_middleware, auth_middleware, durable_middleware]
    )
    store: Store
    shared = None
    if settings.redis is not None:  # serve --redis: channels shared with other processes
        from .routing import open_store

        shared, token, created = open_store(settings)
        store = shared
    else:
        store = Store(settings.db_path, synchronous=settings.synchronous, hold=True)
        token, created = ensure_token(store, settings.token)
    app[SETTINGS] = settings
    app[STORE] = store
    app[HUB] = Hub(store, clock=settings.clock, max_delay=settings.max_delay)
    app[TOKEN] = token
    app[TOKEN_CREATED] = created or ""
    app[SOCKETS] = weakref.WeakSet()
    app.cleanup_ctx.append(_hub_ctx)
    app.on_shutdown.append(_close_sockets)
    if shared is not None:
        from .routing import install

        # after the token check, before the durable wait: a forwarded request waits on its owner
        app.middlewares.insert(2, install(app, settings, shared))
    for table in TABLES:
        app.router.add_routes(table)
    mount_studio(app, app[HUB], Path(settings.data_dir), protected)
    return app
