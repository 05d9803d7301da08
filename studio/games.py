"""Games in from the studio: what appending a file to a channel's game makes.

A producer loads a game (or a match) into a channel, replaces it, or **appends** the next game
of the evening to it.  Appending turns what the channel holds into a match (EMN JSON): the
channel's game (or every game of its match), then the file's game (or every game of its
match), each with its four seats named by the match's players.  The channel then plays on
where it was (the steps it already had are the same steps), and the new game follows.

Pure: bytes and JSON in, bytes out (the engine reads the file; the service loads the
result, so every error names its place as the engine names it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import Place, SchemaError
from engine.load import LoadedMatch, load_any

__all__ = ["Held", "MATCH_FILE_TYPE", "SEATS", "NewGameRefused", "append_games", "match_of", "games_of", "new_game"]

MATCH_FILE_TYPE = "Euchre Match Notation"
#: seats of a game in a match (EMN lists exactly four player ids per game)
SEATS = 4


@dataclass(frozen=True)
class Held:
    """What a channel holds: its document (EGN JSON, or EMN JSON when ``match``) and the
    name it was loaded under."""

    document: dict[str, Any]
    match: bool
    source: str


@dataclass(frozen=True)
class _Game:
    """One game to place in a match: its EGN JSON and its seats' names."""

    data: dict[str, Any]
    names: tuple[str, ...]
    source: str


def _names(game: dict[str, Any]) -> tuple[str, ...]:
    players = (game.get("metadata") or {}).get("players") or []
    return tuple(p if isinstance(p, str) else str((p or {}).get("name", "")) for p in players)


def _match_games(match: dict[str, Any], source: str) -> list[_Game]:
    """The games of an EMN document, their seats named by the match's players."""
    meta = match.get("metadata") or {}
    by_id = {str(p.get("id")): str(p.get("name", "")) for p in meta.get("players") or [] if isinstance(p, dict)}
    out = []
    for i, g in enumerate(match.get("games") or []):
        if not isinstance(g, dict) or not isinstance(g.get("gameData"), dict):
            continue
        seats = g.get("players") or []
        names = tuple(by_id.get(str(s), str(s)) for s in seats) or _names(g["gameData"])
        out.append(_Game(g["gameData"], names, f"{source} game {i}"))
    return out


def games_of(held: Held | None) -> list[dict[str, Any]]:
    """The EGN JSON of every game ``held`` plays, in order (none for an empty channel)."""
    if held is None:
        return []
    if held.match:
        return [g.data for g in _match_games(held.document, held.source)]
    return [held.document]


def _read(data: bytes, *, source: str) -> list[_Game]:
    """The games of a file (any form: ``.egn``, ``.egnb``, ``.emn``), as the engine reads
    them (leniently: what the engine repairs is repaired here too).

    Raises:
        EgnError: the engine cannot read the file (its place named).
    """
    loaded = load_any(data, source=source, strict=False)
    if isinstance(loaded, LoadedMatch):
        games = _match_games(loaded.match, source)
        if not games:
            raise SchemaError("the match holds no games the engine can read", Place(source=source, path="/games"))
        return games
    doc = loaded.document.to_json()
    return [_Game(doc, _names(doc), source)]


def match_of(games: Sequence[tuple[dict[str, Any], Sequence[str], str]], *, title: str | None) -> dict[str, Any]:
    """An EMN document of ``games`` (each its EGN JSON, its four seats' names, and its
    source for errors): one match player per name (a name twice at one table gets a
    second player), ``gameIndex`` in order.

    Raises:
        SchemaError: a game without exactly four seats (a match holds four-seat games).
    """
    players: list[dict[str, str]] = []
    entries: list[dict[str, Any]] = []
    for index, (data, names, source) in enumerate(games):
        if len(names) != SEATS:
            raise SchemaError(
                f"a match holds four-seat games; this game has {len(names)} players",
                Place(source=source, path="/metadata/players"),
            )
        seats: list[str] = []
        for name in names:
            free = next((p["id"] for p in players if p["name"] == name and p["id"] not in seats), None)
            if free is None:
                free = f"p{len(players) + 1}"
                players.append({"id": free, "name": (name or f"Player {len(players) + 1}")[:64]})
            seats.append(free)
        entries.append({"gameIndex": index, "players": seats, "gameData": data})
    meta: dict[str, Any] = {"players": players}
    if title:
        meta["title"] = title[:128]
    return {"fileType": MATCH_FILE_TYPE, "version": "1.0", "metadata": meta, "games": entries}


