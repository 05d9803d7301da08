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
for the same bytes, key order included (``tests/codec/test_fastpath.py`` compares the two
on the fixtures and on mutated files).

Conventions inside: those of :mod:`engine.codec.fastwire` (absolute offsets, ``Off``,
``IndexError`` caught once at the top); the metadata is read by :mod:`engine.codec.fastmeta`.
"""

from __future__ import annotations

import re
from typing import Any

from ..fastcheck import CALLS as _CALLS
from ..model import MAX_DEALS
from .common import MAX_ANNOTATION_KEYS, MAX_LINE_PHASES
from .fastmeta import read_metadata_fast
from .fastwire import Off, ascii_text, byte, fields, span, text_field, utf8

__all__ = ["read_file_fast", "CARD_PAIRS", "Decoded"]

#: A decoded ``EgnFile``: (the document, whether its deals certainly pass the schema,
#: whether its metadata does).  Validation may skip what is vouched for.
Decoded = tuple[dict[str, Any], bool, bool]

BIDDING = "EUCHRE_BIDDING"
PLAY = "TRICK_PLAY"
SEP = "\n\x02"  # tag of field 1 (wire type 2) and length 2: what precedes every card
#: Every two-letter card spelling of the schema (ranks 7-A, N, X; suits, x t n g h).
CARD_PAIRS = frozenset(r + s for r in "78N9TJQKAX" for s in "SsHhCcDdxtngh")
_BID_ORDER = ("phaseNumber", "isAlone", "aloneDefender", "discard")


def _cards(text: str, start: int, stop: int) -> list[str]:
    """The cards of a ``CardList``/``Trick`` body made only of two-letter card fields."""
    chunk = text[start:stop]
    cards = chunk.split(SEP)
    if cards[0]:
        raise Off
    del cards[0]
    if len(chunk) != 4 * len(cards) or len(cards) > 10 or not CARD_PAIRS.issuperset(cards):
        raise Off
    return cards


_CARD = "[78N9TJQKAX][SsHhCcDdxtngh]"
#: Plain bidding: phaseNumber, calls, isAlone, aloneDefender (0-127, or -1 as the writers'
#: ten bytes), discard, in the writers' order.
_BIDDING = re.compile(
    "(?:\x08([\x00-\x7f]))?((?:\x12(?:\x04Pass|\x05Order|\x01[shdcnx]))*)"
    f"(?:\x18([\x00\x01]))?(?:\x20([\x00-\x7f]|\xff{{9}}\x01))?(?:\\*\x02({_CARD}))?"
)


def _trick(size: int, group: bool) -> str:
    card = f"\n\x02({_CARD})" if group else f"\n\x02{_CARD}"
    return "\x1a" + re.escape(chr(4 * size)) + card * size


#: Phase number, then tricks of valid cards of any size (the regular start of a play body).
_PLAY = re.compile(f"(?:\x08([\x00-\x7f]))?((?:{'|'.join(_trick(n, False) for n in range(11))})*)")
#: By the length byte of a trick of 2-10 cards: (a run of such tricks, the tuple of one's cards).
_UNIFORM = {4 * n: (re.compile(f"(?:{_trick(n, False)})*"), re.compile(_trick(n, True))) for n in range(2, 11)}
#: Plain initial state: dealer seat 0-9, up-card, hands all of five cards or all empty.
_STATE = re.compile(
    f"\x08([\x00-\x09])\x12\x02({_CARD})((?:{_trick(5, False).replace(chr(0x1A), chr(0x22), 1)})+|(?:\x22\x00)+)?"
)
_EMPTY_HAND = '"\x00'
#: Phase number, then tricks all of the same size, 1 to 10 valid cards (four first: the usual).
_PLAIN_PLAY = re.compile(f"\x08([\x00-\x7f])({'|'.join(f'(?:{_trick(n, False)})+' for n in (4, 3, 1, 2, 5, 6, 7, 8, 9, 10))})?")
_HAND_HEAD = '"\x14' + SEP  # a hand of five cards (field 4, 20 bytes) and its first card's tag
_CALL_NAMES = {"\x04Pass": "Pass", "\x05Order": "Order", **{f"\x01{s}": s for s in "shdcnx"}}
#: The cards of one trick of any size, as one string of "\n\x02"-separated cards.
_TRICK = re.compile(f"\x1a[{''.join(chr(4 * n) for n in range(11))}]((?:\n\x02{_CARD})*)")


#: The annotation keys 0-127 as the JSON's strings (made once, not per note).
_KEY_TEXTS = tuple(map(str, range(0x80)))


def _closed(out: dict[str, Any], key: str, notes: dict[str, list[str]], kind: str) -> dict[str, Any]:
    """``out`` with its annotations (when there are any) and its type: the reference's last keys."""
    if notes:
        out[key] = notes
    out["type"] = kind
    return out


