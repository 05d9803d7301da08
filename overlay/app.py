"""The aiohttp application: overlay pages, their sockets, the control/feed/state API.

Read-only (no token): ``GET /overlay/{channel}``, ``/static/*``, ``/fonts/*``,
``WS /ws/overlay/{channel}``, ``GET /api/channels/{id}/state`` and its socket.
Everything else under ``/api`` needs the token (``Authorization: Bearer``, ``X-Token`` or
``?token=``).  Errors are JSON with a precise message: the engine's typed errors and bad
input map to 400 in one middleware, service errors carry their own status.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import secrets
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web
from pydantic import ValidationError

from engine.errors import EgnError

from .channels import Channel, Hub, Page, StateSub
from .config import MAX_BODY, ServerSettings
from .director import Playhead
from .errors import BadRequest, NotFound, OverlayError, TooLarge, Unauthorized
from .feed import MAX_INPUT
from .keys import HUB, SETTINGS, SOCKETS, STORE, TOKEN, TOKEN_CREATED
from .protocol import (
    OUTPUTS,
    ActionIn,
    ChannelCreate,
    ChannelSettings,
    ControlRequest,
    FeedAck,
    FeedGame,
    FeedRefused,
    FollowRequest,
    LoadPath,
    OutputName,
    PageDrawn,
    PageHello,
    PageResync,
    dump,
    parse_feed_message,
    parse_page_message,
)
from .store import Store

__all__ = ["create_app", "error_body", "ensure_token", "STATIC", "demo_game_bytes"]

log = logging.getLogger("overlay.app")

STATIC = Path(__file__).parent / "static"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# --------------------------------------------------------------------------- errors


def _pydantic_text(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = " -> ".join(str(x) for x in err.get("loc", ())) or "body"
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body for an error the API refuses with."""
    if isinstance(exc, OverlayError):
        return exc.status, exc.to_json()
    if isinstance(exc, EgnError):
        return 400 if exc.kind != "size" else 413, {
            "error": str(exc),
            "kind": exc.kind,
            "place": exc.problem().to_json(),
        }
    if isinstance(exc, ValidationError):
        return 400, {"error": _pydantic_text(exc), "kind": "validation"}
    if isinstance(exc, json.JSONDecodeError):
        return 400, {"error": f"request body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", "kind": "json"}
    if isinstance(exc, UnicodeDecodeError):
        return 400, {"error": "request body is not UTF-8", "kind": "encoding"}
    raise exc


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPRequestEntityTooLarge as exc:
        body = {"error": f"request body over the {MAX_BODY} byte cap", "kind": "too_large"}
        return web.json_response(body, status=exc.status)
    except web.HTTPException as exc:
        if request.path.startswith("/api/") and exc.status >= 400:
            return web.json_response({"error": exc.reason, "kind": "http"}, status=exc.status)
        raise
    except (OverlayError, EgnError, ValidationError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        status, body = error_body(exc)
        return web.json_response(body, status=status)


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
    target = getattr(handler, "protected", False)
    if target:
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


# --------------------------------------------------------------------------- helpers


def _hub(request: web.Request) -> Hub:
    return request.app[HUB]


def _channel(request: web.Request) -> Channel:
    return _hub(request).get(request.match_info["channel"])


def _clock(request: web.Request) -> float:
    return request.app[HUB].clock()


def _output(request: web.Request) -> OutputName:
    out = request.query.get("output", "program")
    if out not in OUTPUTS:
        raise BadRequest(f"output {out!r} is not one of {', '.join(OUTPUTS)}")
    return out


async def _json(request: web.Request) -> Any:
    text = await request.text()
    if not text.strip():
        return {}
    return json.loads(text)


def _ack(ack: FeedAck, status: int = 200) -> web.Response:
    return web.json_response(dump(ack), status=status)


async def _read_path(path: str) -> bytes:
    import asyncio

    p = Path(path).expanduser()

    def read() -> bytes:
        try:
            size = p.stat().st_size
            if size > MAX_INPUT:
                raise TooLarge(f"{p}: {size} bytes is over the {MAX_INPUT} byte cap")
            return p.read_bytes()
        except FileNotFoundError:
            raise NotFound(f"{p}: no such file") from None
        except IsADirectoryError:
            raise BadRequest(f"{p}: is a directory") from None
        except PermissionError:
            raise BadRequest(f"{p}: permission denied") from None

    return await asyncio.to_thread(read)


# --------------------------------------------------------------------------- pages


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


def _dimension(request: web.Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} {raw!r} is not a whole number of pixels") from None
    if not lo <= value <= hi:
        raise BadRequest(f"{name} {value} is outside {lo}..{hi}")
    return value


async def overlay_page(request: web.Request) -> web.Response:
    ch = _channel(request)
    output = _output(request)
    out = ch.settings.output(output)
    width = _dimension(request, "width", out.width, 1280, 3840)
    height = _dimension(request, "height", out.height, 720, 2160)
    html = _page_html(ch.id, output, width, height, trace=request.query.get("bench") == "1")
    return web.Response(
        text=html,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
    )


async def font_file(request: web.Request) -> web.FileResponse:
    from renderer.fonts import font_files

    key = request.match_info["key"]
    path = font_files().get(key)
    if path is None:
        raise NotFound(f"no font {key!r}")
    return web.FileResponse(path, headers={"Content-Type": "font/ttf", "Cache-Control": "max-age=86400"})


async def page_socket(request: web.Request) -> web.WebSocketResponse:
    ch = _channel(request)
    output = _output(request)
    out = ch.settings.output(output)
    width = _dimension(request, "width", out.width, 1280, 3840)
    height = _dimension(request, "height", out.height, 720, 2160)
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=64 * 1024)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    page = Page(
        ws=ws,
        output=output,
        remote=request.remote or "?",
        connected_at=_clock(request),
        width=width,
        height=height,
        trace=request.query.get("trace") == "1",
    )
    ch.pages.add(page)
    try:
        await ch.send_snapshot(page)
        ch.poke()
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            try:
                m = parse_page_message(msg.data)
            except ValidationError as exc:
                await ws.send_str(json.dumps({"type": "error", "error": _pydantic_text(exc)}))
                continue
            if isinstance(m, PageDrawn):
                page.note_drawn(m.seq, m.step, _clock(request))
            elif isinstance(m, PageHello):
                page.visible = m.visible
            elif isinstance(m, PageResync):
                page.visible = True
                await ch.send_snapshot(page)
    finally:
        ch.pages.discard(page)
    return ws


