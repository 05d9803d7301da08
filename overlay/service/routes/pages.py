"""The overlay pages (read-only): the page itself, its fonts and static files, its socket.

A page URL always answers the (transparent, empty) player, even for a channel that does not
exist yet or a query it cannot use: OBS draws whatever a browser source answers over the
programme, so an error body would go on air.  What is wrong goes to the page's console (in
its config, and from its socket), and the server's status lists pages waiting for a channel
(``GET /api/status``: ``waitingPages``); the page connects as soon as the channel exists.
"""

from __future__ import annotations

import html
import json
from importlib.resources import files
from pathlib import Path

from aiohttp import WSCloseCode, web

from renderer.settings import OutputName

from ..auth import check_origin, has_token
from ..errors import BadRequest, NotFound
from ..keys import SETTINGS
from .common import channel_of, hub_of, is_monitor, page_query
from .pagesocket import open_page, read_page

#: page size when neither the URL nor a channel says (the default output size)
DEFAULT_SIZE = (1920, 1080)

__all__ = ["routes", "STATIC"]

#: the page player's files (``overlay/static``), from the package wherever it is installed
STATIC = Path(str(files("overlay") / "static"))

routes = web.RouteTableDef()
routes.static("/static", STATIC)


def _page_html(channel: str, output: OutputName, width: int, height: int, *, trace: bool = False, problem: str | None = None, monitor: bool = False) -> str:
    from renderer.fonts import font_files

    config = {
        "channel": channel,
        "output": output,
        "width": width,
        "height": height,
        "problem": problem,
        "socket": f"/ws/overlay/{channel}?output={output}&width={width}&height={height}" + ("&trace=1" if trace else "") + ("&monitor=1" if monitor else ""),
        "fonts": {key: f"/fonts/{key}.ttf" for key in font_files()},
    }
    # JSON inside <script>: escape "<" so no text can close the element
    blob = json.dumps(config).replace("<", "\\u003c")
    html = (STATIC / "overlay.html").read_text(encoding="utf-8")
    return html.replace("__CONFIG__", blob)


#: what a browser opened at the server's address gets: where the studio is (a producer who
#: typed the address without ``/studio`` read a line meant for scripts)
HOME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>euchre-overlay</title><link rel="stylesheet" href="/studio/static/studio.css"></head>
<body><main class="home">
<h1>euchre-overlay is running</h1>
<p><a href="/studio" id="open-studio">Open the studio</a>: sign in with the API token that <code>serve</code> printed,
then make a channel, load a game or start a live one, and lay out the graphics.</p>
<p>OBS: a Browser Source of 1920 &times; 1080 at <code>http://__HOST__/overlay/CHANNEL</code> (the studio's Outputs tab
gives each channel's addresses).</p>
<p>At the table: <code>http://__HOST__/logger/CHANNEL</code>, signed in with the channel's feed key (the studio's Logger tab).</p>
</main></body></html>
"""


@routes.get("/")
async def index(request: web.Request) -> web.Response:
    """A greeting; the channel list only with the token (ids are not for everyone).  A browser
    (``Accept: text/html``) gets a page that links to the studio."""
    if "text/html" in request.headers.get("Accept", "") and not has_token(request):
        text = HOME.replace("__HOST__", html.escape(request.host))
        return web.Response(text=text, content_type="text/html", headers={"Content-Security-Policy": "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"})
    if not has_token(request):
        return web.Response(text="euchre-overlay: pages at /overlay/CHANNEL (the list needs the token)\n")
    ids = ", ".join(f"/overlay/{c}" for c in hub_of(request).channels)
    return web.Response(text=f"euchre-overlay: overlay pages {ids or '(none)'}\n")


def _lenient_query(request: web.Request) -> tuple[OutputName, int, int, str | None]:
    """Output and size of a page for a channel that does not exist (yet): the query's values
    where they are usable, else the defaults, and what was wrong with them."""
    output: OutputName = "program"
    width, height = DEFAULT_SIZE
    problem = None
    raw = request.query.get("output", "program")
    if raw in ("program", "preview", "clean"):
        output = raw  # type: ignore[assignment]
    else:
        problem = f"output {raw!r} is not one of program, preview, clean (showing program)"
    for name in ("width", "height"):
        text = request.query.get(name)
        if text is not None and text.isdigit() and (1280 if name == "width" else 720) <= int(text) <= (3840 if name == "width" else 2160):
            width, height = (int(text), height) if name == "width" else (width, int(text))
        elif text is not None:
            problem = f"{name} {text!r} is not a size in range (using {width}x{height})"
    return output, width, height, problem


@routes.get("/overlay/{channel}")
async def overlay_page(request: web.Request) -> web.Response:
    return _page(request, request.match_info["channel"])


#: the first path segment of a page URL as people type it: any case, "overlay" or "overlays"
_OVERLAY = "{prefix:[Oo][Vv][Ee][Rr][Ll][Aa][Yy][Ss]?}"


@routes.get(f"/{_OVERLAY}/{{channel}}/{{rest:.*}}")
@routes.get(f"/{_OVERLAY}/{{channel}}")
async def typed_page(request: web.Request) -> web.Response:
    """A page URL as a person types it (``/overlay/live1/``, ``/Overlay/live1``,
    ``/overlays/live1``, ``/overlay/live1/program``): the same transparent player as
    ``/overlay/{channel}``, never a text 404 on air; what was off goes to the page's console."""
    rest = request.match_info.get("rest", "")
    typed = f"/{request.match_info['prefix']}/"
    notes = [f"{typed} is read as /overlay/"] if typed != "/overlay/" else []
    if rest:
        notes.append(f"the path after the channel ({rest[:60]!r}) is ignored")
    return _page(request, request.match_info["channel"], note="; ".join(notes) or None)


