"""The one-pass reader's ``Metadata``: plain players (names, or objects as the writers
write them), one-byte scores and a plain ruleset (see :mod:`engine.codec.fastread`;
:class:`~engine.codec.fastwire.Off` for anything else).

It also says whether the value it read certainly passes the schema, so that validation
of the decoded document can skip it (:func:`engine.fastcheck.accepts`,
``metadata_checked``): its strings are decoded text (never a lone surrogate), its numbers
one-byte, its lists capped, so what is left to check is the strings' lengths, the date and
the ruleset (once per distinct ruleset).  ``tests/codec/test_fastpath.py`` checks on the
fixtures and on mutated files that the fast check accepts every metadata so flagged.
"""

from __future__ import annotations

from typing import Any

from ..fastcheck import NAME_LIMIT, TEXT_LIMITS, ruleset_ok
from ..model import date_ok
from .common import LONER_LEAD, RULESET_BY_NUMBER
from .fastwire import Off, byte, span, text_field

__all__ = ["read_metadata_fast"]

_META_ORDER = ("gameId", "title", "description", "date", "ruleset")
_META_STRINGS = {0x0A: "gameId", 0x12: "title", 0x1A: "description", 0x32: "date"}


_STRINGS = {key: (name, TEXT_LIMITS[name]) for key, name in _META_STRINGS.items()}

#: Decoded rulesets by their bytes, with the schema's verdict: a handful cover most files.
_RULESETS: dict[bytes, tuple[dict[str, Any], bool]] = {}


def _ruleset(data: bytes, pos: int, end: int) -> tuple[dict[str, Any], bool]:
    """A ``Ruleset`` of varint fields with one-byte values (every ruleset the reference
    writes), and whether it certainly passes the schema.

    Fields 16 and up (``num_players``, ``num_deals``) have two-byte tags.
    """
    raw = data[pos:end]
    seen = _RULESETS.get(raw)
    if seen is not None:
        return dict(seen[0]), seen[1]  # the caller owns (and may change) the result
    out = _read_ruleset(data, pos, end)
    ok = ruleset_ok(out)
    if len(_RULESETS) < 1024:
        _RULESETS[raw] = (dict(out), ok)
    return out, ok


def _read_ruleset(data: bytes, pos: int, end: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    while pos < end:
        key = data[pos]
        if key >= 0x80:
            pos += 1
            key = (key & 0x7F) | (byte(data, pos) << 7)
        value = byte(data, pos + 1)
        if key & 7 or key < 8:
            raise Off
        known = RULESET_BY_NUMBER.get(key >> 3)
        if known is not None:
            name, kind = known
            if kind == "bool":
                out[name] = value != 0
            elif kind == "int32":
                out[name] = value
            else:
                out[name] = LONER_LEAD[value] if value < len(LONER_LEAD) else value
        pos += 2
    if pos != end:
        raise Off
    return out


def _player_object(data: bytes, text: str, pos: int, end: int) -> tuple[dict[str, Any], bool]:
    """A ``PlayerWithId`` as the writers write it (the name, then ids each of an id and a
    source, in that order), and whether it certainly passes the schema."""
    if data[pos] != 0x0A:
        raise Off
    a, pos = span(data, pos + 1, end)
    name = text_field(data, text, a, pos)
    ok = len(name) <= NAME_LIMIT
    ids: list[dict[str, str]] = []
    while pos < end:
        if data[pos] != 0x12:
            raise Off
        a, pos = span(data, pos + 1, end)
        if data[a] != 0x0A:
            raise Off
        a, b = span(data, a + 1, pos)
        ident = text_field(data, text, a, b)
        if data[b] != 0x12:
            raise Off
        a, b = span(data, b + 1, pos)
        if b != pos:
            raise Off
        source = text_field(data, text, a, b)
        ok = ok and len(ident) <= NAME_LIMIT and len(source) <= NAME_LIMIT
        ids.append({"id": ident, "source": source})
    if pos != end or len(ids) > 10:
        raise Off
    return {"name": name, "playerIds": ids}, ok


def read_metadata_fast(data: bytes, text: str, pos: int, end: int) -> tuple[dict[str, Any], bool]:
    """``Metadata`` with plain players, one-byte scores and a plain ruleset, and
    whether it certainly passes the schema (see the module's docstring)."""
    single: dict[str, Any] = {}
    players: list[Any] = []
    initial: list[int] = []
    final: list[int] = []
    certain = True
    # Walked inline as in _Reader.deal (a file has one metadata message, but many files).
    while pos < end:
        key = data[pos]
        if key == 0x28 or key == 0x40:
            (initial if key == 0x28 else final).append(byte(data, pos + 1))
            pos += 2
            continue
        if key & 7 != 2:
            raise Off
        size = data[pos + 1]
        if size < 0x80:  # a one-byte length (nearly every field): no call
            a = pos + 2
            pos = a + size
            if pos > end:
                raise Off
        else:
            a, pos = span(data, pos + 1, end)
        if key == 0x22:
            # The player message is one field filling it: 1, a plain name (with a one-byte
            # length), or 2, a player object.
            inner, size = data[a], data[a + 1]
            if size >= 0x80 or size + 2 != pos - a:
                raise Off
            if inner == 0x0A:
                name = text_field(data, text, a + 2, pos)
                if len(name) > NAME_LIMIT:
                    certain = False
                players.append(name)
            elif inner == 0x12:
                player, ok = _player_object(data, text, a + 2, pos)
                certain = certain and ok
                players.append(player)
            else:
                raise Off
        elif key == 0x3A:
            single["ruleset"], ok = _ruleset(data, a, pos)
            certain = certain and ok
        else:
            known = _STRINGS.get(key)
            if known is None:
                raise Off
            value = text_field(data, text, a, pos)
            if len(value) > known[1]:
                certain = False
            single[known[0]] = value
    if pos != end or len(players) > 10 or len(initial) > 2 or len(final) > 2:
        raise Off
    out: dict[str, Any] = {"players": players, "initialScore": initial}
    if final:
        out["finalScore"] = final
    for name in _META_ORDER:
        if name in single:
            out[name] = single[name]
    date = single.get("date")
    return out, certain and (date is None or date_ok(date))