# --------------------------------------------------------------------------- state (read-only)


async def get_state(request: web.Request) -> web.Response:
    ch = _channel(request)
    text = ch.state_text(_output(request), _clock(request))
    return web.Response(text=text, content_type="application/json")


async def state_socket(request: web.Request) -> web.WebSocketResponse:
    ch = _channel(request)
    output = _output(request)
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=4096)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    sub = StateSub(ws=ws, output=output)
    ch.subs.add(sub)
    try:
        await ch.send_state(sub)
        ch.poke()
        async for _ in ws:
            pass  # nothing to read: the stream is one-way
    finally:
        ch.subs.discard(sub)
    return ws


# --------------------------------------------------------------------------- channels


@protected
async def list_channels(request: web.Request) -> web.Response:
    now = _clock(request)
    return web.json_response({"channels": [ch.info(now) for ch in _hub(request).channels.values()]})


@protected
async def create_channel(request: web.Request) -> web.Response:
    body = ChannelCreate.model_validate(await _json(request))
    settings = body.settings or ChannelSettings(title=body.title or body.id)
    ch = _hub(request).create(body.id, settings)
    return web.json_response(ch.info(_clock(request)), status=201)


@protected
async def get_channel(request: web.Request) -> web.Response:
    return web.json_response(_channel(request).info(_clock(request)))


@protected
async def delete_channel(request: web.Request) -> web.Response:
    await _hub(request).delete(request.match_info["channel"])
    return web.json_response({"deleted": request.match_info["channel"]})


# --------------------------------------------------------------------------- games and feed


def _source(request: web.Request, ch: Channel, fallback: str) -> str:
    name = request.query.get("source") or fallback
    return name[:200]


@protected
async def put_game(request: web.Request) -> web.Response:
    """The logger's whole game (idempotent); strict: schema problems are refused."""
    ch = _channel(request)
    data = await request.read()
    strict = request.query.get("strict", "1") not in ("0", "false", "no")
    ack = ch.put_game(data, source=_source(request, ch, f"{ch.id}.egn"), strict=strict)
    return _ack(ack)


