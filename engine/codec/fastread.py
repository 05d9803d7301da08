"""A one-pass reader for the common shape of an ``EgnFile`` message (both binary forms).

The general readers (:mod:`engine.codec.expanded`, :mod:`engine.codec.common`) split every
message into fields, slice a copy of each submessage and call a function per level.  Almost
every file an EGN tool writes has one plain shape: one-byte tags, lengths under 16 KiB,
one-byte numbers, cards and calls in ASCII.  This module walks such a file once, by
absolute offsets into the whole buffer, and reads a card list with one ``str.split`` on
the file's Latin-1 text (a card field is ``0x0a 0x02`` and two ASCII letters).

It never raises and never decides anything: :func:`read_file_fast` returns ``None`` for
anything outside that shape (a field it does not know, a wire type it does not expect, a
list longer than its cap, a string it would have to decode differently, ...), and the
caller then runs the general reader, which alone decodes those files and words their
errors.  Where it returns a document, the document is the one the general reader returns
for the same bytes, key order included (``tests/test_codec_fastpath.py`` compares the two
on the fixtures and on mutated files).

Conventions inside: ``pos``/``end`` are absolute offsets; a one-byte value may be read past
a submessage's end (or past the buffer: ``IndexError``, caught once at the top), so every
loop ends by checking that it stopped exactly at ``end``.
"""

from __future__ import annotations

from typing import Any

from .common import LONER_LEAD, MAX_ANNOTATION_KEYS, MAX_LINE_PHASES, RULESET_BY_NUMBER

__all__ = ["read_file_fast", "CARD_TEXTS"]

BIDDING = "EUCHRE_BIDDING"
PLAY = "TRICK_PLAY"
_SEP = "\n\x02"  # tag of field 1 (wire type 2) and length 2: what precedes every card
#: Every two-letter card spelling of the schema (ranks 7-A, N, X; suits, x t n g h).
CARD_TEXTS = frozenset(r + s for r in "78N9TJQKAX" for s in "SsHhCcDdxtngh")
_BID_ORDER = ("phaseNumber", "isAlone", "aloneDefender", "discard")
_META_ORDER = ("gameId", "title", "description", "date", "ruleset")
_META_STRINGS = {0x0A: "gameId", 0x12: "title", 0x1A: "description", 0x32: "date"}


class _Off(Exception):
    """Internal: not the common shape (the general reader takes over)."""


