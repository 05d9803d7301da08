"""What every area's handlers read from a request: the hub, the channel, the clock, the
output and page size in the query, a JSON body."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..channel import Channel
from ..errors import BadRequest
from ..hub import Hub
from ..keys import HUB
from ..protocol import OUTPUTS, FeedAck, OutputName, dump

__all__ = ["hub_of", "channel_of", "clock_of", "output_of", "page_query", "read_json", "ack_response"]

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


async def read_json(request: web.Request) -> Any:
    """The JSON body; an empty body is ``{}``.

    Raises:
        json.JSONDecodeError, UnicodeDecodeError: the body is not JSON text.
    """
    text = await request.text()
    if not text.strip():
        return {}
    return json.loads(text)


def ack_response(ack: FeedAck, status: int = 200) -> web.Response:
    return web.json_response(dump(ack), status=status)
