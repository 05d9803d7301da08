"""The logger at the table: its page, the engine's legal choices, actions under one holder,
edits of the deal, and who holds the channel's logger.

``GET /logger/{channel}`` is a touch page (``overlay/static/logger/``) that signs in with the
channel's feed key or the API token and records a live game by tapping only what the engine
offers (:func:`engine.choices.choices_of`).  Its requests carry ``X-Logger`` (the page's id)
and ``X-Logger-Name`` (what others see): one logger holds a channel at a time, the first to
ask or the one that takes over explicitly; a holder that has not been heard from for
:data:`LEASE` seconds lets the next one in.  The hold is the channel owner's memory (a
restart, or a channel moving to another process under ``serve --redis``, frees it: the next
page to ask holds it).  Other senders (the feed socket, ``POST …/actions``, a followed file)
are not held off: the hold keeps two logger pages from writing one game, nothing more.

The page's actions go through ``POST …/logger/actions``: the hold is checked, then the
action is taken exactly as ``POST …/actions`` takes it (same ``seq`` rules: a resend is a
duplicate, a different action under an accepted ``seq`` a 409), and the answer carries the
new view, so a tap costs one request.  No rule lives here: the choices, the deal's actions
and the edits are the engine's (:mod:`engine.choices`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from engine.choices import choices_at, choices_of, deal_actions, edited, pad_of
from engine.live import LiveGame
from engine.state import GameState
from renderer.gametitle import won_after

from ..channel import Channel
from ..errors import BadRequest, Conflict, Unprocessable
from ..feed import Loaded, document_bytes, live_of, next_game_bytes, with_live_game
from ..feedkeys import feed_route
from ..limits import parse
from ..protocol import ActionIn, dump
from ..refusals import REFUSED
from .common import channel_of, clock_of, note_refused, read_action, read_json, via_of

__all__ = ["routes", "LEASE", "Holder", "holder_of"]

routes = web.RouteTableDef()

#: the logger page's files
PAGE = Path(str(files("overlay") / "static" / "logger" / "index.html"))
#: seconds a holder keeps the channel without being heard from (the page asks every few seconds)
LEASE = 30.0
#: the page's headers: its own scripts only, frames (the program thumbnail) from this server
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
        "connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


@dataclass
class Holder:
    """Who holds a channel's logger: the page's id and name, how it signed in (a feed key's
    id or ``"token"``), since when and when it was last heard from (hub clock)."""

    id: str
    name: str
    via: str
    since: float
    seen: float

    def to_json(self, now: float) -> dict[str, Any]:
        return {"name": self.name, "via": self.via, "since": round(now - self.since, 1), "lastSeen": round(now - self.seen, 1)}


#: each channel's holder; the channel's object is the key, so a deleted channel takes it along
_HOLDERS: weakref.WeakKeyDictionary[Channel, Holder] = weakref.WeakKeyDictionary()
#: each channel's live game as the engine holds it, by the channel's revision (read only)
_GAMES: weakref.WeakKeyDictionary[Channel, tuple[int, LiveGame]] = weakref.WeakKeyDictionary()


def holder_of(ch: Channel, now: float) -> Holder | None:
    """The channel's holder, unless it has not been heard from for :data:`LEASE` seconds."""
    h = _HOLDERS.get(ch)
    return h if h is not None and now - h.seen < LEASE else None


def _who(request: web.Request) -> tuple[str, str]:
    """The page's id and name (``X-Logger``, ``X-Logger-Name``).

    Raises:
        BadRequest: no ``X-Logger`` id, or one over 64 characters.
    """
    lid = request.headers.get("X-Logger", "").strip()
    if not lid or len(lid) > 64:
        raise BadRequest("a logger request names its page: X-Logger: <id> (1 to 64 characters)")
    # the page sends its name percent-encoded (a header is Latin-1 only)
    name = unquote(request.headers.get("X-Logger-Name", "")).strip()[:60] or f"logger {lid[:6]}"
    return lid, name


