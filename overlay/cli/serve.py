"""``euchre-overlay serve``: the overlay service (pages for OBS, control/feed/state API)."""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import signal
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

__all__ = ["register", "run", "serve"]


def register(sub: Any) -> None:
    from ..service.config import DEFAULT_PORT, FORWARD_WAIT
    from ..service.store import default_data_dir

    p = sub.add_parser(
        "serve",
        help="serve the transparent overlay pages for OBS and the control/feed API",
        description="Serve overlay pages (/overlay/CHANNEL) and the JSON/WebSocket API. "
        "A fresh install gets a channel 'demo' looping a bundled game.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free port)")
    p.add_argument("--data", type=Path, default=None, help=f"data folder for the SQLite file (default {default_data_dir()})")
    p.add_argument("--token", default=None, help="API token (default: created on first start and stored)")
    p.add_argument("--no-demo", action="store_true", help="do not create the demo channel on a fresh install")
    p.add_argument(
        "--allow-dir",
        action="append",
        type=Path,
        default=[],
        help="a folder the load and follow routes may read (repeat for more; default: any readable path)",
    )
    p.add_argument(
        "--sync",
        choices=("full", "normal"),
        default="full",
        help="full (default): every acknowledged write is fsynced before the answer and survives a power cut; "
        "normal: survives a killed process, not a power cut, at a fraction of the cost per write",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        help="a web origin (https://host:port) whose pages may open the page and state sockets, besides this server's own and OBS's",
    )
    p.add_argument(
        "--max-connections-per-address",
        type=int,
        default=512,
        metavar="N",
        help="connections one client address may hold at once (default 512; behind a reverse proxy, where every "
        "client has the proxy's address, raise it)",
    )
    p.add_argument(
        "--request-timeout",
        metavar="SECONDS",
        type=lambda t: _seconds(t, 1.0, 300.0),
        default=10.0,
        help="seconds a connection may take to send a request's headers, and a request's body may stop, before "
        "the server answers 408 and closes it (default 10; 1 to 300; raise it for clients on very slow links)",
    )
    p.add_argument(
        "--redis",
        metavar="URL",
        default=None,
        help="share the channels with other serve processes through Redis (redis://host:port/db); "
        "the data lives in Redis, not in the SQLite file (docs/scale-out.md)",
    )
    p.add_argument(
        "--advertise",
        metavar="URL",
        default=None,
        help="with --redis: the address other processes reach this one at (default: the one it listens on)",
    )
    p.add_argument(
        "--forward-wait",
        metavar="SECONDS",
        type=lambda t: _seconds(t, 1.0, 60.0),
        default=FORWARD_WAIT,
        help=f"with --redis: how long a request for a channel another process runs may wait for an owner while the "
        f"channel moves, or for Redis while it cannot be reached, before a 503 (default {FORWARD_WAIT:g}; 1 to 60)",
    )
    p.set_defaults(func=run)


def _seconds(text: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text} s is outside {low:g} to {high:g} s")
    return value


#: the server's log lines on its terminal: each with the time, so that a producer reading it after
#: a show can tell when (the accept errors, the refused writes, the settings refused at start)
LOG_FORMAT = "%(asctime)s %(levelname)s: %(message)s"
LOG_DATE = "%Y-%m-%d %H:%M:%S"


def log_to_terminal() -> None:
    """Warnings and errors to standard error with their time (as Python's fallback printed them
    before, without it).  Nothing is changed where logging is already set up (a test, an
    embedding program)."""
    import logging

    logging.basicConfig(level=logging.WARNING, format=LOG_FORMAT, datefmt=LOG_DATE)


