"""``serve --redis``: which process answers a request, and the wiring of such a process.

:class:`Router` is the middleware of a process sharing its channels through Redis: a page
or state socket is served here from Redis (:class:`~overlay.cluster.relay.Relay`); a request naming
a channel this process runs goes to its handler as on one box; one naming a channel another
process runs is forwarded to that process; the channel list is every process's and
``POST /api/channels`` first reserves the id in Redis (a 409 if any process has it) and
takes the new channel's lease.

There is one route table, the service's: the router reads aiohttp's matched route, never the
URL.  A route whose path names ``{channel}`` belongs to that channel; the routes served
here their own way carry a resource name (:data:`PAGE_SOCKET`, ...; see
:mod:`overlay.service.routes`).  :class:`RedisScaleOut` plugs all this into
``create_app`` (:class:`overlay.service.app.ScaleOut`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from ..service.auth import Handler, token_hash
from ..service.config import ServerSettings
from ..service.errors import Conflict, NotFound, StoreFailed
from ..service.hub import Hub
from ..service.keys import HUB, SETTINGS
from ..service.store import Store
from .leases import LEASE_TTL, Cluster
from .redisstore import Keys, RedisStore, text_of
from .relay import FORWARDED, REDIS_RETRY, Relay

__all__ = ["Router", "CLUSTER", "RedisScaleOut", "ROUTE_NAMES", "open_store", "install", "install_demo_once"]

log = logging.getLogger("overlay.cluster.routing")

#: the routes served here their own way, by resource name (the names are the service's and
#: the studio's: a test checks each names a route of ``create_app``)
PAGE_SOCKET = "page_socket"  # GET /ws/overlay/{channel}: relayed from Redis by any process
STATE_SOCKET = "state_socket"  # GET /api/channels/{channel}/state/ws: the same
FEED_SOCKET = "feed_socket"  # GET /api/channels/{channel}/feed: a socket forwarded to the owner
STATUS = "status"  # GET /api/status: plus this process's part in the cluster
CHANNELS = "channels"  # GET (every process's channels), POST (reserve the id in Redis first)
STUDIO_CHANNELS = "studio_channels"  # GET /studio/api/channels: every channel id in Redis
ROUTE_NAMES = (PAGE_SOCKET, STATE_SOCKET, FEED_SOCKET, STATUS, CHANNELS, STUDIO_CHANNELS)
#: the path parameter naming the channel a route belongs to
CHANNEL = "channel"

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_HOP = {"host", "connection", "keep-alive", "transfer-encoding", "upgrade", "content-length", "te", "trailer"}


class Router:
    """Serve here, relay from Redis, or forward to the channel's owner."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay

    async def route(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Serve here, relay from Redis, or forward to the channel's owner, as the matched
        route says (its resource name, the ``{channel}`` it names)."""
        hub = request.app[HUB]
        match = request.match_info
        name = match.route.name  # None: an unnamed route, or no route (a 404 or 405 here)
        method = request.method
        if name == PAGE_SOCKET:
            return await self.relay.page_socket(request)
        if name == STATUS and method == "GET":
            return await self.status(request, handler)
        if name == STUDIO_CHANNELS and method == "GET":
            return await self.channel_ids(request, handler)
        if name == CHANNELS:
            if method == "GET":
                return await self.list_channels(request)
            if method == "POST":
                return await self.create(request, handler)
            return await handler(request)
        cid = match.get(CHANNEL)
        if cid is None:
            return await handler(request)
        if name == STATE_SOCKET:
            return await self.relay.state_socket(request)
        # the fence: a channel runs here only while this process can count on its lease (a
        # process that was frozen past it, or cut off from Redis, asks Redis first and
        # stops running a channel it lost, never answering from its stale game)
        if cid in hub.channels and await self.relay.cluster.confirm(cid):
            try:
                return await handler(request)
            except NotFound:
                # the channel left this process mid-request (handed on, lease lost): its
                # handler changed nothing, and the next owner answers
                if cid in hub.channels or name == FEED_SOCKET or not await self.relay.exists(cid):
                    raise
        if request.headers.get(FORWARDED):
            return web.json_response({"error": f"channel {cid!r} is not run here"}, status=421)
        if not await self.relay.exists(cid):
            return await handler(request)  # a 404 (or a waiting page) as on one box
        if name == FEED_SOCKET:
            return await self.relay.feed_socket(request)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        body = await request.read()
        status, out_headers, answer = await self.relay.forward(cid, request.method, request.path_qs, headers, body)
        if status == -1:
            return await handler(request)
        return web.Response(status=status, body=answer, headers=out_headers)

    async def status(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The one-box status of this process's channels, plus its part in the cluster."""
        response = await handler(request)
        if not isinstance(response, web.Response) or response.status != 200 or response.text is None:
            return response
        body = json.loads(response.text)
        body["cluster"] = await self.relay.cluster.describe()
        return web.json_response(body)

    async def channel_ids(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The studio's channel picker: every channel id in Redis, oldest first, whichever
        process runs it (the studio's own handler knows only this process's); its guard
        (the token) is the studio handler's, so that one answers a refusal."""
        response = await handler(request)
        if response.status != 200:
            return response
        return web.json_response({"channels": await self.ids()})

    async def ids(self) -> list[str]:
        """Every channel id in Redis, in the order the channels were created.

        Raises:
            StoreFailed: Redis unreachable for ``serve --forward-wait`` seconds (503).
        """
        deadline = time.monotonic() + self.relay.settings.forward_wait
        while True:
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    held = await self.relay.client.hgetall("eo:channels")
                break
            except Exception as exc:  # redis-py's ConnectionError, TimeoutError, ...
                if time.monotonic() >= deadline:
                    raise StoreFailed(f"the channel list: Redis cannot be reached ({str(exc)[:160] or type(exc).__name__}); retry") from None
                await asyncio.sleep(REDIS_RETRY)
        return [text_of(c) for c, _ in sorted(held.items(), key=lambda kv: (float(kv[1]), kv[0]))]

    async def list_channels(self, request: web.Request) -> web.Response:
        """Every channel of every process (each owner answers for its own)."""
        hub: Hub = request.app[HUB]
        ids = await self.ids()
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("authorization", "x-token")}

        async def one(cid: str) -> dict[str, Any] | None:
            if cid in hub.channels:
                return hub.channels[cid].info(hub.clock())
            try:
                status, _, body = await self.relay.forward(cid, "GET", f"/api/channels/{cid}", headers, b"")
            except (NotFound, StoreFailed):
                return None
            if status == -1 and cid in hub.channels:
                return hub.channels[cid].info(hub.clock())
            return json.loads(body) if status == 200 else None

        infos = await asyncio.gather(*(one(c) for c in ids))
        return web.json_response({"channels": [i for i in infos if i is not None]})

    async def create(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Reserve the id in Redis (409 if any process has it), take its lease, create it here."""
        try:
            cid = json.loads(await request.read()).get("id")
        except (ValueError, AttributeError):
            cid = None
        if not isinstance(cid, str) or not _ID.match(cid):
            return await handler(request)  # the handler's own refusal
        reserve = """
        if redis.call('HEXISTS', 'eo:channels', ARGV[1]) == 1 then return 0 end
        redis.call('HSET', 'eo:channels', ARGV[1], ARGV[3])
        redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4])
        return 1
        """
        k = Keys(cid)
        try:
            async with asyncio.timeout(self.relay.settings.forward_wait):
                ok = await self.relay.client.eval(reserve, 1, k.lease, cid, self.relay.cluster.me, repr(time.time()), int(LEASE_TTL * 1000))
        except Exception as exc:  # refused: nothing reserved; no answer: Redis may still run it when back
            raise StoreFailed(
                f"channel {cid!r} not confirmed: Redis cannot be reached ({str(exc)[:160] or type(exc).__name__}); "
                "once it is back, GET /api/channels says whether it was made"
            ) from None
        if not ok:
            raise Conflict(f"channel {cid!r} already exists", channel=cid)
        # held from now: a tick while the handler awaits must neither count the new channel
        # as settled (and hand it on) nor miss its lease
        cluster = self.relay.cluster
        cluster.acquired[cid] = cluster.renewed[cid] = time.monotonic()
        try:
            response = await handler(request)
        except BaseException:
            cluster.acquired.pop(cid, None)
            cluster.renewed.pop(cid, None)
            with contextlib.suppress(Exception):
                await self.relay.client.hdel("eo:channels", cid)
                await self.relay.client.delete(k.lease)
            raise
        return response


#: the relay of a ``serve --redis`` process
CLUSTER = web.AppKey("cluster", Router)


def open_store(settings: ServerSettings) -> tuple[RedisStore, str, str | None]:
    """This process's working store, and the API token's hash shared through Redis (the
    first process's token, or ``--token``, is every process's); the token itself when this
    start created it (printed once).

    Raises:
        StoreBroken: Redis cannot be reached at ``settings.redis``.
    """
    import secrets

    from ..service.store import StoreBroken

    try:
        import redis
        import redis.asyncio
    except ImportError:
        raise StoreBroken("serve --redis needs the redis package: pip install 'euchre-overlay[scale]'") from None

    # RESP2: redis-py's RESP3 parsers build the text of every pub/sub message for a debug log
    # line even when nothing logs it (0.07 ms per 25 kB scene here, more than the rest of
    # receiving it); the replies the service reads are the same in both protocols
    client = redis.asyncio.Redis.from_url(str(settings.redis), health_check_interval=5, protocol=2)
    store = RedisStore(client, Cluster.new_id())
    created: str | None = None
    try:
        sync = redis.Redis.from_url(str(settings.redis), socket_timeout=5)
        if settings.token:
            sync.set("eo:token", token_hash(settings.token))
        else:
            plain = secrets.token_urlsafe(24)
            if sync.set("eo:token", token_hash(plain), nx=True):
                created = plain
        stored = sync.get("eo:token")
        digest = stored.decode() if isinstance(stored, bytes) else str(stored or "")
        sync.close()
    except redis.exceptions.RedisError as exc:
        raise StoreBroken(f"{settings.redis}: cannot reach Redis ({exc})") from None
    return store, digest, created


# Lua: the first process ever started on this Redis marks it initialized; with the demo on
# and no channel yet, it reserves the demo channel and takes its lease (1), else 0.
_DEMO = """
if not redis.call('SET', 'eo:initialized', ARGV[1], 'NX') then return 0 end
if ARGV[2] ~= '1' or redis.call('HLEN', 'eo:channels') > 0 then return 0 end
redis.call('HSET', 'eo:channels', 'demo', ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
return 1
"""


async def install_demo_once(cluster: Cluster, *, demo: bool) -> bool:
    """A fresh Redis gets the demo channel once, from whichever process starts first, as a
    fresh install does on one box (several processes starting together make one demo, not
    one each); it is then a channel like any other, owned by a lease.  True if this process
    installed it.

    Raises:
        redis.exceptions.RedisError: Redis unreachable at start-up.
    """
    from engine.errors import EgnError

    from ..service.demo import install_demo

    if not await cluster.client.eval(_DEMO, 1, Keys("demo").lease, cluster.me, "1" if demo else "0", repr(time.time()), int(LEASE_TTL * 1000)):
        return False
    cluster.acquired["demo"] = cluster.renewed["demo"] = time.monotonic()
    try:
        install_demo(cluster.hub)
    except (EgnError, OSError, ImportError) as exc:
        log.error("demo channel not installed: %s", exc)
        cluster.acquired.pop("demo", None)
        cluster.renewed.pop("demo", None)
        await cluster.client.hdel("eo:channels", "demo")
        await cluster.client.delete(Keys("demo").lease)
        return False
    return True


def install(app: web.Application, settings: ServerSettings, store: RedisStore) -> None:
    """Wire a ``serve --redis`` process: the cluster (leases, takeovers, publishing) and the
    relay start with the app; :func:`routing_middleware` finds the router at :data:`CLUSTER`."""
    hub = app[HUB]
    cluster = Cluster(str(settings.redis), hub, store, store.client)
    relay = Relay(cluster, settings)
    app[CLUSTER] = Router(relay)

    async def ctx(app: web.Application) -> AsyncIterator[None]:
        cluster.start(settings.advertise or "")  # serve() sets the address once it listens
        relay.start()
        try:
            await install_demo_once(cluster, demo=settings.demo)
        except Exception as exc:  # Redis away at start: the processes run on without a demo
            log.error("demo channel not installed: %s", exc)
        yield
        await relay.stop()
        await cluster.stop()
        await store.client.aclose()

    app.cleanup_ctx.append(ctx)


@web.middleware
async def routing_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Serve here, relay from Redis, or forward to the owner (:meth:`Router.route`)."""
    return await request.app[CLUSTER].route(request, handler)


class RedisScaleOut:
    """``serve --redis`` as the service's :class:`~overlay.service.app.ScaleOut`: the Redis
    store, the routing middleware, the cluster and the relay::

        create_app(settings, scale_out=RedisScaleOut())
    """

    def __init__(self) -> None:
        self.middleware: Middleware = routing_middleware
        self.store: RedisStore | None = None

    def open_store(self, settings: ServerSettings) -> tuple[Store, str, str | None]:
        """See :func:`open_store`."""
        self.store, token, created = open_store(settings)
        return self.store, token, created

    def install(self, app: web.Application) -> None:
        """See :func:`install`; after :meth:`open_store`."""
        if self.store is None:
            raise RuntimeError("RedisScaleOut.install before open_store")
        install(app, app[SETTINGS], self.store)
