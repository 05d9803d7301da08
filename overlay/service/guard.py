"""Connections: a request that is half sent times out, one client address holds a bounded
number of connections, the process stays below its open-file limit, and a failing
``accept()`` is logged once in a while, not once per attempt.

Measured before this module (issue 22, item 4): 300 sockets that sent half a request were
held for 60 s and more (aiohttp's server has no header or body read timeout; its keep-alive
timeout is an hour); under a 400-file limit, 420 of them took every descriptor, every page
load then waited 120 s in the listen backlog, and asyncio's accept loop wrote 563 MB of
"Too many open files" to stderr (Python 3.11's ``_accept_connection`` logs with a
traceback, and goes on trying, up to the backlog's size on every readiness of the socket).

The rules (:class:`Guard`), on each connection of ``serve``:

- **waiting** (no request being answered): the next request's line and headers must be
  complete within ``header_timeout`` seconds of the connection opening or of the previous
  answer, else the connection is closed (with a ``408`` when part of a request came);
- **a body that stops**: while a handler waits for a request's body, a gap of
  ``body_timeout`` seconds without a byte closes the connection with a ``408``;
- **caps**: at most ``per_address`` connections from one client address, and at most
  :attr:`Guard.budget` in all (the open-file limit less what the process holds besides
  connections, less a reserve), so ``accept()`` never runs out of descriptors.  A new
  connection over a cap takes the place of the longest-waiting connection under that cap
  (one that has no request being answered: closing it costs its client nothing but a
  reconnect); if every one is busy (answering, or an open WebSocket), the newcomer gets a
  ``503`` naming the cap and is closed.

A WebSocket is a request being answered for as long as it is open: never timed out here
(its heartbeat and the outbox's send limit look after it).  The guard's middleware
(:meth:`Guard.middleware`) tells it when a connection's request starts and ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

#: a request handler (as :data:`overlay.service.auth.Handler`, which imports the keys, which import this)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

__all__ = ["Guard", "GuardedSite", "raise_file_limit", "quiet_accept_errors", "RESERVE", "BACKLOG"]

log = logging.getLogger("overlay.service.guard")

#: the listen backlog: asyncio accepts up to this many connections in one go, each holding
#: a descriptor before the guard sees any of them
BACKLOG = 128
#: descriptors kept free: those accepted in one go (:data:`BACKLOG`), and 64 for what the
#: process opens besides client connections (the database and its WAL, static files being
#: sent, Redis, worker pipes, followed files)
RESERVE = BACKLOG + 64
#: seconds between two log lines about ``accept()`` failing
ACCEPT_LOG_EVERY = 10.0


def _answer(status: int, reason: str, error: str) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection (written before any other byte of
    an answer on it: the request was not complete, or the connection is refused)."""
    body = json.dumps({"error": error}).encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode() + body


class _Conn:
    """What the guard knows of one connection."""

    __slots__ = ("transport", "address", "since", "last", "partial", "request", "closed")

    def __init__(self, transport: asyncio.Transport, address: str, now: float) -> None:
        self.transport = transport
        self.address = address
        self.since = now  # when it began waiting for a request (opened, or its last answer)
        self.last = now  # when its last byte came
        self.partial = False  # bytes of a request came while waiting
        self.request: web.BaseRequest | None = None  # the request being answered
        self.closed = False

    def close(self, answer: bytes = b"") -> None:
        if self.closed:
            return
        self.closed = True
        if answer:
            with contextlib.suppress(Exception):
                self.transport.write(answer)
            self.transport.close()  # the answer leaves first
        else:
            self.transport.abort()  # the descriptor goes at once


