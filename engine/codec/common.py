"""Messages shared by both binary forms (``egn-common.proto``) and small JavaScript-isms.

``Metadata``, ``Ruleset``, ``Player`` and the annotation maps are written and read here;
the same bytes appear in the condensed and the expanded form (spec 5.3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import CodecError, EgnError, Place, SchemaError
from .protobuf import (
    Field,
    Writer,
    as_bool,
    as_bytes,
    as_int32,
    decode_str,
    packed_int32,
    read_fields,
)

__all__ = [
    "MAX_BINARY",
    "js_key_order",
    "is_array_index",
    "relocate",
    "write_metadata",
    "read_metadata",
    "write_annotations",
    "read_annotations",
    "annotation_keys_numeric",
    "cap",
    "MAX_LINE_PHASES",
    "MAX_ANNOTATION_KEYS",
    "RULESET_BY_NUMBER",
    "LONER_LEAD",
]

#: The reference refuses EGN binaries (input and output) longer than this; exactly 8 MiB passes.
MAX_BINARY = 8 * 1024 * 1024

_MAX_INDEX = (1 << 32) - 2

#: Implementation limits where the schema sets none (alternative-line phases, annotation
#: keys); they bound the memory a hostile 8 MiB file can make the decoder allocate.
MAX_LINE_PHASES = 256
MAX_ANNOTATION_KEYS = 1024


def cap(items: list[Any] | dict[str, Any], limit: int, what: str, *, schema: bool = True) -> None:
    """Refuse a repeated field as soon as it outgrows ``limit`` while decoding.

    With ``schema=True`` the limit is the schema's own ``maxItems`` (the decoded document
    would be refused by validation anyway, so refusing early changes nothing but memory).

    Raises:
        SchemaError: a schema limit; CodecError: an implementation limit.
    """
    if len(items) > limit:
        if schema:
            raise SchemaError(f"{what} must NOT have more than {limit} items")
        raise CodecError(f"{what} has more than {limit} entries (limit of this decoder)")


def is_array_index(key: str) -> bool:
    """True for keys JavaScript orders first in an object (canonical integers < 2**32 - 1)."""
    if not key or not key.isdigit() or not key.isascii():
        return False
    if len(key) > 1 and key[0] == "0":
        return False
    return len(key) <= 10 and int(key) <= _MAX_INDEX


def js_key_order(keys: Iterable[str]) -> list[str]:
    """Keys in JavaScript's property order: array indices ascending, then insertion order."""
    keys = list(keys)
    index = sorted((k for k in keys if is_array_index(k)), key=int)
    return index + [k for k in keys if not is_array_index(k)]


def relocate(exc: EgnError, **place: Any) -> EgnError:
    """The same error with more of its place filled in (keeps what the error already knew)."""
    known = {k: v for k, v in place.items() if getattr(exc.place, k) is None}
    return type(exc)(exc.detail, exc.place.with_(**known))


def annotation_keys_numeric(obj: Any, *, source: str | None) -> None:
    """Reject any annotation key that is not all digits, anywhere in the document.

    The reference checks this before encoding and after decoding so that keys such as
    ``__proto__`` never reach a JavaScript object.

    Raises:
        CodecError: a ``callAnnotations``/``playAnnotations`` key is not decimal digits.
    """
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                sub = f"{path}/{key}"
                if key in ("callAnnotations", "playAnnotations") and isinstance(value, dict):
                    for ak in value:
                        if not (ak.isascii() and ak.isdigit()):
                            raise CodecError(
                                f"annotation key {ak!r} is not a decimal number",
                                Place(source=source, path=sub),
                            )
                stack.append((value, sub))
        elif isinstance(node, list):
            stack.extend((v, f"{path}/{i}") for i, v in enumerate(node))


# --- ruleset -----------------------------------------------------------------------------

