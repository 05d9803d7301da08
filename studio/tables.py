"""The studio's routes for games in and the tables at a glance (behind the token).

- ``GET /studio/api/channels/{channel}/game``: the engine's problems with the channel's game,
  each with its place, and the folders the server may read (the Game tab);
- ``POST /studio/api/channels/{channel}/game?mode=replace|append&name=FILE`` (the file as the
  body): replace the channel's game (from its first step), or append the file's game(s) to it
  as the next game(s) of a match (the channel plays on where it was) (:mod:`studio.games`);
- ``POST /studio/api/channels/{channel}/game/new`` (JSON: ``title``, ``players``, ``preset``,
  ``target`` or ``deals``, ``std``): replace the channel's game with a new one that has its
  players and no deals yet, for a logger to record (the *New live game* form);
- ``GET /studio/api/waiting``: pages open on a channel that does not exist, with their age
  (the notices);
- ``GET /studio/api/reach``: whether a tablet or another computer can reach the server, and
  at which addresses (the Logger tab's links);
- ``POST /studio/api/qr`` (JSON: ``text``): a QR code of the text as SVG (the Logger tab's link
  for the tablet, which may carry a feed key: a POST, so that the key stays out of URLs).

Every channel's game, logger and pages come from the service's own ``GET /api/channels``
(one answer for the overview, the same under ``serve --redis``); following a file, loading one
the server reads, feed keys and playback are the service's routes as well.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone

from aiohttp import web

from engine.ruleset import PRESETS

from .games import NewGameRefused, append_games, new_game
from .host import StudioHost

__all__ = ["mount_tables", "MAX_PROBLEMS", "MODES", "QR_MAX"]

#: problems listed per game (a damaged file can have hundreds; the first ones say what is wrong)
MAX_PROBLEMS = 100
#: what a file given to the studio does to the channel's game
MODES = ("replace", "append")
#: the longest text the studio's QR codes take (a logger link with its key is about 100)
QR_MAX = 1000


class Tables:
    """Handlers over one host."""

    def __init__(self, host: StudioHost) -> None:
        self.host = host

    async def game(self, request: web.Request) -> web.Response:
        channel = request.match_info["channel"]
        problems = self.host.game_problems(channel)
        return web.json_response(
            {
                "problems": problems[:MAX_PROBLEMS],
                "problemCount": len(problems),
                "allowDirs": self.host.allowed_dirs(),
                "presets": list(PRESETS),
            }
        )

    async def new(self, request: web.Request) -> web.Response:
        """A new game with its players and no deals (the logger records the deals)."""
        channel = request.match_info["channel"]
        try:
            form = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return web.json_response({"error": "the new game's form is not JSON", "kind": "bad_request"}, status=400)
        try:
            doc = new_game(form, date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        except NewGameRefused as err:
            return web.json_response({"error": f"new game: {err}", "kind": "bad_request", "field": err.field}, status=400)
        except ValueError as err:  # the ruleset's own rules
            return web.json_response({"error": f"new game: ruleset: {err}"[:600], "kind": "bad_request", "field": "ruleset"}, status=400)
        title = doc["metadata"].get("title") or " v ".join(doc["metadata"]["players"][:2])
        ack = self.host.load_game(channel, json.dumps(doc).encode(), source=f"live: {title}"[:200])
        return web.json_response({"mode": "new", "ack": ack, "game": doc, "problems": [], "problemCount": 0})

    async def load(self, request: web.Request) -> web.Response:
        """Replace or append; the answer is the feed's ack and the game's problems.  The
        engine's refusal (a 400 naming file, deal, phase and index) comes from the host's
        error middleware."""
        channel = request.match_info["channel"]
        mode = request.query.get("mode", "replace")
        if mode not in MODES:
            return web.json_response({"error": f"mode {mode[:20]!r} is not one of {', '.join(MODES)}", "kind": "bad_request"}, status=400)
        name = (request.query.get("name") or "upload")[:120]
        data = await request.read()
        if not data:
            return web.json_response({"error": f"{name}: the file is empty", "kind": "bad_request"}, status=400)
        if mode == "append":
            held = self.host.game_held(channel)
            if held is None:
                ack = self.host.load_game(channel, data, source=name)
            else:
                joined = f"{held.source} + {name}"
                ack = self.host.put_game(channel, append_games(held, data, source=name), source=joined[-200:])
        else:
            ack = self.host.load_game(channel, data, source=name)
        problems = self.host.game_problems(channel)
        return web.json_response({"mode": mode, "ack": ack, "problems": problems[:MAX_PROBLEMS], "problemCount": len(problems)})

    async def waiting(self, request: web.Request) -> web.Response:
        return web.json_response({"waiting": self.host.waiting_pages()})

    async def reach(self, request: web.Request) -> web.Response:
        # in a thread: finding the addresses looks up the machine's own name, which a badly set
        # resolver can hold for seconds, and the event loop feeds the live pages
        return web.json_response(await asyncio.to_thread(self.host.reach))

    async def qr(self, request: web.Request) -> web.Response:
        """The QR code of ``text`` as SVG, dark on white with its quiet zone (scanned off a
        dark screen)."""
        import io

        import segno

        try:
            text = (await request.json()).get("text")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            text = None
        if not isinstance(text, str) or not text or len(text) > QR_MAX:
            return web.json_response({"error": f"qr: text must be a string of 1 to {QR_MAX} characters", "kind": "bad_request", "field": "text"}, status=400)
        out = io.BytesIO()
        segno.make(text, error="m").save(out, kind="svg", scale=6, border=4, dark="#000", light="#fff", xmldecl=False)
        return web.Response(body=out.getvalue(), content_type="image/svg+xml", headers={"Cache-Control": "no-store"})


def mount_tables(app: web.Application, host: StudioHost) -> None:
    """Add these routes to ``app`` behind the host's token check."""
    t = Tables(host)
    g = host.guard
    r = app.router
    r.add_get("/studio/api/channels/{channel}/game", g(t.game))
    r.add_post("/studio/api/channels/{channel}/game", g(t.load))
    r.add_post("/studio/api/channels/{channel}/game/new", g(t.new))
    r.add_get("/studio/api/waiting", g(t.waiting))
    r.add_get("/studio/api/reach", g(t.reach))
    r.add_post("/studio/api/qr", g(t.qr))