class _Reader:
    """One file: its bytes, their Latin-1 text, and whether the deals read so far are
    certainly schema-valid (see :func:`read_file_fast`)."""

    __slots__ = ("data", "text", "certain")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.text = data.decode("latin-1")
        self.certain = True

    def annotation(self, pos: int, end: int, into: dict[str, list[str]]) -> None:
        """One ``map<int32, AnnotationList>`` entry: key field, then (optionally) the list."""
        data = self.data
        if data[pos] != 0x08:
            raise Off
        key = byte(data, pos + 1)
        pos += 2
        texts: list[str] = []
        if pos < end:
            if data[pos] != 0x12:
                raise Off
            pos, stop = span(data, pos + 1, end)
            if stop != end:
                raise Off
            whole = self.text
            while pos < end:
                if data[pos] != 0x0A:
                    raise Off
                size = data[pos + 1]
                if size < 0x80:  # a one-byte length (most notes): read inline, as in deal()
                    start = pos + 2
                    pos = start + size
                    if pos > end:
                        raise Off
                else:
                    start, pos = span(data, pos + 1, end)
                text = whole[start:pos]  # the Latin-1 slice is the text when it is ASCII
                if not text.isascii():
                    text = utf8(data, start, pos)
                if len(text) > 1024:
                    self.certain = False
                texts.append(text)
            if len(texts) > 50:
                raise Off
        elif pos > end:
            raise Off
        into[_KEY_TEXTS[key]] = texts
        if len(into) > MAX_ANNOTATION_KEYS:
            raise Off

    def notes(self, pos: int, end: int, tag: int) -> dict[str, list[str]] | None:
        """Annotation entries (field ``tag``) up to ``end``; ``None`` on any other field."""
        notes: dict[str, list[str]] = {}
        data = self.data
        while pos < end:
            if data[pos] != tag:
                return None
            start, pos = span(data, pos + 1, end)
            self.annotation(start, pos, notes)
        return notes

    def bidding(self, pos: int, end: int) -> dict[str, Any]:
        text = self.text
        m = _BIDDING.match(text, pos, end)  # every part is optional: it always matches
        if m is None:
            return self.general_bidding(pos, end)
        stop = m.end()
        notes = self.notes(stop, end, 0x3A) if stop != end else {}
        if notes is None:
            return self.general_bidding(pos, end)
        number, calls, alone, defender, discard = m.groups()
        # The pattern admitted only the calls' exact fields: split on their tags, name by table.
        names = list(map(_CALL_NAMES.__getitem__, calls.split("\x12")[1:]))
        if len(names) > 16:
            raise Off
        if number is not None and alone is not None and defender is None and not notes:
            # The usual bidding phase: built in one go, keys in the reference's order.
            if discard is None:
                return {"calls": names, "cardExchanges": [], "phaseNumber": ord(number), "isAlone": alone == "\x01", "type": BIDDING}
            return {
                "calls": names,
                "cardExchanges": [],
                "phaseNumber": ord(number),
                "isAlone": alone == "\x01",
                "discard": discard,
                "type": BIDDING,
            }
        # Built here in the reference's key order (what bidding_phase does from a dict).
        out: dict[str, Any] = {"calls": names, "cardExchanges": []}
        if number is not None:
            out["phaseNumber"] = ord(number)
        else:
            self.certain = False  # the schema needs a phase number
        if alone is not None:
            out["isAlone"] = alone == "\x01"
        if defender is not None:
            out["aloneDefender"] = ord(defender) if len(defender) == 1 else -1
        if discard is not None:
            out["discard"] = discard
        return _closed(out, "callAnnotations", notes, BIDDING)

    def general_bidding(self, pos: int, end: int) -> dict[str, Any]:
        data, text = self.data, self.text
        calls: list[str] = []
        exchanges: list[dict[str, Any]] = []
        single: dict[str, Any] = {}
        notes: dict[str, list[str]] = {}
        for key, a, b in fields(data, pos, end):
            if key == 0x12:
                calls.append(ascii_text(text, a, b))
            elif key == 0x32:
                exchanges.append(self.exchange(a, b))
            elif key == 0x08:
                single["phaseNumber"] = a
            elif key == 0x18:
                single["isAlone"] = a != 0
            elif key == 0x20:
                single["aloneDefender"] = a
            elif key == 0x2A:
                single["discard"] = ascii_text(text, a, b)
            elif key == 0x3A:
                self.annotation(a, b, notes)
            else:
                raise Off
        if not (_CALLS.issuperset(calls) and single.get("discard", "9s") in CARD_PAIRS):
            self.certain = False
        return self.bidding_phase(calls, exchanges, single, notes)

    def exchange(self, pos: int, end: int) -> dict[str, Any]:
        """A ``CardExchange``: sender, receiver (one-byte numbers), cards (ASCII strings)."""
        text = self.text
        cards: list[str] = []
        single: dict[str, int] = {}
        for key, a, b in fields(self.data, pos, end):
            if key == 0x1A:
                cards.append(ascii_text(text, a, b))
            elif key == 0x08:
                single["sender"] = a
            elif key == 0x10:
                single["receiver"] = a
            else:
                raise Off
        if len(cards) > 10:
            raise Off
        # The schema: a seat 0-9 for the receiver (required) and the sender, valid cards.
        if single.get("receiver", 10) > 9 or single.get("sender", 0) > 9 or not CARD_PAIRS.issuperset(cards):
            self.certain = False
        out: dict[str, Any] = {"cards": cards}
        if "sender" in single:
            out["sender"] = single["sender"]
        if "receiver" in single:
            out["receiver"] = single["receiver"]
        return out

    def bidding_phase(
        self, calls: list[str], exchanges: list[dict[str, Any]], single: dict[str, Any], notes: dict[str, list[str]]
    ) -> dict[str, Any]:
        """The bidding phase's JSON, keys in the reference's order (the schema needs a number)."""
        if len(calls) > 16 or len(exchanges) > 4:
            raise Off
        if "phaseNumber" not in single:
            self.certain = False
        out: dict[str, Any] = {"calls": calls, "cardExchanges": exchanges}
        for name in _BID_ORDER:
            if name in single:
                out[name] = single[name]
        return _closed(out, "callAnnotations", notes, BIDDING)

    def play(self, pos: int, end: int) -> dict[str, Any]:
        text = self.text
        m = _PLAIN_PLAY.match(text, pos, end)
        if m is not None:
            stop = m.end()
            notes = self.notes(stop, end, 0x22) if stop != end else None
            if stop == end or notes is not None:
                # Numbered, tricks all of one size: the pattern left no separator byte inside
                # a card and one trick head throughout, so splitting on that head, then on
                # the card tag, cuts exactly the fields.
                cards = m[2]
                tricks = [part.split(SEP) for part in cards.split(cards[:4])[1:]] if cards else []
                if len(tricks) <= 10:
                    if not notes:  # the usual play phase: built in one go, keys in the reference's order
                        return {"tricks": tricks, "phaseNumber": ord(m[1]), "type": PLAY}
                    return {"tricks": tricks, "phaseNumber": ord(m[1]), "playAnnotations": notes, "type": PLAY}
        return self.tricks_play(pos, end)

    def tricks_play(self, pos: int, end: int) -> dict[str, Any]:
        """A play body by the general patterns (tricks of any size, phase number optional)."""
        text = self.text
        m = _PLAY.match(text, pos, end)
        if m is None:
            return self.general_play(pos, end)
        start, stop = m.span(2)
        notes = self.notes(stop, end, 0x22)
        if notes is None:
            return self.general_play(pos, end)
        uniform = _UNIFORM.get(self.data[start + 1]) if start < stop else None
        if uniform is not None and uniform[0].fullmatch(text, start, stop):
            tricks = list(map(list, uniform[1].findall(text, start, stop)))
        else:
            tricks = [cards.split(SEP)[1:] for cards in _TRICK.findall(text, start, stop)]
        return self.play_phase(tricks, -1 if m[1] is None else ord(m[1]), notes)

    def general_play(self, pos: int, end: int) -> dict[str, Any]:
        data, text = self.data, self.text
        tricks: list[list[str]] = []
        number = -1
        notes: dict[str, list[str]] = {}
        for key, a, b in fields(data, pos, end):
            if key == 0x1A:
                tricks.append(_cards(text, a, b))
            elif key == 0x08:
                number = a
            elif key == 0x22:
                self.annotation(a, b, notes)
            else:
                raise Off
        return self.play_phase(tricks, number, notes)

    def play_phase(self, tricks: list[list[str]], number: int, notes: dict[str, list[str]]) -> dict[str, Any]:
        """The play phase's JSON (``number`` -1: no phase number, which the schema needs)."""
        if len(tricks) > 10:
            raise Off
        out: dict[str, Any] = {"tricks": tricks}
        if number >= 0:
            out["phaseNumber"] = number
        else:
            self.certain = False
        return _closed(out, "playAnnotations", notes, PLAY)

    def phase(self, pos: int, end: int) -> dict[str, Any]:
        """A ``Phase``: exactly one bidding (field 1) or play (field 2) submessage."""
        data = self.data
        key = data[pos]
        size = data[pos + 1]
        if size < 0x80 and size + pos + 2 == end:
            start, stop = pos + 2, end
        else:
            start, stop = span(data, pos + 1, end)
            if stop != end:
                raise Off
        if key == 0x12:
            return self.play(start, stop)
        if key == 0x0A:
            return self.bidding(start, stop)
        raise Off

    def state(self, pos: int, end: int) -> dict[str, Any]:
        text = self.text
        m = _STATE.fullmatch(text, pos, end)
        if m is not None:
            # Valid by construction: a seat 0-9, a card, hands of five valid cards (or empty).
            run = m[3]
            hands: list[list[str]]
            if not run:
                hands = []
            elif run.startswith(_EMPTY_HAND):
                hands = [[] for _ in range(len(run) // 2)]
            else:
                hands = [part.split(SEP) for part in run.split(_HAND_HEAD)[1:]]
            if len(hands) <= 10:
                return {"playerCards": hands, "dealer": ord(m[1]), "upCard": m[2]}
        return self.general_state(pos, end)

    def general_state(self, pos: int, end: int) -> dict[str, Any]:
        data, text = self.data, self.text
        hands: list[list[str]] = []
        dealer = up = None
        # Shaped like general_play's walk (any message's walk is): the fields differ.
        for key, a, b in fields(data, pos, end):
            if key == 0x22:
                hands.append(_cards(text, a, b))
            elif key == 0x08:
                dealer = a
            elif key == 0x12:
                up = ascii_text(text, a, b)
            else:
                raise Off
        if len(hands) > 10:
            raise Off
        out: dict[str, Any] = {"playerCards": hands}
        if dealer is not None and dealer <= 9 and up in CARD_PAIRS:
            out["dealer"] = dealer
            out["upCard"] = up
            return out
        self.certain = False
        if dealer is not None:
            out["dealer"] = dealer
        if up is not None:
            out["upCard"] = up
        return out

    def line(self, pos: int, end: int) -> dict[str, Any]:
        data = self.data
        phases: list[dict[str, Any]] = []
        branch = -1
        # Walked inline as in deal(): a line is a branch number and phases.
        while pos < end:
            key = data[pos]
            if key == 0x12:
                start, pos = span(data, pos + 1, end)
                # The phase header read inline as in deal() (lines hold a fifth of the phases).
                kind, size = data[start], data[start + 1]
                if size < 0x80 and size + start + 2 == pos:
                    if kind == 0x12:
                        phases.append(self.play(start + 2, pos))
                        continue
                    if kind == 0x0A:
                        phases.append(self.bidding(start + 2, pos))
                        continue
                phases.append(self.phase(start, pos))
            elif key == 0x08:
                branch = byte(data, pos + 1)
                pos += 2
            else:
                raise Off
        if pos != end or len(phases) > MAX_LINE_PHASES:
            raise Off
        if branch < 0:
            self.certain = False
            return {"phases": phases}
        if not phases:
            self.certain = False
        return {"phases": phases, "branchIndex": branch}

    def deal(self, pos: int, end: int) -> dict[str, Any]:
        data = self.data
        phases: list[dict[str, Any]] = []
        lines: list[dict[str, Any]] = []
        number = -1
        state: dict[str, Any] | None = None
        # The fields walked inline rather than by fields: a file is mostly deals, and the
        # generator costs a tenth of the whole read here.
        while pos < end:
            key = data[pos]
            if key == 0x08:
                number = byte(data, pos + 1)
                pos += 2
                continue
            size = data[pos + 1]
            if size < 0x80:  # a one-byte length (most fields): stop inline
                start = pos + 2
                pos = start + size
                if pos > end:
                    raise Off
            else:
                start, pos = span(data, pos + 1, end)
            if key == 0x1A:
                # The phase's one submessage, with a one-byte length filling it, read inline
                # (what phase() does, less a call per phase); anything else goes to phase().
                kind, size = data[start], data[start + 1]
                if size < 0x80 and size + start + 2 == pos:
                    if kind == 0x12:
                        phases.append(self.play(start + 2, pos))
                        continue
                    if kind == 0x0A:
                        phases.append(self.bidding(start + 2, pos))
                        continue
                phases.append(self.phase(start, pos))
            elif key == 0x12:
                state = self.state(start, pos)
            elif key == 0x22:
                lines.append(self.line(start, pos))
            else:
                raise Off
        if pos != end or len(phases) > 2 or len(lines) > 50:
            raise Off
        if number >= 0 and state is not None:
            return {"phases": phases, "alternativeLines": lines, "dealNumber": number, "initialState": state}
        out: dict[str, Any] = {"phases": phases, "alternativeLines": lines}
        if number >= 0:
            out["dealNumber"] = number
        else:
            self.certain = False
        if state is not None:
            out["initialState"] = state
        else:
            self.certain = False
        return out


def read_file_fast(data: bytes, *, condensed: bool) -> Decoded | None:
    """The ``EgnFile`` message in ``data`` (magic byte removed), whether its deals are
    certainly valid and whether its metadata is; ``None`` when it is not the common shape
    (use the general reader).

    With ``condensed=True`` field 4 holds deal strings, returned as strings (the caller
    unpacks them, so the flag is ``False``); otherwise ``Deal`` messages, returned decoded.

    The flag is ``True`` only when every deal passes the schema as it is: its values come
    from patterns that admit only valid cards, calls and small numbers, and every required
    field was on the wire.  The caller may then skip checking the deals (never the
    metadata or the header); ``tests/codec/test_fastpath.py`` checks that the fast
    acceptance check accepts every deal so flagged.  The metadata flag is
    :func:`~engine.codec.fastmeta.read_metadata_fast`'s (``False`` without metadata).
    """
    reader = _Reader(data)
    text = reader.text
    end = len(data)
    pos = 0
    deals: list[Any] = []
    single: dict[str, Any] = {}
    meta_certain = False
    try:
        while pos < end:
            key = data[pos]
            start, pos = span(data, pos + 1, end)
            if key == 0x22:
                if condensed:
                    deals.append(ascii_text(text, start, pos))
                else:
                    deals.append(reader.deal(start, pos))
            elif key == 0x1A:
                single["metadata"], meta_certain = read_metadata_fast(data, text, start, pos)
            elif key == 0x0A:
                single["fileType"] = text_field(data, text, start, pos)
            elif key == 0x12:
                single["version"] = text_field(data, text, start, pos)
            else:
                return None
    except (Off, IndexError):
        return None
    if len(deals) > MAX_DEALS:
        return None
    out: dict[str, Any] = {"deals": deals}
    for name in ("fileType", "version", "metadata"):
        if name in single:
            out[name] = single[name]
    return out, reader.certain and not condensed, meta_certain