def _hold(request: web.Request, ch: Channel, *, take: bool = False, force: bool = False) -> tuple[Holder | None, bool]:
    """The channel's holder after this request, and whether it is the page that asks.

    A page that holds it is seen again; with ``take`` (every write), a page takes a channel
    nobody holds, or (with ``force``) one that someone else holds.
    """
    lid, name = _who(request)
    now = clock_of(request)
    h = holder_of(ch, now)
    if h is not None and h.id == lid:
        h.seen, h.name = now, name
        return h, True
    if take and (h is None or force):
        h = _HOLDERS[ch] = Holder(lid, name, via_of(request), now, now)
        return h, True
    return h, False


def _held(request: web.Request, ch: Channel) -> None:
    """Raises:
    Conflict: another page holds the channel's logger (``holder`` says who)."""
    h, mine = _hold(request, ch, take=True)
    if not mine and h is not None:
        now = clock_of(request)
        raise Conflict(
            f"channel {ch.id!r}: the logger is held by {h.name!r} (last heard {h.to_json(now)['lastSeen']} s ago); take over to log here",
            kind="logger_held",
            holder=h.to_json(now),
        )


def _live(ch: Channel) -> LiveGame:
    """The game the logger writes, as the engine's live game: the channel's game, or a
    match's last game (kept per revision; never changed here).

    Raises:
        Unprocessable: no game yet.
        BadRequest: a match whose last game the engine could not read.
    """
    g = ch.game
    if g is None:
        raise Unprocessable(f"channel {ch.id!r} has no game: PUT a game with its players first (the studio's Games tab, or PUT …/game)")
    kept = _GAMES.get(ch)
    if kept is not None and kept[0] == ch.revision:
        return kept[1]
    live = live_of(g)
    _GAMES[ch] = (ch.revision, live)
    return live


def _hands(raw: str | None) -> list[list[str]] | None:
    """``?hands=`` as the page writes it: seats split by ``|``, cards by ``,``."""
    if not raw:
        return None
    if len(raw) > 400:
        raise BadRequest("hands: at most 400 characters")
    return [[c for c in seat.split(",") if c] for seat in raw.split("|")]


def _int(request: web.Request, name: str) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"{name} {raw[:20]!r} is not a whole number") from None


def _view(request: web.Request, ch: Channel, *, at: int | None = None, full: bool = True) -> dict[str, Any]:
    """What the page shows: the table as the engine sees it, the choices, the server's
    ``seq``, who holds the logger, where the program output is, the next dealers; ``full``
    adds the deal's actions (the edit list) and the unchecked pad the page offers while
    offline (the same for a whole game but the dealer, which the next dealers give): an
    action's answer leaves them out, to answer a tap sooner."""
    now = clock_of(request)
    h, mine = _hold(request, ch)
    base: dict[str, Any] = {
        "channel": ch.id,
        "title": ch.settings.title,
        "seq": ch.seq,
        "expected": ch.seq + 1,
        "revision": ch.revision,
        "holder": None if h is None else h.to_json(now),
        "you": mine,
        "programAt": ch.program_at(now),
    }
    live = _live(ch)
    last = live.last
    if at is not None:
        choices = choices_at(live, at)
    else:
        choices = choices_of(live, dealer=_int(request, "dealer"), hands=_hands(request.query.get("hands")))
    tl = live.timeline
    every, dealers = pad_of(live)
    g = ch.game
    return {
        **base,
        # a match being logged: which game the logger writes (1-based), of how many so far
        "game": None if g is None or not g.match else {"number": len(g.parts), "label": g.parts[-1].label},
        "matchScore": _match_score(g, last),
        "players": list(tl.players),
        "ruleset": live.metadata.rules.model_dump(mode="json"),
        "deals": len(live),
        "state": None if last is None else last.to_json(),
        "choices": choices.to_json(),
        **({"dealActions": [a.to_json() for a in deal_actions(live)], "pad": [c.to_json() for c in every]} if full else {}),
        "nextDealers": list(dealers),
        "at": at,
    }


def _match_score(game: Loaded | None, last: GameState | None) -> list[int] | None:
    """The games each team (seats 0 and 2 first) has won at this table, the game being
    logged counted once it is over: what decides whether a next game is played.  None when
    the match's partnerships changed (no team score), or the table is not two pairs."""
    if game is None or len(game.parts[-1].timeline.players) != 4:
        return None
    which = game.parts[-1].match_game
    won = (0, 0) if which is None else which.won  # a plain game: the first at the table
    if last is not None and last.game_over and last.winner is not None:
        won = won_after(won, last.winner)
    return None if won is None else list(won)