@protected
async def upload_game(request: web.Request) -> web.Response:
    """Load a different game (raw body or multipart file field); lenient; starts at step 0."""
    ch = _channel(request)
    source = _source(request, ch, "upload")
    if request.content_type.startswith("multipart/"):
        reader = await request.multipart()
        data = b""
        async for part in reader:
            if getattr(part, "filename", None):
                source = part.filename or source  # type: ignore[union-attr]
                data = await part.read()  # type: ignore[union-attr]
                break
        if not data:
            raise BadRequest("multipart upload without a file")
    else:
        data = await request.read()
    ack = ch.load_game(data, source=source)
    return _ack(ack)


@protected
async def load_path(request: web.Request) -> web.Response:
    ch = _channel(request)
    body = LoadPath.model_validate(await _json(request))
    data = await _read_path(body.path)
    return _ack(ch.load_game(data, source=Path(body.path).name))


@protected
async def post_action(request: web.Request) -> web.Response:
    ch = _channel(request)
    action = ActionIn.model_validate(await _json(request))
    return _ack(ch.apply_action(action))


@protected
async def follow_file(request: web.Request) -> web.Response:
    ch = _channel(request)
    body = FollowRequest.model_validate(await _json(request))
    path = Path(body.path).expanduser()
    if not path.parent.is_dir():
        raise NotFound(f"{path.parent}: no such folder")
    ch.start_follow(str(path))
    return web.json_response({"follow": str(path)})


@protected
async def unfollow_file(request: web.Request) -> web.Response:
    ch = _channel(request)
    ch.stop_follow(forget=True)
    return web.json_response({"follow": None})


def _refused(exc: BaseException, seq: int | None) -> str:
    status, body = error_body(exc)
    msg = FeedRefused(seq=seq, status=status, error=body["error"], kind=body.get("kind", "error"), expected=body.get("expected"))
    return json.dumps(dump(msg))


@protected
async def feed_socket(request: web.Request) -> web.WebSocketResponse:
    """The logger's socket.  Every frame gets an ack or a typed refusal; no frame can close
    the socket or touch the channel's last good state (a frame over the cap closes it with
    1009 MESSAGE_TOO_BIG, as WebSocket says, and the channel keeps its game)."""
    ch = _channel(request)
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=MAX_INPUT * 4 // 3 + 4096)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    ch.feeds.add(ws)
    try:
        async for msg in ws:
            seq: int | None = None
            try:
                if msg.type == WSMsgType.BINARY:
                    ack = ch.put_game(msg.data, source=f"{ch.id}.egnb", strict=True)
                elif msg.type == WSMsgType.TEXT:
                    m = parse_feed_message(msg.data)
                    if isinstance(m, FeedGame):
                        ack = ch.put_game(_feed_game_bytes(m), source=f"{ch.id}.egn", strict=True)
                    else:
                        seq = m.action.seq
                        ack = ch.apply_action(m.action)
                else:
                    continue
                text = json.dumps(dump(ack))
            except (OverlayError, EgnError, ValidationError, json.JSONDecodeError, UnicodeDecodeError) as exc:
                text = _refused(exc, seq)
            except Exception:  # a bug must not cost the logger its socket
                log.exception("channel %s: feed frame failed", ch.id)
                msg_out = FeedRefused(seq=seq, status=500, error="internal error (logged on the server)", kind="internal")
                text = json.dumps(dump(msg_out))
            if ws.closed:
                break
            await ws.send_str(text)
    finally:
        ch.feeds.discard(ws)
    return ws


