"""Feed keys: a logger's credential for one channel's feed, and nothing else.

A producer hands a logger (a person at the table with a tablet, a scorer's program) a key
that may post actions, open the feed socket and PUT the game *of that channel only*: never
its settings, its playback, another channel or the studio.  Each channel holds up to
:data:`MAX_KEYS` keys, each with a label ("North table tablet"), revocable one by one.

Like the API token (:mod:`overlay.service.auth`), a key is stored as its SHA-256 only and
shown once, when it is made.  A key reads ``efk_<id>_<secret>``: the id finds the stored
hash without trying every key, the secret is 24 random bytes (guessing it is as hard as
guessing the hash's input, so no salt or slow hash), and the prefix lets a refusal say that
a feed key was used where only the token goes.  The keys of a channel live in the store's
``meta`` table under :data:`~overlay.service.store.FEED_KEYS` + the channel id, so they go
with the channel's row when it is deleted.

A feed route accepts a key through the same headers as the token (``Authorization:
Bearer``, ``X-Token``, ``?token=``): its handler is marked with :func:`feed_route`, and
:func:`overlay.service.auth.auth_middleware` asks :func:`accepts_feed_key` when the token
is not there.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import asdict, dataclass

from aiohttp import web

from .auth import FEED_KEY_PREFIX, Handler, credential_of, protected
from .errors import BadRequest, Conflict, Forbidden, NotFound
from .keys import HUB, SETTINGS, STORE
from .store import FEED_KEYS, Store

__all__ = ["FEED_KEY", "PREFIX", "MAX_KEYS", "FeedKey", "FeedKeys", "feed_route", "accepts_feed_key", "still_valid", "is_feed_key", "key_hash"]

#: what every feed key starts with
PREFIX = FEED_KEY_PREFIX
#: keys per channel (a table has a few loggers at most; a cap keeps the meta row small)
MAX_KEYS = 16
#: the request key holding the id of the feed key a request came with (absent: the token)
FEED_KEY = web.RequestKey("feed_key", str)
_KEY = re.compile(r"^efk_([0-9a-f]{8})_([A-Za-z0-9_-]{20,64})$")


def key_hash(key: str) -> str:
    """What the store keeps of a key: its SHA-256 (as for the API token)."""
    return hashlib.sha256(key.encode()).hexdigest()


def is_feed_key(text: str | None) -> bool:
    """``text`` has a feed key's shape (says nothing of whether it is valid)."""
    return bool(text) and _KEY.match(text or "") is not None


@dataclass(frozen=True)
class FeedKey:
    """One stored key: its id, label, when it was made (epoch seconds) and its hash."""

    id: str
    label: str
    created: float
    hash: str

    def public(self) -> dict[str, object]:
        """What a listing shows (never the hash)."""
        return {"id": self.id, "label": self.label, "created": self.created}


class FeedKeys:
    """The feed keys of the store's channels (read from the store on each call: a key
    revoked in one request is refused by the next)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def keys(self, channel: str) -> list[FeedKey]:
        raw = self.store.meta(FEED_KEYS + channel)
        if not raw:
            return []
        try:
            rows = json.loads(raw)
            return [FeedKey(str(r["id"]), str(r["label"]), float(r["created"]), str(r["hash"])) for r in rows]
        except (ValueError, TypeError, KeyError):
            return []  # an unreadable row grants nothing; making a key replaces it

    def _save(self, channel: str, keys: list[FeedKey]) -> None:
        if keys:
            self.store.set_meta(FEED_KEYS + channel, json.dumps([asdict(k) for k in keys]))
        else:
            self.store.delete_meta(FEED_KEYS + channel)

    def make(self, channel: str, label: str) -> tuple[FeedKey, str]:
        """A new key for ``channel``: the stored record and the key itself (shown once).

        Raises:
            Conflict: the channel has :data:`MAX_KEYS` keys already.
            BadRequest: a label over 80 characters.
        """
        label = label.strip()
        if len(label) > 80:
            raise BadRequest(f"feed key label of {len(label)} characters: at most 80")
        keys = self.keys(channel)
        if len(keys) >= MAX_KEYS:
            raise Conflict(f"channel {channel!r} has {MAX_KEYS} feed keys: revoke one first", channel=channel)
        used = {k.id for k in keys}
        kid = secrets.token_hex(4)
        while kid in used:
            kid = secrets.token_hex(4)
        key = f"{PREFIX}{kid}_{secrets.token_urlsafe(24)}"
        record = FeedKey(kid, label or f"key {len(keys) + 1}", round(time.time(), 3), key_hash(key))
        self._save(channel, [*keys, record])
        return record, key

    def revoke(self, channel: str, key_id: str) -> None:
        """Forget one key: requests made with it are refused from now on.

        Raises:
            NotFound: the channel has no key ``key_id``.
        """
        keys = self.keys(channel)
        left = [k for k in keys if k.id != key_id]
        if len(left) == len(keys):
            raise NotFound(f"channel {channel!r} has no feed key {key_id[:20]!r}", channel=channel)
        self._save(channel, left)

    def check(self, channel: str, key: str | None) -> FeedKey | None:
        """The stored key ``key`` is, if it is one of ``channel``'s (hashes compared in
        constant time); else None."""
        m = _KEY.match(key or "")
        if m is None:
            return None
        given = key_hash(key or "").encode()
        for k in self.keys(channel):
            if k.id == m.group(1) and hmac.compare_digest(given, k.hash.encode()):
                return k
        return None


def accepts_feed_key(request: web.Request) -> bool:
    """The request carries a feed key of the channel its path names.

    A channel another process runs (``serve --redis``) is checked by that process: the
    request goes there with its headers, and its owner's middleware asks again.

    Raises:
        Forbidden: a feed key of another channel (or a revoked one) where a feed key goes.
    """
    given = credential_of(request)
    if not is_feed_key(given):
        return False
    channel = request.match_info.get("channel", "")
    hub = request.app[HUB]
    if channel not in hub.channels and request.app[SETTINGS].redis is not None:
        return True  # the owner checks (overlay.cluster.routing forwards the request as it came)
    key = FeedKeys(request.app[STORE]).check(channel, given)
    if key is None:
        raise Forbidden(f"this feed key is not a current key of channel {channel[:64]!r} (revoked, or another channel's)")
    request[FEED_KEY] = key.id
    return True


def still_valid(request: web.Request) -> bool:
    """A request that came with a feed key still holds a current one (a long-lived feed
    socket asks before each frame: revoking a key ends its sockets too); True for the token."""
    if FEED_KEY not in request:
        return True
    return FeedKeys(request.app[STORE]).check(request.match_info.get("channel", ""), credential_of(request)) is not None


def feed_route(handler: Handler) -> Handler:
    """Mark a feed handler: it takes the API token or a feed key of its channel."""
    wrapped = protected(handler)
    wrapped.accepts = accepts_feed_key  # type: ignore[attr-defined]
    return wrapped