_RULESET: tuple[tuple[str, int, str], ...] = (
    ("std", 1, "bool"),
    ("min_rank", 2, "int32"),
    ("winning_score", 3, "int32"),
    ("canadian", 4, "bool"),
    ("loner_lead", 5, "enum"),
    ("farmers", 6, "bool"),
    ("partners_best", 7, "bool"),
    ("go_under", 8, "bool"),
    ("joker", 9, "bool"),
    ("allow_no_trump", 10, "bool"),
    ("fast_break", 11, "bool"),
    ("four_trick_tokens", 12, "bool"),
    ("loner_march_score", 13, "int32"),
    ("loner_euchred_score", 14, "int32"),
    ("defend_alone", 15, "bool"),
    ("num_players", 16, "int32"),
    ("num_deals", 17, "int32"),
)
#: Ruleset field number -> (JSON name, "bool" | "int32" | "enum").
RULESET_BY_NUMBER = {number: (name, kind) for name, number, kind in _RULESET}
LONER_LEAD = ("LEFT_OF_DEALER", "LEFT_OF_LONER")


def _enum_number(value: Any, names: tuple[str, ...], what: str) -> int:
    if isinstance(value, str):
        if value in names:
            return names.index(value)
        raise CodecError(f"{value!r} is not a {what} value")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CodecError(f"{value!r} is not a {what} value")


def _enum_name(number: int, names: tuple[str, ...]) -> str | int:
    return names[number] if 0 <= number < len(names) else number


def _write_ruleset(rules: Mapping[str, Any]) -> Writer:
    w = Writer()
    for name, number, kind in _RULESET:
        value = rules.get(name)
        if value is None:
            continue
        if kind == "bool":
            w.bool(number, value)
        elif kind == "int32":
            w.int32(number, value)
        else:
            w.int32(number, _enum_number(value, LONER_LEAD, "loner_lead"))
    return w