def _feed_game_bytes(m: FeedGame) -> bytes:
    if m.document is not None:
        return json.dumps(m.document, ensure_ascii=False).encode()
    if m.data is None:
        raise BadRequest("game message needs 'document' or 'data'")
    if m.base64:
        try:
            return base64.b64decode(m.data, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("game 'data' is not valid base64") from None
    return m.data.encode()


# --------------------------------------------------------------------------- control, settings, status


@protected
async def control(request: web.Request) -> web.Response:
    ch = _channel(request)
    body = await _json(request)
    if not isinstance(body, dict):
        raise BadRequest("control body must be a JSON object")
    op = request.match_info.get("op")
    if op:
        body = {**dict(request.query), **body, "op": op}
        body.pop("token", None)
    req = ControlRequest.model_validate(body)
    return web.json_response(ch.control(req))


@protected
async def get_settings(request: web.Request) -> web.Response:
    return web.json_response(dump(_channel(request).settings))


@protected
async def put_settings(request: web.Request) -> web.Response:
    ch = _channel(request)
    doc = ChannelSettings.model_validate(await _json(request))
    return web.json_response(dump(ch.put_settings(doc)))


@protected
async def channel_status(request: web.Request) -> web.Response:
    return web.json_response(_channel(request).status(_clock(request)))


@protected
async def status(request: web.Request) -> web.Response:
    now = _clock(request)
    hub = _hub(request)
    return web.json_response({"channels": [ch.status(now) for ch in hub.channels.values()]})


async def index(request: web.Request) -> web.Response:
    ids = ", ".join(f"/overlay/{c}" for c in _hub(request).channels)
    return web.Response(text=f"euchre-overlay: overlay pages {ids or '(none)'}\n")


# --------------------------------------------------------------------------- lifetime


def demo_game_bytes() -> tuple[bytes, str]:
    """The bundled demo game (``assets/demo/demo.egn``); generated if the asset is absent."""
    import assets

    path = Path(assets.__file__).parent / "demo" / "demo.egn"
    if path.is_file():
        return path.read_bytes(), path.name
    from engine.generate import demo_game

    return json.dumps(demo_game()).encode(), "demo.egn"


def _install_demo(hub: Hub) -> None:
    data, source = demo_game_bytes()
    ch = hub.create("demo", ChannelSettings(title="Demo"), playhead=Playhead(loop=True))
    ch.load_game(data, source=source)
    ch.control(ControlRequest(op="loop", value=True))


async def _hub_ctx(app: web.Application) -> AsyncIterator[None]:
    hub = app[HUB]
    store = app[STORE]
    hub.restore()
    if app[SETTINGS].demo and store.meta("initialized") is None:
        try:
            _install_demo(hub)
        except (EgnError, OSError, ImportError) as exc:
            log.error("demo channel not installed: %s", exc)
    store.set_meta("initialized", "1")
    hub.start()
    yield
    await hub.stop()
    store.close()


async def _close_sockets(app: web.Application) -> None:
    sockets: weakref.WeakSet[web.WebSocketResponse] = app[SOCKETS]
    for ws in list(sockets):
        await ws.close(code=WSCloseCode.GOING_AWAY, message=b"server shutdown")


def create_app(settings: ServerSettings | None = None) -> web.Application:
    """The whole service.  The store opens now (so the token exists before serving)."""
    settings = settings or ServerSettings()
    app = web.Application(client_max_size=MAX_BODY, middlewares=[error_middleware, auth_middleware])
    store = Store(settings.db_path)
    token, created = ensure_token(store, settings.token)
    app[SETTINGS] = settings
    app[STORE] = store
    app[HUB] = Hub(store, clock=settings.clock, max_delay=settings.max_delay)
    app[TOKEN] = token
    app[TOKEN_CREATED] = created
    app[SOCKETS] = weakref.WeakSet()
    app.cleanup_ctx.append(_hub_ctx)
    app.on_shutdown.append(_close_sockets)

    r = app.router
    r.add_get("/", index)
    r.add_get("/overlay/{channel}", overlay_page)
    r.add_get("/ws/overlay/{channel}", page_socket)
    r.add_get("/fonts/{key}.ttf", font_file)
    r.add_static("/static", STATIC)
    r.add_get("/api/status", status)
    r.add_get("/api/channels", list_channels)
    r.add_post("/api/channels", create_channel)
    r.add_get("/api/channels/{channel}", get_channel)
    r.add_delete("/api/channels/{channel}", delete_channel)
    r.add_put("/api/channels/{channel}/game", put_game)
    r.add_post("/api/channels/{channel}/game", upload_game)
    r.add_post("/api/channels/{channel}/load", load_path)
    r.add_post("/api/channels/{channel}/actions", post_action)
    r.add_get("/api/channels/{channel}/feed", feed_socket)
    r.add_post("/api/channels/{channel}/follow", follow_file)
    r.add_delete("/api/channels/{channel}/follow", unfollow_file)
    r.add_post("/api/channels/{channel}/control", control)
    r.add_post("/api/channels/{channel}/control/{op}", control)
    r.add_get("/api/channels/{channel}/settings", get_settings)
    r.add_put("/api/channels/{channel}/settings", put_settings)
    r.add_get("/api/channels/{channel}/status", channel_status)
    r.add_get("/api/channels/{channel}/state", get_state)
    r.add_get("/api/channels/{channel}/state/ws", state_socket)
    return app
