"""The API token: who may change a channel.

Pages, static files and the state stream are read-only and open; every handler marked
:func:`protected` needs the token (``Authorization: Bearer``, ``X-Token`` or ``?token=``),
checked in constant time by :func:`auth_middleware`.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web

from .errors import Unauthorized
from .keys import TOKEN
from .store import Store

__all__ = ["Handler", "protected", "auth_middleware", "ensure_token"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def protected(handler: Handler) -> Handler:
    """Mark a handler as needing the token."""
    handler.protected = True  # type: ignore[attr-defined]
    return handler


def _token_of(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("X-Token") or request.query.get("token")


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse a protected handler's request without the right token (401)."""
    if getattr(handler, "protected", False):
        given = _token_of(request) or ""
        if not hmac.compare_digest(given.encode(), request.app[TOKEN].encode()):
            raise Unauthorized("missing or wrong token (Authorization: Bearer TOKEN, X-Token or ?token=)")
    return await handler(request)


def ensure_token(store: Store, configured: str | None) -> tuple[str, bool]:
    """The API token: configured, else stored, else created now (returned with True)."""
    if configured:
        return configured, False
    token = store.meta("token")
    if token:
        return token, False
    token = secrets.token_urlsafe(24)
    store.set_meta("token", token)
    return token, True