# ------------------------------------------------------------------ the page


@routes.get("/logger/{channel}")
async def logger_page(request: web.Request) -> web.Response:
    """The logger page (it signs in itself; the channel comes from its URL)."""
    return web.Response(text=PAGE.read_text(encoding="utf-8"), content_type="text/html", headers=HEADERS)


@routes.get("/logger/{name}/")
async def logger_page_slash(request: web.Request) -> web.Response:
    """``/logger/t1/`` (a link typed with a slash): the logger page of ``t1``, its key fragment kept
    by the browser across the redirect."""
    raise web.HTTPMovedPermanently(f"/logger/{quote(request.match_info['name'], safe='')}" + (f"?{request.query_string}" if request.query_string else ""))


# ------------------------------------------------------------------ the API


@routes.get("/api/channels/{channel}/choices")
@feed_route
async def get_choices(request: web.Request) -> web.Response:
    """The table and the legal choices at the game's end (``?dealer=`` for a deal that starts
    now, ``?hands=`` the hands entered for it), or in place of the last deal's action
    ``?at=`` (an edit).  Names the holder; a page that holds the logger is seen again."""
    ch = channel_of(request)
    return web.json_response(_view(request, ch, at=_int(request, "at")))


@routes.post("/api/channels/{channel}/logger/actions")
@feed_route
async def post_logger_action(request: web.Request) -> web.Response:
    """One action from the page that holds the logger, taken as ``POST …/actions`` takes
    it; the answer is ``{"ack": …, "view": …}``.

    Raises:
        Conflict: another page holds the logger (``logger_held``), or the ``seq`` rules.
    """
    ch = channel_of(request)
    action: ActionIn | None = None
    try:
        _held(request, ch)
        action = await read_action(request, ch)
        ack = ch.ingest.apply_action(action)
    except REFUSED as exc:
        note_refused(request, ch, exc, None if action is None else action.seq)
        raise
    ch.feed_log.took(clock_of(request), via=via_of(request))
    return web.json_response({"ack": dump(ack), "view": _view(request, ch, full=False)})


class EditIn(BaseModel):
    """An edit of the last deal: the action at ``at`` (0: the ``new_deal``) becomes
    ``action``; ``seq`` is the server's ``seq`` the page saw (a game changed since is a 409)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seq: int = Field(ge=0)
    at: int = Field(ge=0)
    action: dict[str, Any]


@routes.post("/api/channels/{channel}/logger/edit")
@feed_route
async def post_edit(request: web.Request) -> web.Response:
    """Replace one action of the last deal; the engine pushes every action after it again
    and refuses the edit, naming the first one that no longer fits.  The channel takes the
    new game as a whole (a correction: outputs jump, no animation); ``seq`` does not move.

    Raises:
        Conflict: another page holds the logger, or the game changed since ``seq``.
        EgnError: the engine refused the edit (its place and text).
    """

    def edit(ch: Channel, body: EditIn, g: Loaded) -> bytes:
        live, _ = edited(_live(ch), body.at, body.action)
        return document_bytes(with_live_game(g, live).document) if g.match else live.to_egn_bytes()

    return await _rewrite(request, EditIn, edit, stale="the edit was made at", kind="stale_edit")


class NextGameIn(BaseModel):
    """The next game at the table; ``seq`` is the server's ``seq`` the page saw (a game
    changed since is a 409)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seq: int = Field(ge=0)


@routes.post("/api/channels/{channel}/logger/next-game")
@feed_route
async def post_next_game(request: web.Request) -> web.Response:
    """Start the next game at the table once the game is over: the same players, rules and
    title, no deals yet, after the games already played (a plain game becomes game 1 of a
    match).  The outputs go on to it as the logger deals; ``seq`` goes on counting.

    Raises:
        Conflict: another page holds the logger, or the game changed since ``seq``.
        Unprocessable: no game, or the game is not over.
    """

    def next_game(ch: Channel, body: NextGameIn, g: Loaded) -> bytes:
        return next_game_bytes(g, date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))

    return await _rewrite(request, NextGameIn, next_game, stale="the page saw", kind="stale", status=201, full=True)