def _read_ruleset(data: bytes, base: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in read_fields(data, base=base):
        known = RULESET_BY_NUMBER.get(f.number)
        if known is None:
            continue
        name, kind = known
        if kind == "bool":
            out[name] = as_bool(f, name)
        elif kind == "int32":
            out[name] = as_int32(f, name)
        else:
            out[name] = _enum_name(as_int32(f, name), LONER_LEAD)
    return out


# --- players -----------------------------------------------------------------------------


def _write_player(player: Any) -> Writer:
    w = Writer()
    if isinstance(player, str):
        w.string(1, player)
        return w
    if not isinstance(player, dict):
        raise CodecError(f"player {player!r} is neither a name nor an object")
    inner = Writer()
    inner.string(1, player.get("name") or "")
    for ident in player.get("playerIds") or ():
        if not isinstance(ident, dict):
            raise CodecError(f"player id {ident!r} is not an object")
        iw = Writer()
        iw.string(1, ident.get("id") or "")
        iw.string(2, ident.get("source") or "")
        inner.message(2, iw)
    w.message(2, inner)
    return w


def read_id(data: bytes, base: int) -> dict[str, str]:
    """An ``Id`` message as ``{"id", "source"}`` (keys only when on the wire).

    Raises:
        CodecError: malformed message.
    """
    out: dict[str, str] = {}
    for f in read_fields(data, base=base):
        if f.number == 1:
            out["id"] = decode_str(f, "id")
        elif f.number == 2:
            out["source"] = decode_str(f, "source")
    return out


def _read_player(data: bytes, base: int) -> str | dict[str, Any]:
    result: str | dict[str, Any] | None = None
    for f in read_fields(data, base=base):
        if f.number == 1:
            result = decode_str(f, "player name")
        elif f.number == 2:
            name = ""
            ids: list[dict[str, str]] = []
            for g in read_fields(as_bytes(f, "player_with_id"), base=f.offset):
                if g.number == 1:
                    name = decode_str(g, "player name")
                elif g.number == 2:
                    ids.append(read_id(as_bytes(g, "player id"), g.offset))
                    cap(ids, 10, "player playerIds")
            result = {"name": name, "playerIds": ids}
    if result is None:
        raise CodecError(f"player record at byte {base} has neither a name nor a player object")
    return result


# --- metadata ----------------------------------------------------------------------------


def write_metadata(meta: Mapping[str, Any]) -> Writer:
    """The ``Metadata`` message, fields in ascending number order (spec 5.2).

    Raises:
        CodecError: a value of the wrong type.
    """
    w = Writer()
    for name, number in (("gameId", 1), ("title", 2), ("description", 3)):
        if meta.get(name) is not None:
            w.string(number, meta[name])
    for player in meta.get("players") or ():
        w.message(4, _write_player(player))
    for score in meta.get("initialScore") or ():
        w.int32(5, score)  # unpacked, as protobufjs writes it
    if meta.get("date") is not None:
        w.string(6, meta["date"])
    ruleset = meta.get("ruleset")
    if ruleset is not None:
        if not isinstance(ruleset, dict):
            raise CodecError(f"ruleset {ruleset!r} is not an object")
        w.message(7, _write_ruleset(ruleset))
    for score in meta.get("finalScore") or ():
        w.int32(8, score)
    return w


def read_metadata(data: bytes, base: int) -> dict[str, Any]:
    """Decode ``Metadata`` into the reference's JSON shape (spec 5.2).

    Raises:
        CodecError: malformed message.
    """
    out: dict[str, Any] = {}
    players: list[Any] = []
    initial: list[int] = []
    final: list[int] = []
    names = {1: "gameId", 2: "title", 3: "description", 6: "date"}
    for f in read_fields(data, base=base):
        n = f.number
        if n in names:
            out[names[n]] = decode_str(f, names[n])
        elif n == 4:
            players.append(_read_player(as_bytes(f, "player"), f.offset))
            cap(players, 10, "metadata/players")
        elif n == 5:
            initial.extend(packed_int32(f, "initialScore"))
            cap(initial, 2, "metadata/initialScore")
        elif n == 7:
            out["ruleset"] = _read_ruleset(as_bytes(f, "ruleset"), f.offset)
        elif n == 8:
            final.extend(packed_int32(f, "finalScore"))
            cap(final, 2, "metadata/finalScore")
    ordered: dict[str, Any] = {"players": players, "initialScore": initial}
    if final:
        ordered["finalScore"] = final
    for key in ("gameId", "title", "description", "date", "ruleset"):
        if key in out:
            ordered[key] = out[key]
    return ordered


# --- annotation maps ---------------------------------------------------------------------


def _annotation_entries(annotations: Mapping[str, Any]) -> list[tuple[int, list[Any]]]:
    merged: dict[int, list[Any]] = {}
    for key in js_key_order(annotations):
        try:
            number = int(key)
        except ValueError:
            raise CodecError(f"annotation key {key!r} is not a decimal number") from None
        value = annotations[key]
        merged[number] = value if isinstance(value, list) else [value]
    return sorted(merged.items())


def write_annotations(w: Writer, number: int, annotations: Any) -> None:
    """A ``map<int32, AnnotationList>``: entries in ascending key order, key and value always written.

    Raises:
        CodecError: a key that is not a number, or a text that is not a string.
    """
    if annotations is None:
        return
    if not isinstance(annotations, dict):
        raise CodecError(f"annotations {annotations!r} are not an object")
    for key, texts in _annotation_entries(annotations):
        entry = Writer()
        entry.int32(1, key)
        lst = Writer()
        for text in texts:
            lst.string(1, text)
        entry.message(2, lst)
        w.message(number, entry)


def read_annotations(field: Field, into: dict[str, list[str]]) -> None:
    """Add one map entry to ``into`` (decimal-string key -> texts).

    Raises:
        CodecError: malformed entry.
    """
    key = 0
    texts: list[str] = []
    for f in read_fields(as_bytes(field, "annotation entry"), base=field.offset):
        if f.number == 1:
            key = as_int32(f, "annotation key")
        elif f.number == 2:
            texts = []
            for g in read_fields(as_bytes(f, "annotation list"), base=f.offset):
                if g.number == 1:
                    texts.append(decode_str(g, "annotation text"))
                    cap(texts, 50, "annotation texts")
    cap(texts, 50, "annotation texts")
    into[str(key)] = texts
    cap(into, MAX_ANNOTATION_KEYS, "annotation map", schema=False)
