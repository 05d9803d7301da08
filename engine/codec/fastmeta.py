"""The one-pass reader's ``Metadata``: plain player names, one-byte scores and a plain
ruleset (see :mod:`engine.codec.fastread`; :class:`~engine.codec.fastwire.Off` for
anything else).
"""

from __future__ import annotations

from typing import Any

from .common import LONER_LEAD, RULESET_BY_NUMBER
from .fastwire import Off, byte, span, text_field

__all__ = ["read_metadata_fast"]

_META_ORDER = ("gameId", "title", "description", "date", "ruleset")
_META_STRINGS = {0x0A: "gameId", 0x12: "title", 0x1A: "description", 0x32: "date"}


#: Decoded rulesets by their bytes: a handful of rulesets cover most files.
_RULESETS: dict[bytes, dict[str, Any]] = {}


def _ruleset(data: bytes, pos: int, end: int) -> dict[str, Any]:
    """A ``Ruleset`` of varint fields with one-byte values (every ruleset the reference writes).

    Fields 16 and up (``num_players``, ``num_deals``) have two-byte tags.
    """
    raw = data[pos:end]
    seen = _RULESETS.get(raw)
    if seen is not None:
        return dict(seen)  # the caller owns (and may change) the result
    out = _read_ruleset(data, pos, end)
    if len(_RULESETS) < 1024:
        _RULESETS[raw] = dict(out)
    return out


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


def read_metadata_fast(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    """``Metadata`` with plain player names, one-byte scores and a plain ruleset."""
    single: dict[str, Any] = {}
    players: list[Any] = []
    initial: list[int] = []
    final: list[int] = []
    # Walked inline as in _Reader.deal (a file has one metadata message, but many files).
    while pos < end:
        key = data[pos]
        if key == 0x28 or key == 0x40:
            (initial if key == 0x28 else final).append(byte(data, pos + 1))
            pos += 2
            continue
        if key & 7 != 2:
            raise Off
        a, pos = span(data, pos + 1, end)
        if key == 0x22:
            # A plain name: the player message is one field 1 with a one-byte length.
            if data[a] != 0x0A or data[a + 1] >= 0x80 or data[a + 1] + 2 != pos - a:
                raise Off
            players.append(text_field(data, text, a + 2, pos))
        elif key == 0x3A:
            single["ruleset"] = _ruleset(data, a, pos)
        else:
            name = _META_STRINGS.get(key)
            if name is None:
                raise Off
            single[name] = text_field(data, text, a, pos)
    if pos != end or len(players) > 10 or len(initial) > 2 or len(final) > 2:
        raise Off
    out: dict[str, Any] = {"players": players, "initialScore": initial}
    if final:
        out["finalScore"] = final
    for name in _META_ORDER:
        if name in single:
            out[name] = single[name]
    return out