def run(args: argparse.Namespace) -> int:
    from ..service.config import ServerSettings
    from ..service.errors import StoreFailed
    from ..service.store import StoreBroken, default_data_dir

    log_to_terminal()

    settings = ServerSettings(
        host=args.host,
        port=args.port,
        data_dir=args.data or default_data_dir(),
        token=args.token,
        demo=not args.no_demo,
        allow_dirs=tuple(args.allow_dir),
        allow_origins=tuple(args.allow_origin),
        synchronous=args.sync.upper(),
        redis=args.redis,
        advertise=args.advertise,
        forward_wait=args.forward_wait,
        header_timeout=args.request_timeout,
        body_timeout=args.request_timeout,
        per_address=args.max_connections_per_address,
    )
    try:
        asyncio.run(serve(settings))
    except (StoreBroken, StoreFailed) as exc:
        # one line and exit 2: a supervisor's log says what to fix (no traceback loop)
        print(f"euchre-overlay: {exc}", file=sys.stderr)
        return 2
    finally:
        # the interpreter's exit runs full collections over every object left (with 2,000
        # channels restored, 1.7 M objects: 13-15 s of a 16 s shutdown); frozen objects are
        # skipped and are freed as their references go
        gc.freeze()
    return 0


async def serve(settings: Any, *, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    """Run until SIGINT/SIGTERM (or ``stop`` is set); prints the URLs to paste into OBS."""
    from ..service.app import ScaleOut, create_app
    from ..service.guard import GuardedSite, quiet_accept_errors, raise_file_limit
    from ..service.keys import GUARD, HUB, TOKEN_CREATED

    raise_file_limit()  # before the guard counts its budget of connections (create_app)
    quiet_accept_errors(asyncio.get_running_loop())
    scale_out: ScaleOut | None = None
    if settings.redis is not None:  # serve --redis: channels shared with other processes
        from ..cluster.routing import RedisScaleOut

        scale_out = RedisScaleOut()
    app = create_app(settings, scale_out=scale_out)
    runner = web.AppRunner(app, handle_signals=False)
    # Restoring the stored channels (in setup) builds ~850 long-lived objects per channel
    # and no cyclic garbage; with the collector on, its full collections over the growing
    # heap took 11 of 25 s to restore 2,000 channels.  Off while restoring, then the
    # restored objects are frozen: a later full collection skips them (one over 2,000
    # channels' 1.7 M objects stalls the loop, and every page, for 1-3 s).
    gc.disable()
    try:
        await runner.setup()
    finally:
        gc.enable()
    gc.freeze()
    site = GuardedSite(runner, settings.host, settings.port, guard=app[GUARD])
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()  # the store closed, its lock let go
        if exc.errno == errno.EADDRINUSE:
            raise OSError(f"{settings.host}:{settings.port} is in use (another server on it?): stop that one, or pass --port N (--port 0: any free port)") from None
        raise
    server = getattr(site, "_server", None)
    sockets = getattr(server, "sockets", None) or []
    port = sockets[0].getsockname()[1] if sockets else settings.port
    from ..service.network import ANY_HOSTS, network_addresses

    host = "127.0.0.1" if settings.host in ANY_HOSTS else settings.host
    base = f"http://{host}:{port}"
    out = sys.stdout
    channels = list(app[HUB].channels)
    if scale_out is not None:  # serve --redis: the others forward requests for our channels here
        from ..cluster.routing import CLUSTER
        from ..service.errors import StoreFailed

        app[CLUSTER].relay.cluster.listen(settings.advertise or base)
        try:  # every channel of the cluster: a page on any of them works here (forwarded)
            channels = await app[CLUSTER].ids()
        except StoreFailed:
            pass
    where = f"redis: {settings.redis}" if settings.redis else f"data: {settings.db_path}"
    print(f"euchre-overlay serving on {base}  ({where})", file=out)
    others = [f"http://{a}:{port}" for a in network_addresses(settings.host)]
    if others:
        print(f"On the network (OBS on another computer, the logger's tablet): {', '.join(others)}", file=out)
    else:
        print("Only this computer can reach it (OBS on another computer, the logger's tablet: serve --host 0.0.0.0)", file=out)
    if app[TOKEN_CREATED]:
        print(f"API token (shown once; only its hash is stored; lost: euchre-overlay token --rotate): {app[TOKEN_CREATED]}", file=out)
    if channels:
        print("Paste into an OBS Browser Source (width 1920, height 1080):", file=out)
        for cid in channels:
            print(f"  {base}/overlay/{cid}", file=out)
    else:
        print(f"No channels yet: create one with POST {base}/api/channels", file=out)
    print(f"Studio (sign in with the API token): {base}/studio", file=out)
    out.flush()
    if ready is not None:
        ready.set()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
            pass
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
