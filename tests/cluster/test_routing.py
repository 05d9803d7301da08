"""What ``serve --redis`` reads of a request comes from the service's own route table.

The cluster's router (:mod:`overlay.cluster.routing`) resolves a request's channel from
aiohttp's matched route (the ``{channel}`` the route names, and a resource name for the few
routes served its own way), never from a second list of URL patterns; it plugs in through
:class:`overlay.service.app.ScaleOut` with its middleware after the token check and before
the durable wait.  Here a recording stand-in plugs in the same way, in process (the Redis
behaviour itself is covered by ``test_scale_*``, with real processes).
"""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from aiohttp.typedefs import Middleware

from overlay.cluster.routing import CHANNEL, ROUTE_NAMES
from overlay.service.app import create_app
from overlay.service.auth import Handler, auth_middleware
from overlay.service.config import ServerSettings
from overlay.service.refusals import error_middleware
from overlay.service.store import Store
from tests.support import AUTH, TOKEN


class Recorder:
    """A :class:`~overlay.service.app.ScaleOut` that records what the router would read."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.seen: list[tuple[str | None, str | None]] = []
        self.installed = False

        @web.middleware
        async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.seen.append((request.match_info.route.name, request.match_info.get(CHANNEL)))
            return await handler(request)

        self.middleware: Middleware = record

    def open_store(self, settings: ServerSettings) -> tuple[Store, str, str | None]:
        from overlay.service.auth import ensure_token

        store = Store(settings.db_path, hold=True)
        token, created = ensure_token(store, settings.token)
        return store, token, created

    def install(self, app: web.Application) -> None:
        self.installed = True


@pytest.fixture
def recorder(tmp_path: Any) -> Recorder:
    return Recorder(ServerSettings(data_dir=tmp_path, token=TOKEN, demo=False))


def test_the_cluster_middleware_sits_after_the_token_check_and_before_the_durable_wait(recorder: Recorder) -> None:
    app = create_app(recorder.settings, scale_out=recorder)
    chain = list(app.middlewares)
    assert recorder.installed
    # the connection guard (caps, timeouts) comes first, then errors, the token, the cluster
    assert chain[1:4] == [error_middleware, auth_middleware, recorder.middleware] and len(chain) == 5
    assert getattr(chain[0], "__self__", None).__class__.__name__ == "Guard"
    assert len(create_app(ServerSettings(data_dir=recorder.settings.data_dir / "one", demo=False)).middlewares) == 4


def test_redis_settings_without_the_cluster_are_refused(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="scale_out"):
        create_app(ServerSettings(data_dir=tmp_path, demo=False, redis="redis://127.0.0.1:1/0"))


def test_every_route_name_the_cluster_reads_names_a_route(recorder: Recorder) -> None:
    """The names the router dispatches on are resource names of the one table (the service's
    and the studio's): renaming a route there fails here, not in production."""
    app = create_app(recorder.settings, scale_out=recorder)
    named = set(app.router.named_resources())
    assert set(ROUTE_NAMES) <= named, sorted(set(ROUTE_NAMES) - named)


@pytest.mark.parametrize(
    "method, path, expected",
    [
        ("GET", "/overlay/c1", (None, "c1")),
        ("GET", "/ws/overlay/c1", ("page_socket", "c1")),
        ("GET", "/api/channels/c1/state/ws", ("state_socket", "c1")),
        ("GET", "/api/channels/c1/feed", ("feed_socket", "c1")),
        ("GET", "/api/channels/c1/settings", (None, "c1")),
        ("POST", "/api/channels/c1/control/play", (None, "c1")),
        ("GET", "/studio/api/channels/c1/timeline", (None, "c1")),
        ("GET", "/studio/link/c1/play", (None, "c1")),
        ("GET", "/api/status", ("status", None)),
        ("GET", "/api/channels", ("channels", None)),
        ("POST", "/api/channels", ("channels", None)),
        ("GET", "/studio/api/channels", ("studio_channels", None)),
        ("GET", "/media/abc.png", (None, None)),
        ("GET", "/api/no-such-route", (None, None)),  # no route: answered here (a 404)
        ("POST", "/api/channels/c1/feed", (None, None)),  # no such method: answered here (a 405)
    ],
)
async def test_the_owning_channel_comes_from_the_matched_route(
    aiohttp_client: Any, recorder: Recorder, method: str, path: str, expected: tuple[str | None, str | None]
) -> None:
    client = await aiohttp_client(create_app(recorder.settings, scale_out=recorder))
    await client.request(method, path, headers=AUTH)
    assert recorder.seen == [expected]
