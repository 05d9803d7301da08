"""What every area's handlers read from a request: the hub, the channel, the clock, the
output and page size in the query, a JSON body."""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from engine.sniff import text_encoding
from renderer.settings import OUTPUTS, OutputName

from ..channel import Channel
from ..errors import BadRequest, InvalidAction, UnsupportedMedia
from ..feedkeys import FEED_KEY
from ..hub import Hub
from ..keys import HUB
from ..limits import parse
from ..protocol import ActionIn, FeedAck, dump
from ..refusals import error_body, invalid_action

__all__ = [
    "hub_of",
    "channel_of",
    "clock_of",
    "output_of",
    "page_query",
    "json_depth",
    "parse_json_text",
    "read_text",
    "read_json",
    "ack_response",
    "read_action",
    "via_of",
    "note_refused",
    "is_monitor",
    "MAX_DEPTH",
]

#: page sizes the player draws (URL or view): 1280x720 to 3840x2160
WIDTHS = (1280, 3840)
HEIGHTS = (720, 2160)


def hub_of(request: web.Request) -> Hub:
    return request.app[HUB]


def channel_of(request: web.Request) -> Channel:
    """The channel named in the path.

    Raises:
        NotFound: no such channel.
    """
    return hub_of(request).get(request.match_info["channel"])


def clock_of(request: web.Request) -> float:
    return request.app[HUB].clock()


def output_of(request: web.Request) -> OutputName:
    """``?output=`` (default ``program``).

    Raises:
        BadRequest: not one of the outputs.
    """
    out = request.query.get("output", "program")
    if out not in OUTPUTS:
        raise BadRequest(f"output {out!r} is not one of {', '.join(OUTPUTS)}")
    return out


def _dimension(request: web.Request, name: str, default: int, bounds: tuple[int, int]) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} {raw!r} is not a whole number of pixels") from None
    lo, hi = bounds
    if not lo <= value <= hi:
        raise BadRequest(f"{name} {value} is outside {lo}..{hi}")
    return value


def page_query(request: web.Request, ch: Channel) -> tuple[OutputName, int, int]:
    """A page's output and size from the query, sizes defaulting to the output's settings.

    Raises:
        BadRequest: an unknown output, or a width/height that is not a whole number in range.
    """
    output = output_of(request)
    out = ch.settings.output(output)
    width = _dimension(request, "width", out.width, WIDTHS)
    height = _dimension(request, "height", out.height, HEIGHTS)
    return output, width, height


#: how deep a JSON body may nest (no request of the API needs more; Python's parser would
#: raise RecursionError, a 500, near 1,000)
MAX_DEPTH = 64


#: a JSON string, written as "unrolled loop" (runs of plain characters, then one escape):
#: the alternation ``"(?:[^"\\]|\\.)*"`` took 3.8 s of the event loop on a body holding a
#: 7 MB string, this 0.08 s (issue 22 item 8, found by ``bench faults --only caps``)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """The deepest nesting of brackets in JSON ``text`` (brackets inside strings skipped;
    regular expressions, so an 8 MiB body costs milliseconds, not a Python loop)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = (1 if c in "[{" else -1 for c in brackets)
    return max(accumulate(steps), default=0)


def parse_json_text(text: str, *, what: str = "request body") -> Any:
    """JSON text to a value, refusing nesting deeper than :data:`MAX_DEPTH` before parsing.

    Raises:
        BadRequest: nested too deep.  json.JSONDecodeError: not JSON.
    """
    if json_depth(text) > MAX_DEPTH:
        raise BadRequest(f"{what} nests deeper than {MAX_DEPTH} levels", kind="too_deep")
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise BadRequest(f"{what} nests too deep", kind="too_deep") from None


async def read_text(request: web.Request) -> str:
    """The body as text in its declared charset; UTF-8 by default, a byte-order mark skipped,
    or UTF-16/32 by theirs (a file a curl sends as Notepad or PowerShell saved it), as the
    engine reads a game's text.

    Raises:
        BadRequest: an unknown charset (415), or bytes that are not text in it.
    """
    data = await request.read()
    charset = request.charset or "utf-8"
    if charset.lower() in ("utf-8", "utf8"):
        charset = text_encoding(data)
    try:
        return data.decode(charset)
    except LookupError:
        raise UnsupportedMedia(f"unknown charset {charset[:40]!r} in Content-Type") from None
    except UnicodeDecodeError:
        label = "utf-8" if charset == "utf-8-sig" else charset[:40]
        raise BadRequest(f"request body is not {label} text", kind="encoding") from None


async def read_json(request: web.Request) -> Any:
    """The JSON body; an empty body is ``{}``.

    Raises:
        json.JSONDecodeError: the body is not JSON text.
        BadRequest: not text in its charset, or nested deeper than :data:`MAX_DEPTH`.
    """
    text = await read_text(request)
    if not text.strip():
        return {}
    return parse_json_text(text)


def ack_response(ack: FeedAck, status: int = 200) -> web.Response:
    return web.json_response(dump(ack), status=status)


async def read_action(request: web.Request, ch: Channel) -> ActionIn:
    """The request's JSON body as a logger action.

    Raises:
        InvalidAction: the protocol refuses it; the text names the channel and the ``seq``.
    """
    data = await read_json(request)
    try:
        return parse(ActionIn, data)
    except ValidationError as exc:
        raise invalid_action(exc, ch.id, data) from exc


def is_monitor(request: web.Request) -> bool:
    """Whether a page (or its socket) is one of the studio's own frames (``?monitor=1``): not an
    OBS page, neither counted nor listed as one waiting on a missing channel."""
    return request.query.get("monitor") == "1"


def via_of(request: web.Request) -> str:
    """Who sent a feed message: a feed key's id, or ``"token"``."""
    return request.get(FEED_KEY) or "token"


def note_refused(request: web.Request, ch: Channel, exc: BaseException, seq: int | None) -> None:
    """Keep a refused feed message's text on the channel's feed log (the studio shows it),
    with its ``seq`` (an action of the wrong shape carries the one it had)."""
    status, body = error_body(exc)
    if seq is None and isinstance(exc, InvalidAction):
        seq = exc.seq
    ch.feed_log.refuse(clock_of(request), seq=seq, status=status, kind=str(body.get("kind", "error")), error=str(body.get("error", "")), via=via_of(request))