def append_games(held: Held | None, data: bytes, *, source: str) -> bytes:
    """The match (EMN JSON bytes) of what the channel holds followed by the file's game(s).

    Raises:
        EgnError: the file cannot be read, or one of the games has not four seats; the
            error names the file (or the channel's game) and the place.
    """
    new = _read(data, source=source)
    before: list[_Game] = []
    title: str | None = None
    kept: dict[str, Any] = {}
    if held is not None:
        if held.match:
            before = _match_games(held.document, held.source)
            meta = held.document.get("metadata") or {}
            title = meta.get("title")
            # the match's own facts (its id, format, date, result...) stay; its players are made again
            kept = {k: v for k, v in meta.items() if k not in ("players", "title")}
        else:
            before = [_Game(held.document, _names(held.document), held.source)]
            title = (held.document.get("metadata") or {}).get("title")
    games = [(g.data, g.names, g.source) for g in (*before, *new)]
    doc = match_of(games, title=title if isinstance(title, str) else None)
    doc["metadata"] = {**doc["metadata"], **kept}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


#: what the studio's *New live game* form may set: the title, the four seats' names
MAX_TITLE = 120
MAX_NAME = 60


class NewGameRefused(ValueError):
    """A *New live game* form the studio cannot turn into a game: names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def new_game(form: Any, *, date: str) -> dict[str, Any]:
    """A game with its players and no deals (EGN JSON), for a logger to record into: the
    studio's *New live game* form (``title``, ``players``: the four seats' names, seats 0 and 2
    one team; ``preset``: a regional ruleset of :data:`engine.ruleset.PRESETS`; ``target``: the
    winning score, or ``deals``: a fixed number of deals; ``std``: stick the dealer).  Only the
    ruleset keys that differ from EGN's defaults are written.

    Raises:
        NewGameRefused: a missing or malformed field, named.
    """
    from engine.ruleset import PRESETS, Ruleset

    if not isinstance(form, dict):
        raise NewGameRefused("form", "expected a JSON object")
    title = form.get("title", "")
    if not isinstance(title, str) or len(title.strip()) > MAX_TITLE:
        raise NewGameRefused("title", f"text of at most {MAX_TITLE} characters")
    players = form.get("players")
    if not isinstance(players, list) or len(players) != SEATS:
        raise NewGameRefused("players", f"the {SEATS} seats' names, seat 0 first (seats 0 and 2 are a team)")
    names = []
    for i, p in enumerate(players):
        if not isinstance(p, str) or not p.strip() or len(p.strip()) > MAX_NAME:
            raise NewGameRefused(f"players[{i}]", f"a name of 1 to {MAX_NAME} characters")
        names.append(p.strip())
    name = form.get("preset", "us-canada")
    if name not in PRESETS:
        raise NewGameRefused("preset", f"one of {', '.join(PRESETS)}")
    rules = PRESETS[name].model_dump(mode="json")
    rules.pop("num_deals")
    target, deals = form.get("target"), form.get("deals")
    if deals is not None:
        if not isinstance(deals, int) or isinstance(deals, bool) or not 1 <= deals <= 1000:
            raise NewGameRefused("deals", "a number of deals from 1 to 1000")
        rules.pop("winning_score")
        rules["num_deals"] = deals
    elif target is not None:
        if not isinstance(target, int) or isinstance(target, bool) or not 1 <= target <= 1000:
            raise NewGameRefused("target", "a winning score from 1 to 1000")
        rules["winning_score"] = target
    std = form.get("std")
    if std is not None:
        if not isinstance(std, bool):
            raise NewGameRefused("std", "true or false")
        rules["std"] = std
    defaults = Ruleset().model_dump(mode="json")
    written = {k: v for k, v in rules.items() if k not in defaults or defaults[k] != v}
    Ruleset.model_validate(written)  # the ruleset's own rules (never both a target and deals)
    metadata: dict[str, Any] = {"players": names, "initialScore": [0, 0], "date": date}
    if title.strip():
        metadata["title"] = title.strip()
    if written:
        metadata["ruleset"] = written
    return {"fileType": "Euchre Game Notation", "version": "1.4", "metadata": metadata, "deals": []}
