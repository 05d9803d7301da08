"""The overlay pages (read-only): the page itself, its fonts and static files, its socket."""

from __future__ import annotations

import json
from pathlib import Path

from aiohttp import WSMsgType, web
from pydantic import ValidationError

from ..auth import check_origin, has_token
from ..clients import Page
from ..errors import NotFound
from ..keys import SETTINGS, SOCKETS
from ..protocol import OutputName, PageDrawn, PageHello, PageResync, parse_page_message
from ..refusals import pydantic_text
from .common import channel_of, clock_of, hub_of, page_query

__all__ = ["routes", "STATIC"]

STATIC = Path(__file__).resolve().parents[1] / "static"

routes = web.RouteTableDef()
routes.static("/static", STATIC)


def _page_html(channel: str, output: OutputName, width: int, height: int, *, trace: bool = False) -> str:
    from renderer.fonts import font_files

    config = {
        "channel": channel,
        "output": output,
        "width": width,
        "height": height,
        "socket": f"/ws/overlay/{channel}?output={output}&width={width}&height={height}" + ("&trace=1" if trace else ""),
        "fonts": {key: f"/fonts/{key}.ttf" for key in font_files()},
    }
    # JSON inside <script>: escape "<" so no text can close the element
    blob = json.dumps(config).replace("<", "\\u003c")
    html = (STATIC / "overlay.html").read_text(encoding="utf-8")
    return html.replace("__CONFIG__", blob)


@routes.get("/")
async def index(request: web.Request) -> web.Response:
    """A greeting; the channel list only with the token (ids are not for everyone)."""
    if not has_token(request):
        return web.Response(text="euchre-overlay: pages at /overlay/CHANNEL (the list needs the token)\n")
    ids = ", ".join(f"/overlay/{c}" for c in hub_of(request).channels)
    return web.Response(text=f"euchre-overlay: overlay pages {ids or '(none)'}\n")


@routes.get("/overlay/{channel}")
async def overlay_page(request: web.Request) -> web.Response:
    ch = channel_of(request)
    output, width, height = page_query(request, ch)
    html = _page_html(ch.id, output, width, height, trace=request.query.get("bench") == "1")
    return web.Response(
        text=html,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
    )


@routes.get("/fonts/{key}.ttf")
async def font_file(request: web.Request) -> web.FileResponse:
    from renderer.fonts import font_files

    key = request.match_info["key"]
    path = font_files().get(key)
    if path is None:
        raise NotFound(f"no font {key!r}")
    return web.FileResponse(path, headers={"Content-Type": "font/ttf", "Cache-Control": "max-age=86400"})


@routes.get("/ws/overlay/{channel}")
async def page_socket(request: web.Request) -> web.WebSocketResponse:
    ch = channel_of(request)
    output, width, height = page_query(request, ch)
    check_origin(request, request.app[SETTINGS].allow_origins)
    ch.check_page_size(output, (width, height))
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=64 * 1024)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    page = Page(
        ws=ws,
        output=output,
        remote=request.remote or "?",
        connected_at=clock_of(request),
        width=width,
        height=height,
        trace=request.query.get("trace") == "1",
        transport=request.transport,
    )
    ch.pages.add(page)
    try:
        ch.send_snapshot(page)
        ch.poke()
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            try:
                m = parse_page_message(msg.data)
            except ValidationError as exc:
                page.outbox.offer(json.dumps({"type": "error", "error": pydantic_text(exc)}))
                continue
            if isinstance(m, PageDrawn):
                page.note_drawn(m.seq, m.step, clock_of(request))
            elif isinstance(m, PageHello):
                page.visible = m.visible
            elif isinstance(m, PageResync):
                page.visible = True
                ch.send_snapshot(page)
    finally:
        ch.pages.discard(page)
        await page.outbox.stop()
    return ws
