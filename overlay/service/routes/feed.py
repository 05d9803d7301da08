"""The logger feed and game loading (token): whole games, single actions, the feed socket,
files loaded or followed."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from aiohttp import WSCloseCode, WSMessage, WSMsgType, web
from pydantic import ValidationError

from engine.load import MAX_INPUT

from ..auth import protected
from ..limits import parse
from ..channel import Channel
from ..errors import BadRequest, Forbidden, InvalidAction, NotFound, StoreFailed
from ..feed import feed_game_bytes
from ..feedkeys import feed_route, still_valid
from ..files import check_allowed, kind_of, read_game_file_async
from ..keys import SETTINGS, SOCKETS, STORE
from ..protocol import ActionIn, FeedAction, FeedGame, FeedRefused, FollowRequest, LoadPath, dump, parse_feed_message
from ..refusals import REFUSED, error_body, invalid_action
from .common import ack_response, channel_of, clock_of, note_refused, read_action, read_json, via_of

__all__ = ["routes"]

log = logging.getLogger("overlay.service.routes.feed")

routes = web.RouteTableDef()


def _source(request: web.Request, fallback: str) -> str:
    name = request.query.get("source") or fallback
    return name[:200]


def _client_path(request: web.Request, raw: str) -> Path:
    """A path from a request, inside the allowed folders when the server has any.

    Raises:
        Forbidden: outside them.
    """
    return check_allowed(Path(raw), request.app[SETTINGS].allow_dirs)


@routes.put("/api/channels/{channel}/game")
@feed_route
async def put_game(request: web.Request) -> web.Response:
    """The logger's whole game (idempotent); strict: schema problems are refused."""
    ch = channel_of(request)
    data = await request.read()
    strict = request.query.get("strict", "1") not in ("0", "false", "no")
    # a body has no file name: errors name the channel ("channel t1: line 1, ..."), not a
    # made-up file ("t1.egn" read as if the channel were the file); ?source= names it
    try:
        ack = await ch.ingest.put_game_async(data, source=_source(request, f"channel {ch.id}"), strict=strict)
    except REFUSED as exc:
        note_refused(request, ch, exc, None)
        raise
    ch.feed_log.took(clock_of(request), via=via_of(request))
    return ack_response(ack)


@routes.post("/api/channels/{channel}/game")
@protected
async def upload_game(request: web.Request) -> web.Response:
    """Load a different game (raw body or multipart file field); lenient; starts at step 0."""
    ch = channel_of(request)
    source = _source(request, "upload")
    if request.content_type.startswith("multipart/"):
        data = b""
        try:
            reader = await request.multipart()
            async for part in reader:
                if getattr(part, "filename", None):
                    source = part.filename or source  # type: ignore[union-attr]
                    data = bytes(await part.read())  # type: ignore[union-attr]
                    break
        except (ValueError, AssertionError) as exc:  # aiohttp's parser on a broken body
            raise BadRequest(f"not a multipart body: {str(exc)[:120] or type(exc).__name__}") from None
        if not data:
            raise BadRequest("multipart upload without a file")
    else:
        data = await request.read()
    ack = ch.ingest.load_game(data, source=source)
    return ack_response(ack)


@routes.post("/api/channels/{channel}/load")
@protected
async def load_path(request: web.Request) -> web.Response:
    ch = channel_of(request)
    body = parse(LoadPath, await read_json(request))
    data = await read_game_file_async(_client_path(request, body.path), follow_links=False)
    return ack_response(ch.ingest.load_game(data, source=Path(body.path).name))


@routes.post("/api/channels/{channel}/actions")
@feed_route
async def post_action(request: web.Request) -> web.Response:
    ch = channel_of(request)
    action: ActionIn | None = None
    try:
        action = await read_action(request, ch)
        ack = ch.ingest.apply_action(action)
    except REFUSED as exc:
        note_refused(request, ch, exc, None if action is None else action.seq)
        raise
    ch.feed_log.took(clock_of(request), via=via_of(request))
    return ack_response(ack)


@routes.post("/api/channels/{channel}/follow")
@protected
async def follow_file(request: web.Request) -> web.Response:
    ch = channel_of(request)
    body = parse(FollowRequest, await read_json(request))
    path = _client_path(request, body.path)
    if not path.parent.is_dir():
        raise NotFound(f"{path.parent}: no such folder")
    if path.exists() and not path.is_file():  # a FIFO or device would never end a read
        raise BadRequest(f"{path}: is {kind_of(path.stat().st_mode)}; only regular files are followed")
    ch.follow.start(str(path))
    await ch.follow.first_read()  # the answer and the status reflect the file's first read
    return web.json_response({"follow": str(path)})


