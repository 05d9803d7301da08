"""Errors as HTTP answers: one middleware maps every refusal to a status and a JSON body.

The engine's typed errors and bad input map to 400 (413 for the size cap); the service's
own errors (:mod:`overlay.service.errors`) carry their status.  The feed socket sends the same
bodies as typed refusals, through :func:`error_body`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from engine.codec import json_reason
from engine.errors import EgnError
from engine.load import MAX_INPUT

from .auth import Handler
from .errors import MAX_ERROR, InvalidAction, OverlayError, excerpt

__all__ = ["REFUSED", "MAX_ERROR", "MAX_LISTED", "excerpt", "pydantic_text", "pydantic_errors", "error_body", "error_middleware", "invalid_action"]

log = logging.getLogger("overlay.service.refusals")

#: the exceptions a request or feed frame is refused with (anything else is a bug: 500)
REFUSED = (OverlayError, EgnError, ValidationError, json.JSONDecodeError, UnicodeDecodeError, RecursionError)


#: validation errors an answer lists (``errors``) besides their count (``errorCount``)
MAX_LISTED = 20


#: past this many errors they are counted, not listed: listing 100,000 of them took 0.8 s of
#: the event loop (request bodies are shape-checked first, :mod:`overlay.service.limits`;
#: this is the backstop for the sockets' messages)
MAX_ERRORS_READ = 1000


def _errors(exc: ValidationError) -> list[Any]:
    if exc.error_count() > MAX_ERRORS_READ:
        return []
    return list(exc.errors(include_url=False, include_input=False, include_context=False))


def pydantic_text(exc: ValidationError) -> str:
    """The validation errors as ``loc -> path: message``, joined by ``; ``, up to about
    :data:`MAX_ERROR` characters (then how many more there are)."""
    parts: list[str] = []
    size = 0
    errors = _errors(exc)
    for err in errors:
        loc = " -> ".join(str(x) for x in err.get("loc", ())) or "body"
        parts.append(f"{loc}: {err.get('msg')}")
        size += len(parts[-1]) + 2
        if size > MAX_ERROR:
            break
    text = "; ".join(parts)
    if not errors:
        return f"{exc.error_count()} validation errors of {exc.title} (too many to list: is it the right document?)"
    if len(parts) < len(errors):
        text = f"{excerpt(text)} ({len(errors)} errors in all)"
    return text


def pydantic_errors(exc: ValidationError) -> list[dict[str, Any]]:
    """The first :data:`MAX_LISTED` validation errors' places (``loc``, a list) and
    messages: the studio shows the message next to the field at that place."""
    return [{"loc": list(err.get("loc", ())), "msg": excerpt(str(err.get("msg", "")))} for err in _errors(exc)[:MAX_LISTED]]


def invalid_action(exc: ValidationError, channel: str, data: Any) -> InvalidAction:
    """A logger action the protocol refuses, as an error naming the channel and, when the
    message has a whole-number ``seq``, the action (``channel 't1': action 7: alone: Input
    should be a valid boolean``): the studio lists refusals of several channels and loggers."""
    raw = data.get("seq") if isinstance(data, dict) else None
    seq = raw if type(raw) is int else None
    where = f"channel {channel!r}" + (f": action {seq}" if seq is not None else "")
    return InvalidAction(f"{where}: {pydantic_text(exc)}", seq=seq, errors=pydantic_errors(exc), errorCount=exc.error_count())


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body for an error the API refuses with (others re-raised);
    the error text is bounded by :data:`MAX_ERROR`."""
    status, body = _error_body(exc)
    if isinstance(body.get("error"), str):
        body["error"] = excerpt(body["error"])
    return status, body


def _error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    if isinstance(exc, OverlayError):
        return exc.status, exc.to_json()
    if isinstance(exc, EgnError):
        return 400 if exc.kind != "size" else 413, {
            "error": str(exc),
            "kind": exc.kind,
            "place": exc.problem().to_json(),
        }
    if isinstance(exc, ValidationError):
        return 400, {"error": pydantic_text(exc), "kind": "validation", "errors": pydantic_errors(exc), "errorCount": exc.error_count()}
    if isinstance(exc, json.JSONDecodeError):
        return 400, {"error": f"request body is not JSON: line {exc.lineno}, column {exc.colno}: {json_reason(exc)}", "kind": "json"}
    if isinstance(exc, UnicodeDecodeError):
        return 400, {"error": "request body is not UTF-8", "kind": "encoding"}
    if isinstance(exc, RecursionError):
        return 400, {"error": "input nests too deep", "kind": "too_deep"}
    raise exc


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refusals become JSON answers; under ``/api/`` aiohttp's own HTTP errors do too."""
    try:
        return await handler(request)
    except web.HTTPRequestEntityTooLarge as exc:
        body = {"error": f"request body over the {MAX_INPUT} byte cap", "kind": "too_large"}
        return web.json_response(body, status=exc.status)
    except web.HTTPException as exc:
        if request.path.startswith("/api/") and exc.status >= 400:
            return web.json_response({"error": exc.reason, "kind": "http"}, status=exc.status)
        raise
    except REFUSED as exc:
        status, body = error_body(exc)
        return web.json_response(body, status=status)
    except Exception:
        # a bug: logged with its traceback, answered as JSON without internals
        log.exception("%s %s failed", request.method, request.path[:200])
        return web.json_response({"error": "internal error (logged on the server)", "kind": "internal"}, status=500)