@routes.get(f"/{_OVERLAY}")
@routes.get(f"/{_OVERLAY}/")
async def page_without_channel(request: web.Request) -> web.Response:
    """``/overlay`` without a channel: the empty transparent player, saying what is missing."""
    output, width, height, _ = _lenient_query(request)
    problem = "no channel in the URL: open /overlay/CHANNEL (the page stays empty)"
    return _html_response(_page_html("", output, width, height, problem=problem))


def _html_response(html: str) -> web.Response:
    return web.Response(text=html, content_type="text/html", headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


def _page(request: web.Request, channel: str, *, note: str | None = None) -> web.Response:
    """The player page of ``channel`` (which may not exist yet); ``note``: how the URL was read."""
    problem: str | None = None
    try:
        ch = channel_of(request)
        output, width, height = page_query(request, ch)
    except NotFound as exc:
        hub_of(request).page_waiting(channel, str(exc), monitor=is_monitor(request))
        output, width, height, bad_query = _lenient_query(request)
        problem = f"{exc} (yet): the page stays empty and connects when it is created" + (f"; {bad_query}" if bad_query else "")
    except BadRequest as exc:
        output, width, height, _ = _lenient_query(request)
        problem = str(exc)
    if note:
        problem = f"{note}; {problem}" if problem else note
    monitor = is_monitor(request)
    html = _page_html(channel, output, width, height, trace=request.query.get("bench") == "1", problem=problem, monitor=monitor)
    return _html_response(html)


@routes.get("/fonts/{key}.ttf")
async def font_file(request: web.Request) -> web.FileResponse:
    from renderer.fonts import font_files

    key = request.match_info["key"]
    path = font_files().get(key)
    if path is None:
        raise NotFound(f"no font {key!r}")
    return web.FileResponse(path, headers={"Content-Type": "font/ttf", "Cache-Control": "max-age=86400"})


@routes.get("/ws/overlay/{channel}", name="page_socket")
async def page_socket(request: web.Request) -> web.WebSocketResponse:
    try:
        ch = channel_of(request)
    except NotFound as exc:
        hub_of(request).page_waiting(request.match_info["channel"], str(exc), monitor=is_monitor(request))
        raise  # refused: the page retries every second and says so on its console
    output, width, height = page_query(request, ch)
    check_origin(request, request.app[SETTINGS].allow_origins)
    asked = (width, height)
    trusted = has_token(request)
    # the preview output shows live hole cards: a page gets it only with the token (a
    # header, or the hello message's token that the page reads from its URL's fragment);
    # such a page's size is settled when the token admits it
    locked = output == "preview" and not trusted
    size = asked if locked else ch.fanout.page_size(asked, trusted=trusted)
    page = await open_page(request, output, *size, trace=request.query.get("trace") == "1", monitor=is_monitor(request))
    page.trusted = trusted

    async def admit() -> None:
        if locked:  # admitted by the token of its hello
            page.trusted = True
            try:
                page.width, page.height = ch.fanout.page_size(asked, trusted=True)
            except BadRequest as exc:
                page.outbox.offer(json.dumps({"type": "error", "error": str(exc)}))
                await page.ws.close(code=WSCloseCode.POLICY_VIOLATION, message=b"too many page sizes")
                return
        page.asked = None if page.size == asked else asked
        ch.fanout.pages.add(page)
        ch.fanout.send_snapshot(page)
        ch.poke()

    def resync() -> None:
        if page in ch.fanout.pages:
            ch.fanout.send_snapshot(page)

    if not locked:
        await admit()
    try:
        await read_page(request, page, locked=locked, admit=admit, resync=resync)
    finally:
        ch.fanout.pages.discard(page)
        await page.outbox.stop()
    return page.ws