@routes.delete("/api/channels/{channel}/follow")
@protected
async def unfollow_file(request: web.Request) -> web.Response:
    ch = channel_of(request)
    ch.follow.stop(forget=True)
    return web.json_response({"follow": None})


def _refused(exc: BaseException, seq: int | None) -> str:
    status, body = error_body(exc)
    msg = FeedRefused(seq=seq, status=status, error=body["error"], kind=body.get("kind", "error"), expected=body.get("expected"))
    return json.dumps(dump(msg))


def _feed_message(ch: Channel, text: str) -> FeedAction | FeedGame:
    """A feed socket's text frame: an action or a whole game.

    Raises:
        InvalidAction: the protocol refuses it; the text names the channel and the action's ``seq``.
    """
    try:
        return parse_feed_message(text)
    except ValidationError as exc:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None
        bare = isinstance(data, dict) and "type" not in data  # an action without the envelope
        action = data if bare else data.get("action") if isinstance(data, dict) and data.get("type") == "action" else None
        if isinstance(action, dict):  # the action's own fields, as the actions route names them
            try:
                ActionIn.model_validate(action)
            except ValidationError as inner:
                raise invalid_action(inner, ch.id, action) from exc
        raise invalid_action(exc, ch.id, action) from exc


def _feed_frame(request: web.Request, ch: Channel, msg: WSMessage) -> str | None:
    """The answer to one feed frame: an ack or a typed refusal (None: not a data frame);
    both are noted in the channel's feed log."""
    seq: int | None = None
    try:
        if msg.type == WSMsgType.BINARY:
            ack = ch.ingest.put_game(msg.data, source=f"channel {ch.id}", strict=True)
        elif msg.type == WSMsgType.TEXT:
            m = _feed_message(ch, msg.data)
            if isinstance(m, FeedGame):
                ack = ch.ingest.put_game(feed_game_bytes(m), source=f"channel {ch.id}", strict=True)
            else:
                seq = m.action.seq
                ack = ch.ingest.apply_action(m.action)
        else:
            return None
        ch.feed_log.took(clock_of(request), via=via_of(request))
        return json.dumps(dump(ack))
    except REFUSED as exc:
        if seq is None and isinstance(exc, InvalidAction):
            seq = exc.seq
        note_refused(request, ch, exc, seq)
        return _refused(exc, seq)
    except Exception:  # a bug must not cost the logger its socket
        log.exception("channel %s: feed frame failed", ch.id)
        out = FeedRefused(seq=seq, status=500, error="internal error (logged on the server)", kind="internal")
        return json.dumps(dump(out))


@routes.get("/api/channels/{channel}/feed", name="feed_socket")
@feed_route
async def feed_socket(request: web.Request) -> web.WebSocketResponse:
    """The logger's socket.  Every frame gets an ack or a typed refusal; no frame can close
    the socket or touch the channel's last good state (a frame over the cap closes it with
    1009 MESSAGE_TOO_BIG, as WebSocket says, and the channel keeps its game)."""
    ch = channel_of(request)
    # base64 text of a game at the cap, plus room for the JSON around it
    ws = web.WebSocketResponse(compress=False, heartbeat=15.0, max_msg_size=MAX_INPUT * 4 // 3 + 4096)
    await ws.prepare(request)
    request.app[SOCKETS].add(ws)
    ch.ingest.feeds.add(ws)
    store = request.app[STORE]
    try:
        async for msg in ws:
            if not still_valid(request):  # a key revoked while its socket is open ends it
                await ws.send_str(_refused(Forbidden("this socket's feed key was revoked"), None))
                await ws.close(code=WSCloseCode.POLICY_VIOLATION, message=b"feed key revoked")
                break
            text = _feed_frame(request, ch, msg)
            if text is None:
                continue
            try:
                await store.sync()  # the ack leaves once the action is durable
            except StoreFailed as exc:
                text = _refused(exc, None)
            if ws.closed:
                break
            await ws.send_str(text)
    finally:
        ch.ingest.feeds.discard(ws)
    return ws
