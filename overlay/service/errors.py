"""Typed errors of the overlay service, each with the HTTP status it maps to.

The engine's own errors (:class:`engine.errors.EgnError`, all ``ValueError``) map to 400 in
the one error middleware of :mod:`overlay.service.refusals`; these cover what only the service knows
(missing channels, stale revisions, sequence gaps, auth).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MAX_ERROR",
    "excerpt",
    "OverlayError",
    "BadRequest",
    "Unauthorized",
    "NotFound",
    "Conflict",
    "Unprocessable",
    "StaleRevision",
    "SequenceGap",
    "InvalidAction",
    "TooLarge",
    "UnsupportedMedia",
    "Forbidden",
    "StoreFailed",
    "StoreFull",
]


#: longest error text an answer, a status field or a socket message carries: a refusal quotes
#: a bounded excerpt of the input, never the input (a 6 MB body must not come back as a 3 MB
#: error; a theme with 100,000 unknown keys came back as a 7 MB one)
MAX_ERROR = 600


def excerpt(text: str, limit: int = MAX_ERROR) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


class OverlayError(Exception):
    """Base class: ``status`` is the HTTP status, ``extra`` goes into the JSON body.  The
    message is cut to :data:`MAX_ERROR` characters here, once, wherever it is shown."""

    status = 500
    kind = "error"

    def __init__(self, message: str, **extra: Any) -> None:
        message = excerpt(message)
        super().__init__(message)
        self.message = message
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        return {"error": self.message, "kind": self.kind, **self.extra}


class BadRequest(OverlayError, ValueError):
    status = 400
    kind = "bad_request"


class Unauthorized(OverlayError):
    status = 401
    kind = "unauthorized"


class NotFound(OverlayError, LookupError):
    status = 404
    kind = "not_found"


class Conflict(OverlayError):
    status = 409
    kind = "conflict"


class Unprocessable(OverlayError, ValueError):
    """A well-formed request the channel cannot carry out as it stands (an alternative line
    that the game does not have, a branch on a channel without a game): 422 with the reason."""

    status = 422
    kind = "unprocessable"


class StaleRevision(Conflict):
    """A settings write named an old revision; ``current`` carries the stored document."""

    kind = "stale_revision"


class SequenceGap(Conflict):
    """An action skipped sequence numbers; ``expected`` is the next number accepted."""

    kind = "sequence_gap"


class InvalidAction(BadRequest):
    """A logger's message the protocol refuses (an action, or a whole game on the feed socket:
    a wrong type, an unknown field), its text naming the channel and the action's ``seq``;
    ``errors``/``errorCount`` as a validation error's."""

    kind = "validation"

    def __init__(self, message: str, *, seq: int | None = None, **extra: Any) -> None:
        super().__init__(message, **extra)
        #: the action's ``seq`` when the message had a whole-number one (the feed log keeps it)
        self.seq = seq


class TooLarge(OverlayError):
    status = 413
    kind = "too_large"


class UnsupportedMedia(OverlayError):
    """A body in a charset (or type) the service cannot read."""

    status = 415
    kind = "unsupported_media"


class Forbidden(OverlayError):
    """A request the token does not make legal (a path outside the allowed folders, a page
    socket from a foreign origin)."""

    status = 403
    kind = "forbidden"


class StoreFailed(OverlayError):
    """The database refused a write (disk full: 507; locked, read-only, I/O error: 503).
    Nothing changed: memory is only updated after the write."""

    status = 503
    kind = "store"


class StoreFull(StoreFailed):
    status = 507
    kind = "store_full"
