"""Euchre Match Notation: validation of the JSON form and the binary form (magic ``0x02``).

Spec section 10.  The binary is an ``egn.MatchFile`` protobuf message serialised with the
same rules as the EGN forms (spec 5.2); each game's EGN travels as compact JSON text in
``egn_json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import CodecError, EgnError, Place, SchemaError
from .common import js_key_order, relocate
from .jsjson import stringify
from .protobuf import Writer, as_bytes, as_double, as_int32, decode_str, read_fields

__all__ = ["FILE_TYPE", "MAX_EMN_INPUT", "validate_emn", "write_match", "read_match", "FORMATS", "STATUSES"]

FILE_TYPE = "Euchre Match Notation"
#: The reference refuses EMN binaries over 16 MiB on input (it has no output limit).
MAX_EMN_INPUT = 16 * 1024 * 1024
FORMATS = (
    "BEST_OF_N",
    "PROGRESSIVE",
    "ROUND_ROBIN",
    "CUSTOM",
    "FIXED_GAMES",
    "TARGET_SCORE",
    "ELIMINATION",
    "SWISS",
    "TIMED",
    "SINGLE_GAME",
)
STATUSES = ("COMPLETED", "IN_PROGRESS", "FORFEIT", "DRAW")
_VERSION = re.compile(r"^1\.[0](?:\.\d+)?$")


# --- validation --------------------------------------------------------------------------


class _Check:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> SchemaError:
        return SchemaError(message, Place(source=self.source, path=path or "/"))

    def obj(self, value: Any, path: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, "must be object")
        for key in value:
            if key not in allowed:
                raise self.fail(path, f"unexpected property {key!r}")
        for key in required:
            if key not in value:
                raise self.fail(path, f"must have required property {key!r}")
        return value

    def string(self, value: Any, path: str, limit: int | None = None) -> None:
        if not isinstance(value, str):
            raise self.fail(path, "must be string")
        if limit is not None and len(value) > limit:  # code points, as Ajv counts them
            raise self.fail(path, f"must NOT have more than {limit} characters")

    def integer(self, value: Any, path: str, minimum: int | None = None) -> None:
        ok = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not ok:
            raise self.fail(path, "must be integer")
        if minimum is not None and value < minimum:
            raise self.fail(path, f"must be >= {minimum}")

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(path, "must be array")
        return value


def validate_emn(obj: Any, *, source: str = "<input>") -> None:
    """Validate an EMN document: schema plus the reference's semantic checks (spec 10).

    Raises:
        SchemaError: the first problem, naming its JSON path; a game whose ``gameData`` is
            not a valid EGN document is reported with the game's path.
    """
    c = _Check(source)
    doc = c.obj(obj, "", {"fileType", "version", "metadata", "games"}, ("fileType", "version", "metadata", "games"))
    if doc["fileType"] != FILE_TYPE:
        raise c.fail("/fileType", f"must be equal to constant {FILE_TYPE!r}")
    c.string(doc["version"], "/version")
    if not _VERSION.fullmatch(doc["version"]):
        raise c.fail("/version", f'must match pattern "{_VERSION.pattern}"')
    meta = c.obj(
        doc["metadata"],
        "/metadata",
        {"matchId", "title", "description", "date", "players", "matchFormat", "result"},
        ("players",),
    )
    for key, limit in (("matchId", 64), ("title", 128), ("description", 1024), ("date", 64)):
        if key in meta:
            c.string(meta[key], f"/metadata/{key}", limit)
    players = c.array(meta["players"], "/metadata/players")
    if not players:
        raise c.fail("/metadata/players", "must NOT have fewer than 1 items")
    seen_items: list[str] = []
    ids: list[str] = []
    for i, player in enumerate(players):
        path = f"/metadata/players/{i}"
        p = c.obj(player, path, {"name", "playerIds", "id"}, ("name", "id"))
        c.string(p["name"], f"{path}/name", 64)
        c.string(p["id"], f"{path}/id", 64)
        if "playerIds" in p:
            pids = c.array(p["playerIds"], f"{path}/playerIds")
            if len(pids) > 10:
                raise c.fail(f"{path}/playerIds", "must NOT have more than 10 items")
            for j, pid in enumerate(pids):
                q = c.obj(pid, f"{path}/playerIds/{j}", {"id", "source"}, ("id", "source"))
                c.string(q["id"], f"{path}/playerIds/{j}/id", 64)
                c.string(q["source"], f"{path}/playerIds/{j}/source", 64)
        canon = json.dumps(p, sort_keys=True)
        if canon in seen_items:
            raise c.fail("/metadata/players", f"must NOT have duplicate items (item {i})")
        seen_items.append(canon)
        if p["id"] in ids:
            raise c.fail(f"{path}/id", f"duplicate player id {p['id']!r}")
        ids.append(p["id"])
    if "matchFormat" in meta:
        fmt = c.obj(meta["matchFormat"], "/metadata/matchFormat", {"type", "target"}, ("type",))
        if fmt["type"] not in FORMATS:
            raise c.fail("/metadata/matchFormat/type", "must be equal to one of the allowed values")
        if "target" in fmt:
            c.integer(fmt["target"], "/metadata/matchFormat/target", 1)
    if "result" in meta:
        res = c.obj(meta["result"], "/metadata/result", {"status", "winner", "scores"})
        if "status" in res and res["status"] not in STATUSES:
            raise c.fail("/metadata/result/status", "must be equal to one of the allowed values")
        if "winner" in res:
            for j, w in enumerate(c.array(res["winner"], "/metadata/result/winner")):
                c.string(w, f"/metadata/result/winner/{j}")
        if "scores" in res:
            scores = c.obj(res["scores"], "/metadata/result/scores", set(res["scores"]) if isinstance(res["scores"], dict) else set())
            for key, value in scores.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise c.fail(f"/metadata/result/scores/{key}", "must be number")
    from ..validate import validate_document

    for i, game in enumerate(c.array(doc["games"], "/games")):
        path = f"/games/{i}"
        g = c.obj(game, path, {"gameIndex", "players", "gameData"}, ("gameIndex", "players", "gameData"))
        c.integer(g["gameIndex"], f"{path}/gameIndex", 0)
        seats = c.array(g["players"], f"{path}/players")
        if len(seats) != 4:
            raise c.fail(f"{path}/players", "must have exactly 4 items")
        for j, seat in enumerate(seats):
            c.string(seat, f"{path}/players/{j}")
            if seat not in ids:
                raise c.fail(f"{path}/players/{j}", f"player id {seat!r} is not among the match players")
            if seats.index(seat) != j:
                raise c.fail(f"{path}/players/{j}", f"player id {seat!r} sits twice in one game")
        if not isinstance(g["gameData"], dict):
            raise c.fail(f"{path}/gameData", "must be object")
        try:
            validate_document(g["gameData"], source=f"{source} game {i}", reference=True)
        except EgnError as exc:
            raise SchemaError(f"gameData is not a valid EGN document: {exc.detail}", exc.place.with_(source=source, path=f"{path}/gameData{exc.place.path or ''}")) from None


# --- binary ------------------------------------------------------------------------------


def _enum(value: Any, names: tuple[str, ...], what: str) -> int:
    if isinstance(value, str) and value in names:
        return names.index(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CodecError(f"{value!r} is not a {what}")


def _ids(w: Writer, number: int, ids: Any) -> None:
    for ident in ids or ():
        if not isinstance(ident, dict):
            raise CodecError(f"player id {ident!r} is not an object")
        iw = Writer()
        if ident.get("id") is not None:
            iw.string(1, ident["id"])
        if ident.get("source") is not None:
            iw.string(2, ident["source"])
        w.message(number, iw)


def write_match(doc: Mapping[str, Any]) -> bytes:
    """The ``MatchFile`` message (without the magic byte).

    Raises:
        CodecError: a value of the wrong type.
    """
    w = Writer()
    for key, number in (("fileType", 1), ("version", 2)):
        if doc.get(key) is not None:
            w.string(number, doc[key])
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        mw = Writer()
        for key, number in (("matchId", 1), ("title", 2), ("description", 3)):
            if meta.get(key) is not None:
                mw.string(number, meta[key])
        for player in meta.get("players") or ():
            if not isinstance(player, dict):
                raise CodecError(f"match player {player!r} is not an object")
            pw = Writer()
            if player.get("id") is not None:
                pw.string(1, player["id"])
            if player.get("name") is not None:
                pw.string(2, player["name"])
            _ids(pw, 3, player.get("playerIds"))
            mw.message(4, pw)
        if meta.get("date") is not None:
            mw.string(5, meta["date"])
        fmt = meta.get("matchFormat")
        if isinstance(fmt, dict):
            fw = Writer()
            if fmt.get("type") is not None:
                fw.int32(1, _enum(fmt["type"], FORMATS, "match format"))
            if fmt.get("target") is not None:
                fw.int32(2, fmt["target"])
            mw.message(6, fw)
        result = meta.get("result")
        if isinstance(result, dict):
            rw = Writer()
            if result.get("status") is not None:
                rw.int32(1, _enum(result["status"], STATUSES, "result status"))
            for winner in result.get("winner") or ():
                rw.string(2, winner)
            scores = result.get("scores") or {}
            for key in js_key_order(scores):
                value = scores[key]
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise CodecError(f"score {value!r} of {key!r} is not a number")
                ew = Writer()
                ew.string(1, key)
                ew.double(2, float(value))
                rw.message(3, ew)
            mw.message(7, rw)
        w.message(3, mw)
    for game in doc.get("games") or ():
        if not isinstance(game, dict):
            raise CodecError(f"game entry {game!r} is not an object")
        gw = Writer()
        if game.get("gameIndex") is not None:
            gw.int32(1, game["gameIndex"])
        for seat in game.get("players") or ():
            gw.string(2, seat)
        if "gameData" in game:
            gw.string(3, stringify(game["gameData"]))
        w.message(4, gw)
    return w.getvalue()


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def read_match(data: bytes, base: int) -> dict[str, Any]:
    """Decode a ``MatchFile`` message into the reference's JSON shape (spec 10).

    Raises:
        CodecError: malformed protobuf.
    """
    version = "1.0"
    meta: dict[str, Any] = {}
    games: list[dict[str, Any]] = []
    for f in read_fields(data, base=base):
        if f.number == 2:
            version = decode_str(f, "version")
        elif f.number == 3:
            meta = _read_meta(as_bytes(f, "metadata"), f.offset)
        elif f.number == 4:
            try:
                games.append(_read_game(as_bytes(f, "game"), f.offset))
            except EgnError as exc:
                raise relocate(exc, path=f"/games/{len(games)}") from None
    return {"fileType": FILE_TYPE, "version": version, "metadata": meta, "games": games}


def _read_meta(data: bytes, base: int) -> dict[str, Any]:
    texts: dict[int, str] = {}
    players: list[dict[str, Any]] = []
    fmt: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    for f in read_fields(data, base=base):
        n = f.number
        if n in (1, 2, 3, 5):
            texts[n] = decode_str(f, "match metadata text")
        elif n == 4:
            pid, name, ids = "", "", []
            for g in read_fields(as_bytes(f, "match player"), base=f.offset):
                if g.number == 1:
                    pid = decode_str(g, "player id")
                elif g.number == 2:
                    name = decode_str(g, "player name")
                elif g.number == 3:
                    ident = {"id": "", "source": ""}
                    for h in read_fields(as_bytes(g, "player id"), base=g.offset):
                        if h.number in (1, 2):
                            ident["id" if h.number == 1 else "source"] = decode_str(h, "player id")
                    ids.append(ident)
            players.append({"id": pid, "name": name, "playerIds": ids})
        elif n == 6:
            kind, target = 0, None
            for g in read_fields(as_bytes(f, "match format"), base=f.offset):
                if g.number == 1:
                    kind = as_int32(g, "match format type")
                elif g.number == 2:
                    target = as_int32(g, "match format target")
            fmt = {"type": FORMATS[kind] if 0 <= kind < len(FORMATS) else kind}
            if target is not None:
                fmt["target"] = target
        elif n == 7:
            result = _read_result(as_bytes(f, "result"), f.offset)
    meta: dict[str, Any] = {}
    for n, key in ((1, "matchId"), (2, "title"), (3, "description"), (5, "date")):
        if texts.get(n):
            meta[key] = texts[n]
    meta["players"] = players
    if fmt is not None:
        meta["matchFormat"] = fmt
    if result is not None:
        meta["result"] = result
    return meta


def _read_result(data: bytes, base: int) -> dict[str, Any]:
    status = 0
    winners: list[str] = []
    scores: dict[str, int | float] = {}
    for f in read_fields(data, base=base):
        if f.number == 1:
            status = as_int32(f, "result status")
        elif f.number == 2:
            winners.append(decode_str(f, "winner"))
        elif f.number == 3:
            key, value = "", 0.0
            for g in read_fields(as_bytes(f, "score entry"), base=f.offset):
                if g.number == 1:
                    key = decode_str(g, "score key")
                elif g.number == 2:
                    value = as_double(g, "score")
            scores[key] = _number(value)
    out: dict[str, Any] = {"status": STATUSES[status] if 0 <= status < len(STATUSES) else status}
    if winners:
        out["winner"] = winners
    if scores:
        out["scores"] = scores
    return out


def _read_game(data: bytes, base: int) -> dict[str, Any]:
    index = 0
    seats: list[str] = []
    game: Any = {}
    for f in read_fields(data, base=base):
        if f.number == 1:
            index = as_int32(f, "gameIndex")
        elif f.number == 2:
            seats.append(decode_str(f, "seat player id"))
        elif f.number == 3:
            text = decode_str(f, "egn_json")
            try:
                game = json.loads(text)
            except (ValueError, RecursionError):
                game = {}  # as the reference: unreadable game JSON becomes {} (then fails validation)
    return {"gameIndex": index, "players": seats, "gameData": game}