def _stop(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """(start, stop) of the length-delimited value whose length varint is at ``pos``."""
    size = data[pos]
    if size < 0x80:
        stop = pos + 1 + size
        if stop > end:
            raise _Off
        return pos + 1, stop
    low = data[pos + 1]
    if low >= 0x80:
        raise _Off
    stop = pos + 2 + ((size & 0x7F) | (low << 7))
    if stop > end:
        raise _Off
    return pos + 2, stop


def _cards(text: str, start: int, stop: int) -> list[str]:
    """The cards of a ``CardList``/``Trick`` body made only of two-letter card fields."""
    chunk = text[start:stop]
    cards = chunk.split(_SEP)
    if cards[0]:
        raise _Off
    del cards[0]
    if len(chunk) != 4 * len(cards) or len(cards) > 10 or not CARD_TEXTS.issuperset(cards):
        raise _Off
    return cards


def _byte(data: bytes, pos: int) -> int:
    """A one-byte varint value (anything longer is not the common shape)."""
    value = data[pos]
    if value >= 0x80:
        raise _Off
    return value


def _utf8(data: bytes, start: int, stop: int) -> str:
    try:
        return data[start:stop].decode("utf-8")
    except UnicodeDecodeError:
        raise _Off from None


def _ascii(text: str, start: int, stop: int) -> str:
    value = text[start:stop]
    if not value.isascii():
        raise _Off
    return value


def _annotation(data: bytes, pos: int, end: int, into: dict[str, list[str]]) -> None:
    """One ``map<int32, AnnotationList>`` entry: key field, then (optionally) the list."""
    if data[pos] != 0x08:
        raise _Off
    key = _byte(data, pos + 1)
    pos += 2
    texts: list[str] = []
    if pos < end:
        if data[pos] != 0x12:
            raise _Off
        pos, stop = _stop(data, pos + 1, end)
        if stop != end:
            raise _Off
        while pos < end:
            if data[pos] != 0x0A:
                raise _Off
            start, pos = _stop(data, pos + 1, end)
            texts.append(_utf8(data, start, pos))
        if len(texts) > 50:
            raise _Off
    elif pos > end:
        raise _Off
    into[str(key)] = texts
    if len(into) > MAX_ANNOTATION_KEYS:
        raise _Off


def _bidding(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    calls: list[str] = []
    single: dict[str, Any] = {}
    notes: dict[str, list[str]] = {}
    while pos < end:
        key = data[pos]
        if key == 0x12:
            start, pos = _stop(data, pos + 1, end)
            calls.append(_ascii(text, start, pos))
        elif key == 0x08:
            single["phaseNumber"] = _byte(data, pos + 1)
            pos += 2
        elif key == 0x18:
            single["isAlone"] = _byte(data, pos + 1) != 0
            pos += 2
        elif key == 0x20:
            single["aloneDefender"] = _byte(data, pos + 1)
            pos += 2
        elif key == 0x2A:
            start, pos = _stop(data, pos + 1, end)
            single["discard"] = _ascii(text, start, pos)
        elif key == 0x3A:
            start, pos = _stop(data, pos + 1, end)
            _annotation(data, start, pos, notes)
        else:
            raise _Off
    if pos != end or len(calls) > 16:
        raise _Off
    out: dict[str, Any] = {"calls": calls, "cardExchanges": []}
    if single:
        for name in _BID_ORDER:
            if name in single:
                out[name] = single[name]
    if notes:
        out["callAnnotations"] = notes
    out["type"] = BIDDING
    return out


def _play(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    tricks: list[list[str]] = []
    number = -1
    notes: dict[str, list[str]] = {}
    sep, cards_ok = _SEP, CARD_TEXTS.issuperset
    while pos < end:
        key = data[pos]
        if key == 0x1A:
            # Inlined _stop and _cards: this loop reads most of the bytes of a file.
            size = data[pos + 1]
            pos += 2
            stop = pos + size
            if size >= 0x80 or stop > end:
                raise _Off
            chunk = text[pos:stop]
            cards = chunk.split(sep)
            if cards[0]:
                raise _Off
            del cards[0]
            if size != 4 * len(cards) or size > 40 or not cards_ok(cards):
                raise _Off
            tricks.append(cards)
            pos = stop
        elif key == 0x08:
            number = _byte(data, pos + 1)
            pos += 2
        elif key == 0x22:
            start, pos = _stop(data, pos + 1, end)
            _annotation(data, start, pos, notes)
        else:
            raise _Off
    if pos != end or len(tricks) > 10:
        raise _Off
    out: dict[str, Any] = {"tricks": tricks} if number < 0 else {"tricks": tricks, "phaseNumber": number}
    if notes:
        out["playAnnotations"] = notes
    out["type"] = PLAY
    return out


def _phase(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    """A ``Phase``: exactly one bidding (field 1) or play (field 2) submessage."""
    key = data[pos]
    start, stop = _stop(data, pos + 1, end)
    if stop != end:
        raise _Off
    if key == 0x12:
        return _play(data, text, start, stop)
    if key == 0x0A:
        return _bidding(data, text, start, stop)
    raise _Off


def _state(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    hands: list[list[str]] = []
    dealer = up = None
    while pos < end:
        key = data[pos]
        if key == 0x22:
            start, pos = _stop(data, pos + 1, end)
            hands.append(_cards(text, start, pos))
        elif key == 0x08:
            dealer = _byte(data, pos + 1)
            pos += 2
        elif key == 0x12:
            start, pos = _stop(data, pos + 1, end)
            up = _ascii(text, start, pos)
        else:
            raise _Off
    if pos != end or len(hands) > 10:
        raise _Off
    out: dict[str, Any] = {"playerCards": hands}
    if dealer is not None:
        out["dealer"] = dealer
    if up is not None:
        out["upCard"] = up
    return out


def _line(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    phases: list[dict[str, Any]] = []
    branch = -1
    while pos < end:
        key = data[pos]
        if key == 0x12:
            start, pos = _stop(data, pos + 1, end)
            phases.append(_phase(data, text, start, pos))
        elif key == 0x08:
            branch = _byte(data, pos + 1)
            pos += 2
        else:
            raise _Off
    if pos != end or len(phases) > MAX_LINE_PHASES:
        raise _Off
    return {"phases": phases} if branch < 0 else {"phases": phases, "branchIndex": branch}


def _deal(data: bytes, text: str, pos: int, end: int) -> dict[str, Any]:
    phases: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    number = -1
    state: dict[str, Any] | None = None
    while pos < end:
        key = data[pos]
        if key == 0x1A:
            start, pos = _stop(data, pos + 1, end)
            phases.append(_phase(data, text, start, pos))
        elif key == 0x12:
            start, pos = _stop(data, pos + 1, end)
            state = _state(data, text, start, pos)
        elif key == 0x08:
            number = _byte(data, pos + 1)
            pos += 2
        elif key == 0x22:
            start, pos = _stop(data, pos + 1, end)
            lines.append(_line(data, text, start, pos))
        else:
            raise _Off
    if pos != end or len(phases) > 2 or len(lines) > 50:
        raise _Off
    out: dict[str, Any] = {"phases": phases, "alternativeLines": lines}
    if number >= 0:
        out["dealNumber"] = number
    if state is not None:
        out["initialState"] = state
    return out


def _ruleset(data: bytes, pos: int, end: int) -> dict[str, Any]:
    """A ``Ruleset`` of varint fields with one-byte values (every ruleset the reference writes).

    Fields 16 and up (``num_players``, ``num_deals``) have two-byte tags.
    """
    out: dict[str, Any] = {}
    while pos < end:
        key = data[pos]
        if key >= 0x80:
            pos += 1
            key = (key & 0x7F) | (_byte(data, pos) << 7)
        value = _byte(data, pos + 1)
        if key & 7 or key < 8:
            raise _Off
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
        raise _Off
    return out


def _metadata(data: bytes, pos: int, end: int) -> dict[str, Any]:
    """``Metadata`` with plain player names, one-byte scores and a plain ruleset."""
    single: dict[str, Any] = {}
    players: list[Any] = []
    initial: list[int] = []
    final: list[int] = []
    while pos < end:
        key = data[pos]
        if key == 0x22:
            start, pos = _stop(data, pos + 1, end)
            if data[start] != 0x0A:
                raise _Off
            start, stop = _stop(data, start + 1, pos)
            if stop != pos:
                raise _Off
            players.append(_utf8(data, start, stop))
        elif key == 0x28:
            initial.append(_byte(data, pos + 1))
            pos += 2
        elif key == 0x40:
            final.append(_byte(data, pos + 1))
            pos += 2
        elif key == 0x3A:
            start, pos = _stop(data, pos + 1, end)
            single["ruleset"] = _ruleset(data, start, pos)
        else:
            name = _META_STRINGS.get(key)
            if name is None:
                raise _Off
            start, pos = _stop(data, pos + 1, end)
            single[name] = _utf8(data, start, pos)
    if pos != end or len(players) > 10 or len(initial) > 2 or len(final) > 2:
        raise _Off
    out: dict[str, Any] = {"players": players, "initialScore": initial}
    if final:
        out["finalScore"] = final
    for name in _META_ORDER:
        if name in single:
            out[name] = single[name]
    return out


def read_file_fast(data: bytes, *, condensed: bool) -> dict[str, Any] | None:
    """The ``EgnFile`` message in ``data`` (magic byte removed), or ``None``.

    With ``condensed=True`` field 4 holds deal strings, returned as strings (the caller
    unpacks them); otherwise ``Deal`` messages, returned decoded.  ``None`` means "not the
    common shape": use the general reader.
    """
    text = data.decode("latin-1")
    end = len(data)
    pos = 0
    deals: list[Any] = []
    single: dict[str, Any] = {}
    try:
        while pos < end:
            key = data[pos]
            start, pos = _stop(data, pos + 1, end)
            if key == 0x22:
                if condensed:
                    deals.append(_ascii(text, start, pos))
                else:
                    deals.append(_deal(data, text, start, pos))
            elif key == 0x1A:
                single["metadata"] = _metadata(data, start, pos)
            elif key == 0x0A:
                single["fileType"] = _utf8(data, start, pos)
            elif key == 0x12:
                single["version"] = _utf8(data, start, pos)
            else:
                return None
    except (_Off, IndexError):
        return None
    if len(deals) > 100:
        return None
    out: dict[str, Any] = {"deals": deals}
    for name in ("fileType", "version", "metadata"):
        if name in single:
            out[name] = single[name]
    return out
