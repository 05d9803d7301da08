"""The API token: who may change a channel.

Pages, static files and the state stream are read-only and open; every handler marked
:func:`protected` needs the token (``Authorization: Bearer``, ``X-Token`` or ``?token=``),
checked in constant time by :func:`auth_middleware`.  The store keeps only the token's
SHA-256 (:func:`token_hash`); ``euchre-overlay token --rotate`` makes a new one.

The state of the live (preview) output needs the token too: it shows hole cards before the
program output's anti-cheat delay.  Page and state sockets check ``Origin``
(:func:`check_origin`), so a foreign web page open in the operator's browser cannot read
them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web

from .errors import Forbidden, Unauthorized
from .keys import TOKEN
from .store import Store

__all__ = [
    "Handler",
    "protected",
    "auth_middleware",
    "ensure_token",
    "rotate_token",
    "token_hash",
    "has_token",
    "require_token",
    "origin_allowed",
    "check_origin",
    "OBS_LOCAL_ORIGIN",
    "FEED_KEY_PREFIX",
    "credential_of",
]

#: the origin of a page OBS's browser source loads from a local file
OBS_LOCAL_ORIGIN = "http://absolute"
#: what a channel's feed key starts with (:mod:`overlay.service.feedkeys`)
FEED_KEY_PREFIX = "efk_"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def protected(handler: Handler) -> Handler:
    """Mark a handler as needing the token."""
    handler.protected = True  # type: ignore[attr-defined]
    return handler


def credential_of(request: web.Request) -> str | None:
    """What the request offers as its credential: the token, or a channel's feed key."""
    return _token_of(request)


def _token_of(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("X-Token") or request.query.get("token")


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256 (a random 24-byte token needs no salt
    or slow hash: guessing it is as hard as guessing the hash's input)."""
    return hashlib.sha256(token.encode()).hexdigest()


def has_token(request: web.Request) -> bool:
    """The request carries the right token (compared in constant time, as hashes)."""
    return token_matches(request, _token_of(request))


def token_matches(request: web.Request, token: str | None) -> bool:
    """``token`` is the app's token (compared in constant time, as hashes)."""
    given = token_hash(token or "")
    return hmac.compare_digest(given.encode(), request.app[TOKEN].encode())


def require_token(request: web.Request) -> None:
    """Raises:
    Unauthorized: the request lacks the token."""
    if not has_token(request):
        raise Unauthorized("missing or wrong token (Authorization: Bearer TOKEN, X-Token or ?token=)")


@web.middleware
async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse a protected handler's request without the right token (401).

    A handler may take another credential as well (``handler.accepts(request)``: the feed
    routes take their channel's feed key, :func:`overlay.service.feedkeys.feed_route`); a
    feed key anywhere else is refused as such (403), so a logger's key never reaches
    settings, control or another channel.
    """
    if getattr(handler, "protected", False) and not has_token(request):
        accepts = getattr(handler, "accepts", None)
        if accepts is None or not accepts(request):
            if (_token_of(request) or "").startswith(FEED_KEY_PREFIX):
                raise Forbidden("a feed key may post actions, open the feed socket and PUT the game of its own channel only; this needs the API token")
            require_token(request)
    return await handler(request)


def ensure_token(store: Store, configured: str | None) -> tuple[str, str | None]:
    """The token's hash, and the token itself when this start created it (printed once).

    Configured: its hash.  Stored: the stored hash (a plain token left by an older version
    is replaced by its hash).  Else a new token is created and its hash stored.
    """
    if configured:
        return token_hash(configured), None
    stored = store.meta("token_hash")
    if stored:
        return stored, None
    plain = store.meta("token")
    if plain:
        store.set_meta("token_hash", token_hash(plain))
        store.delete_meta("token")
        return token_hash(plain), None
    return rotate_token(store)


def rotate_token(store: Store) -> tuple[str, str]:
    """A new token: its hash is stored (the old token stops working at the next start);
    returns (hash, token)."""
    token = secrets.token_urlsafe(24)
    store.set_meta("token_hash", token_hash(token))
    return token_hash(token), token


def origin_allowed(request: web.Request, allowed: tuple[str, ...] = ()) -> bool:
    """A page or state socket's ``Origin``: none (not a browser), this server's own, OBS's
    local-file origin (``http://absolute``), or one of ``allowed``."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    origin = origin.rstrip("/").lower()
    own = {f"{scheme}://{request.host}".lower() for scheme in ("http", "https")}
    return origin in own or origin == OBS_LOCAL_ORIGIN or origin in {a.rstrip("/").lower() for a in allowed}


def check_origin(request: web.Request, allowed: tuple[str, ...] = ()) -> None:
    """Raises:
    Forbidden: a browser page from a foreign origin opened a socket."""
    if not origin_allowed(request, allowed):
        raise Forbidden(f"origin {request.headers.get('Origin', '')[:100]!r} may not open this socket (serve --allow-origin)")