_Body = TypeVar("_Body", EditIn, NextGameIn)


async def _rewrite(
    request: web.Request,
    model: type[_Body],
    make: Callable[[Channel, _Body, Loaded], bytes],
    *,
    stale: str,
    kind: str,
    status: int = 200,
    full: bool = False,
) -> web.Response:
    """A logger request that writes the channel's game whole (an edit, the next game): the
    page holds the logger and saw the server's ``seq``; ``make`` gives the game's new bytes,
    which the channel takes as a PUT.  The answer is ``{"ack", "view"}`` (``full``: the view
    with the deal's actions and the pad).

    Raises:
        Conflict: another page holds the logger, or the game changed since the page's ``seq``.
        EgnError, Unprocessable: ``make``'s refusal (the channel keeps its game).
    """
    ch = channel_of(request)
    try:
        _held(request, ch)
        body = parse(model, await read_json(request))
        if body.seq != ch.seq:
            raise Conflict(f"channel {ch.id!r}: the game has moved on (seq {ch.seq}, {stale} {body.seq}): look again", kind=kind, expected=ch.seq + 1)
        _live(ch)  # a channel without a game, or a match whose last game cannot be read, is refused here
        g = ch.game
        assert g is not None
        ack = ch.ingest.put_game(make(ch, body, g), source=g.source, strict=True)
    except REFUSED as exc:
        note_refused(request, ch, exc, None)
        raise
    ch.feed_log.took(clock_of(request), via=via_of(request))
    return web.json_response({"ack": dump(ack), "view": _view(request, ch, full=full)}, status=status)


@routes.get("/api/channels/{channel}/logger/game")
@feed_route
async def get_game(request: web.Request) -> web.Response:
    """The game the logger has written, as stored (EGN JSON, or the bytes last PUT): what
    the page's menu downloads.

    Raises:
        Unprocessable: no game yet.
    """
    ch = channel_of(request)
    g = ch.game
    if g is None:
        raise Unprocessable(f"channel {ch.id!r} has no game yet")
    kind = "application/json" if g.data.lstrip()[:1] in (b"{", b"[") else "application/octet-stream"
    suffix = (".emn", ".emnb") if g.match else (".egn", ".egnb")
    name = f"{ch.id}{suffix[0]}" if kind == "application/json" else f"{ch.id}{suffix[1]}"
    return web.Response(body=g.data, content_type=kind, headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"})


@routes.get("/api/channels/{channel}/logger")
@feed_route
async def get_holder(request: web.Request) -> web.Response:
    """Who holds the channel's logger (``holder``: null when nobody), and whether it is the
    page that asks (``you``)."""
    ch = channel_of(request)
    now = clock_of(request)
    h, mine = _hold(request, ch)
    return web.json_response({"holder": None if h is None else h.to_json(now), "you": mine})


class ClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    force: bool = False


@routes.post("/api/channels/{channel}/logger")
@feed_route
async def claim(request: web.Request) -> web.Response:
    """Hold the channel's logger: ``{"force": true}`` takes it over from another page.

    Raises:
        Conflict: another page holds it and ``force`` is not set (``holder`` says who).
    """
    ch = channel_of(request)
    body = parse(ClaimIn, await read_json(request))
    now = clock_of(request)
    h, mine = _hold(request, ch, take=True, force=body.force)
    if not mine and h is not None:
        raise Conflict(f"channel {ch.id!r}: the logger is held by {h.name!r}", kind="logger_held", holder=h.to_json(now))
    return web.json_response({"holder": None if h is None else h.to_json(now), "you": True})


@routes.delete("/api/channels/{channel}/logger")
@feed_route
async def release(request: web.Request) -> web.Response:
    """Let go of the channel's logger (only the page that holds it can)."""
    ch = channel_of(request)
    h, mine = _hold(request, ch)
    if mine:
        _HOLDERS.pop(ch, None)
    return web.json_response({"released": mine})