class Guard:
    """The connection rules of one server (see the module's docstring)."""

    def __init__(
        self,
        *,
        header_timeout: float = 10.0,
        body_timeout: float = 10.0,
        per_address: int = 512,
        budget: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.per_address = per_address
        self.budget = budget if budget is not None else file_budget()
        self.clock = clock
        self.conns: dict[asyncio.BaseTransport, _Conn] = {}
        self.by_address: dict[str, set[_Conn]] = {}
        self.counts = {"timedOutHeaders": 0, "timedOutBodies": 0, "closedIdle": 0, "evicted": 0, "refused": 0}
        self._sweeper: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ connections

    def admit(self, transport: asyncio.Transport) -> bool:
        """Register a new connection, making room under the caps; False: refused (a 503
        was written and it is closing)."""
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if len(self.by_address.get(address, ())) >= self.per_address and not self._evict(self.by_address[address]):
            self._refuse(transport, f"{address} already holds {self.per_address} connections, all busy (at most {self.per_address} per address)")
            return False
        if len(self.conns) >= self.budget and not self._evict(self.conns.values()):
            self._refuse(transport, f"the server holds {len(self.conns)} connections, all busy (at most {self.budget})")
            return False
        conn = _Conn(transport, address, self.clock())
        self.conns[transport] = conn
        self.by_address.setdefault(address, set()).add(conn)
        self._arm()
        return True

    def _refuse(self, transport: asyncio.Transport, why: str) -> None:
        self.counts["refused"] += 1
        n = self.counts["refused"]
        if n in (1, 10, 100) or n % 1000 == 0:  # a flood of refusals must not flood the log
            log.warning("connection refused (%d so far): %s", n, why)
        with contextlib.suppress(Exception):
            transport.write(_answer(503, "Service Unavailable", f"{why}; try again later"))
        transport.close()

    def _evict(self, among: Any) -> bool:
        """Close the longest-waiting connection of ``among`` (one with no request being
        answered); False when every one is busy."""
        waiting = [c for c in among if c.request is None and not c.closed]
        if not waiting:
            return False
        victim = min(waiting, key=lambda c: c.since)
        self.counts["evicted"] += 1
        victim.close(_answer(408, "Request Timeout", "the server needed this waiting connection for another") if victim.partial else b"")
        self.forget(victim.transport)
        return True

    def forget(self, transport: asyncio.BaseTransport) -> None:
        conn = self.conns.pop(transport, None)
        if conn is None:
            return
        mine = self.by_address.get(conn.address)
        if mine is not None:
            mine.discard(conn)
            if not mine:
                del self.by_address[conn.address]

    def received(self, transport: asyncio.BaseTransport) -> None:
        conn = self.conns.get(transport)
        if conn is not None:
            conn.last = self.clock()
            if conn.request is None:
                conn.partial = True

    # ------------------------------------------------------------------ requests (the middleware)

    def started(self, request: web.BaseRequest) -> None:
        conn = self.conns.get(request.transport) if request.transport is not None else None
        if conn is not None:
            conn.request = request
            conn.partial = False

    def ended(self, request: web.BaseRequest) -> None:
        conn = self.conns.get(request.transport) if request.transport is not None else None
        if conn is not None and conn.request is request:
            conn.request = None
            conn.since = self.clock()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Tell the guard a connection has a request being answered (its time limits
        change); the first of the app's middlewares."""
        self.started(request)
        try:
            return await handler(request)
        finally:
            self.ended(request)

    # ------------------------------------------------------------------ time limits

    def _arm(self) -> None:
        if self._sweeper is None and self.conns:
            loop = asyncio.get_running_loop()
            self._sweeper = loop.call_later(min(1.0, self.header_timeout / 4, self.body_timeout / 4), self.sweep)

    def sweep(self) -> None:
        """Close the connections past a time limit (runs every second while any is open)."""
        self._sweeper = None
        now = self.clock()
        for conn in list(self.conns.values()):
            request = conn.request
            if request is None:
                if now - conn.since <= self.header_timeout:
                    continue
                if conn.partial:
                    self.counts["timedOutHeaders"] += 1
                    conn.close(_answer(408, "Request Timeout", f"the request's headers did not arrive within {self.header_timeout:g} s"))
                else:
                    self.counts["closedIdle"] += 1
                    conn.close()
                self.forget(conn.transport)
            elif now - conn.last > self.body_timeout and not request.content.is_eof():
                self.counts["timedOutBodies"] += 1
                conn.close(_answer(408, "Request Timeout", f"the request's body stopped for {self.body_timeout:g} s"))
                self.forget(conn.transport)
        self._arm()

    def status(self) -> dict[str, Any]:
        """For ``GET /api/status``: connections open, the caps and what the rules did."""
        return {
            "open": len(self.conns),
            "addresses": len(self.by_address),
            "budget": self.budget,
            "perAddress": self.per_address,
            "headerTimeout": self.header_timeout,
            "bodyTimeout": self.body_timeout,
            **self.counts,
        }


class _Guarded(asyncio.Protocol):
    """aiohttp's protocol for one connection, with the guard told of its bytes and its end."""

    def __init__(self, guard: Guard, inner: asyncio.Protocol) -> None:
        self.guard = guard
        self.inner = inner
        self.transport: asyncio.BaseTransport | None = None
        self.admitted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if not isinstance(transport, asyncio.Transport) or not self.guard.admit(transport):
            return
        self.admitted = True
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.admitted:
            self.guard.received(self.transport)  # type: ignore[arg-type]
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.admitted else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.guard.forget(self.transport)
        if self.admitted:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.admitted:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.admitted:
            self.inner.resume_writing()


class GuardedSite(web.TCPSite):
    """A TCP site whose connections follow ``guard``'s rules."""

    def __init__(self, runner: web.BaseRunner, host: str | None, port: int | None, *, guard: Guard) -> None:
        super().__init__(runner, host, port)
        self.guard = guard

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Guarded(self.guard, server()), self._host, self._port, backlog=BACKLOG
        )


def open_files() -> int:
    """Descriptors this process holds now (Linux; elsewhere a guess)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 32


def file_budget() -> int:
    """Connections this process may hold: its open-file limit less what it holds besides
    connections and :data:`RESERVE` (at least 16)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1024
    if soft == getattr(resource, "RLIM_INFINITY", -1):
        soft = 1 << 20
    return max(16, soft - open_files() - RESERVE)


def raise_file_limit(*, most: int = 1 << 16) -> tuple[int, int]:
    """Raise this process's soft open-file limit to its hard limit (at most ``most``): a
    desktop's default of 1,024 is a few hundred pages.  Returns (before, after)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = most if hard == resource.RLIM_INFINITY else min(hard, most)
        if want > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            return soft, want
        return soft, soft
    except (ImportError, OSError, ValueError):
        return -1, -1


_ACCEPT_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, *, every: float = ACCEPT_LOG_EVERY) -> None:
    """Log a failing ``accept()`` (out of descriptors or memory) at most once per ``every``
    seconds, with how many times it failed since, and no traceback; every other error goes
    to the loop's usual handler.  (asyncio logs each failure with its traceback, and on
    Python 3.11 it tries up to the backlog's size again on every readiness of the socket.)"""
    state = {"next": 0.0, "count": 0}
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _ACCEPT_ERRORS and "accept" in str(context.get("message", "")):
            state["count"] += 1
            now = time.monotonic()
            if now >= state["next"]:
                log.error(
                    "cannot accept connections: %s (%d times in the last %g s); they wait in the listen backlog "
                    "(the open-file limit is too low for this many connections: ulimit -n, or fewer pages)",
                    exc.strerror or exc, state["count"], every,
                )
                state["next"], state["count"] = now + every, 0
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
