"""The expanded binary form (magic ``0x00``, ``egn-expanded.proto``) and the condensed envelope.

Both forms are an ``egn.EgnFile`` message; they differ in field 4 (``deals``): ``Deal``
messages here, base64url strings in the condensed form (spec 5.3, 5.4).  Decoded JSON keeps
the reference's shape (protobufjs ``toObject`` with arrays materialised): every repeated
field present, singular fields only when they were on the wire, and keys in the same order
the reference prints them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import CodecError, EgnError, Place
from ..model import MAX_DEALS
from .common import MAX_LINE_PHASES, cap, read_annotations, read_metadata, relocate, write_annotations, write_metadata
from .fastread import CARD_PAIRS, Decoded, read_file_fast
from .protobuf import SHORT_STRINGS, Writer, as_bool, as_bytes, as_int32, decode_str, read_fields

__all__ = ["write_file", "read_file", "write_deal", "read_deal", "read_expanded"]

BIDDING = "EUCHRE_BIDDING"
PLAY = "TRICK_PLAY"


def _opt_int(w: Writer, number: int, obj: Mapping[str, Any], key: str) -> None:
    if obj.get(key) is not None:
        w.int32(number, obj[key])


def _cards(w: Writer, number: int, cards: Any, what: str) -> None:
    buf, short = w.buf, SHORT_STRINGS
    for card in cards or ():
        encoded = short.get((number, card)) if type(card) is str else None
        if encoded is not None:
            buf += encoded
        else:
            w.string(number, card) if isinstance(card, str) else _bad(what, card)


def _bad(what: str, value: Any) -> None:
    raise CodecError(f"{what} {value!r} is not a card string")


#: The encoded field 1 (tag 0x0a, length 2, text) of every two-letter card spelling.
_CARD_FIELDS = {card: b"\x0a\x02" + card.encode() for card in CARD_PAIRS}


def _card_list(outer: Writer, number: int, cards: Any, what: str) -> None:
    """A ``CardList``/``Trick`` message as field ``number`` (< 16) of ``outer``."""
    if type(cards) is list and len(cards) < 32:
        # Two-letter cards (nearly all): one join; the message and its length fit a byte.
        try:
            payload = b"".join(map(_CARD_FIELDS.__getitem__, cards))
        except (KeyError, TypeError):
            pass
        else:
            outer.buf += bytes(((number << 3) | 2, len(payload))) + payload
            return
    sub = Writer()
    if not isinstance(cards, list):
        raise CodecError(f"{what} {cards!r} is not a list of cards")
    _cards(sub, 1, cards, what)
    outer.message(number, sub)


#: Tag (field 3, wire type 2) and length byte of a trick of 0-31 cards.
_TRICK_HEADS = tuple(bytes((0x1A, 4 * n)) for n in range(32))
_LIST_ONLY = frozenset((list,)).issuperset


def _plain_tricks(body: Writer, tricks: Any) -> bool:
    """Write every trick at once when all are lists of up to 31 two-letter cards."""
    if type(tricks) is not list or not _LIST_ONLY(map(type, tricks)) or max(map(len, tricks), default=0) > 31:
        return False
    card = _CARD_FIELDS.__getitem__
    try:
        body.buf += b"".join([_TRICK_HEADS[len(t)] + b"".join(map(card, t)) for t in tricks])
    except (KeyError, TypeError):
        return False
    return True


def _write_phase(phase: Any) -> Writer:
    if not isinstance(phase, dict):
        raise CodecError(f"phase {phase!r} is not an object")
    kind = phase.get("type")
    body = Writer()
    _opt_int(body, 1, phase, "phaseNumber")
    if kind == BIDDING:
        for call in phase.get("calls") or ():
            body.string(2, call)
        if phase.get("isAlone") is not None:
            body.bool(3, phase["isAlone"])
        _opt_int(body, 4, phase, "aloneDefender")
        if phase.get("discard") is not None:
            body.string(5, phase["discard"])
        for ex in phase.get("cardExchanges") or ():
            if not isinstance(ex, dict):
                raise CodecError(f"card exchange {ex!r} is not an object")
            xw = Writer()
            _opt_int(xw, 1, ex, "sender")
            _opt_int(xw, 2, ex, "receiver")
            _cards(xw, 3, ex.get("cards"), "exchanged card")
            body.message(6, xw)
        write_annotations(body, 7, phase.get("callAnnotations"))
        number = 1
    elif kind == PLAY:
        tricks = phase.get("tricks") or ()
        if not _plain_tricks(body, tricks):
            for trick in tricks:
                _card_list(body, 3, trick, "trick")
        write_annotations(body, 4, phase.get("playAnnotations"))
        number = 2
    else:
        raise CodecError(f"unknown phase type {kind!r}")
    w = Writer()
    w.message(number, body)
    return w


def write_deal(deal: Mapping[str, Any]) -> Writer:
    """One ``Deal`` message.

    Raises:
        CodecError: a value of the wrong type.
    """
    w = Writer()
    _opt_int(w, 1, deal, "dealNumber")
    state = deal.get("initialState")
    if state is not None:
        if not isinstance(state, dict):
            raise CodecError("initialState is not an object")
        sw = Writer()
        _opt_int(sw, 1, state, "dealer")
        if state.get("upCard") is not None:
            sw.string(2, state["upCard"])
        for hand in state.get("playerCards") or ():
            _card_list(sw, 4, hand, "hand")
        w.message(2, sw)
    for i, phase in enumerate(deal.get("phases") or ()):
        try:
            w.message(3, _write_phase(phase))
        except EgnError as exc:
            raise relocate(exc, phase=i) from None
    for n, line in enumerate(deal.get("alternativeLines") or ()):
        if not isinstance(line, dict):
            raise CodecError(f"alternative line {line!r} is not an object", Place(line=n))
        lw = Writer()
        _opt_int(lw, 1, line, "branchIndex")
        for i, phase in enumerate(line.get("phases") or ()):
            try:
                lw.message(2, _write_phase(phase))
            except EgnError as exc:
                raise relocate(exc, line=n, phase=i) from None
        w.message(4, lw)
    return w


DealWriter = Callable[[int, Any], "Writer | str"]


def write_file(doc: Mapping[str, Any], deal: DealWriter) -> bytes:
    """The ``EgnFile`` message (without magic byte); ``deal(i, d)`` renders field 4 entries.

    Raises:
        CodecError: a value of the wrong type (with the deal index in its place).
    """
    w = Writer()
    if doc.get("fileType") is not None:
        w.string(1, doc["fileType"])
    if doc.get("version") is not None:
        w.string(2, doc["version"])
    meta = doc.get("metadata")
    if meta is not None:
        if not isinstance(meta, dict):
            raise CodecError("metadata is not an object")
        w.message(3, write_metadata(meta))
    for i, d in enumerate(doc.get("deals") or ()):
        try:
            item = deal(i, d)
        except EgnError as exc:
            raise relocate(exc, deal=i) from None
        if isinstance(item, str):
            w.string(4, item)
        else:
            w.message(4, item)
    return w.getvalue()


# --- reading -----------------------------------------------------------------------------


def _card_strings(data: bytes, base: int, what: str) -> list[str]:
    out = []
    for f in read_fields(data, base=base):
        if f.number == 1:
            out.append(decode_str(f, what))
            cap(out, 10, "cards")
    return out


def _read_phase(data: bytes, base: int) -> dict[str, Any]:
    found: dict[str, Any] | None = None
    for f in read_fields(data, base=base):
        if f.number == 1:
            found = _read_bidding(as_bytes(f, "bidding phase"), f.offset)
        elif f.number == 2:
            found = _read_play(as_bytes(f, "trick-play phase"), f.offset)
    if found is None:
        raise CodecError(f"phase at byte {base} is neither bidding nor trick play")
    return found


def _read_bidding(data: bytes, base: int) -> dict[str, Any]:
    calls: list[str] = []
    exchanges: list[dict[str, Any]] = []
    notes: dict[str, list[str]] = {}
    single: dict[str, Any] = {}
    for f in read_fields(data, base=base):
        n = f.number
        if n == 1:
            single["phaseNumber"] = as_int32(f, "phaseNumber")
        elif n == 2:
            calls.append(decode_str(f, "call"))
            cap(calls, 16, "calls")
        elif n == 3:
            single["isAlone"] = as_bool(f, "isAlone")
        elif n == 4:
            single["aloneDefender"] = as_int32(f, "aloneDefender")
        elif n == 5:
            single["discard"] = decode_str(f, "discard")
        elif n == 6:
            exchanges.append(_read_exchange(as_bytes(f, "card exchange"), f.offset))
            cap(exchanges, 4, "cardExchanges")
        elif n == 7:
            read_annotations(f, notes)
    # Key order as protobufjs prints it: arrays, singular fields, maps; the reference adds type.
    out: dict[str, Any] = {"calls": calls, "cardExchanges": exchanges}
    out.update(_ordered(single, ("phaseNumber", "isAlone", "aloneDefender", "discard")))
    if notes:
        out["callAnnotations"] = notes
    out["type"] = BIDDING
    return out


def _ordered(single: Mapping[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    return {k: single[k] for k in order if k in single}


def _read_exchange(data: bytes, base: int) -> dict[str, Any]:
    cards: list[str] = []
    single: dict[str, Any] = {}
    for f in read_fields(data, base=base):
        if f.number == 1:
            single["sender"] = as_int32(f, "sender")
        elif f.number == 2:
            single["receiver"] = as_int32(f, "receiver")
        elif f.number == 3:
            cards.append(decode_str(f, "exchanged card"))
            cap(cards, 10, "exchanged cards")
    return {"cards": cards, **_ordered(single, ("sender", "receiver"))}


def _read_play(data: bytes, base: int) -> dict[str, Any]:
    tricks: list[list[str]] = []
    notes: dict[str, list[str]] = {}
    single: dict[str, Any] = {}
    for f in read_fields(data, base=base):
        if f.number == 1:
            single["phaseNumber"] = as_int32(f, "phaseNumber")
        elif f.number == 3:
            tricks.append(_card_strings(as_bytes(f, "trick"), f.offset, "card"))
            cap(tricks, 10, "tricks")
        elif f.number == 4:
            read_annotations(f, notes)
    out: dict[str, Any] = {"tricks": tricks, **single}
    if notes:
        out["playAnnotations"] = notes
    out["type"] = PLAY
    return out


def _read_state(data: bytes, base: int) -> dict[str, Any]:
    hands: list[list[str]] = []
    state: dict[str, Any] = {}
    for g in read_fields(data, base=base):
        if g.number == 1:
            state["dealer"] = as_int32(g, "dealer")
        elif g.number == 2:
            state["upCard"] = decode_str(g, "upCard")
        elif g.number == 4:
            hands.append(_card_strings(as_bytes(g, "hand"), g.offset, "card"))
            cap(hands, 10, "playerCards")
    return {"playerCards": hands, **_ordered(state, ("dealer", "upCard"))}


def read_deal(data: bytes, base: int) -> dict[str, Any]:
    """One ``Deal`` message in the reference's decoded JSON shape.

    Raises:
        CodecError: malformed message.
    """
    phases: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    single: dict[str, Any] = {}
    for f in read_fields(data, base=base):
        n = f.number
        if n == 1:
            single["dealNumber"] = as_int32(f, "dealNumber")
        elif n == 2:
            single["initialState"] = _read_state(as_bytes(f, "initialState"), f.offset)
        elif n == 3:
            try:
                phases.append(_read_phase(as_bytes(f, "phase"), f.offset))
                cap(phases, 2, "phases")
            except EgnError as exc:
                raise relocate(exc, phase=len(phases)) from None
        elif n == 4:
            line_phases: list[dict[str, Any]] = []
            branch: dict[str, Any] = {}
            for g in read_fields(as_bytes(f, "alternative line"), base=f.offset):
                if g.number == 1:
                    branch["branchIndex"] = as_int32(g, "branchIndex")
                elif g.number == 2:
                    try:
                        line_phases.append(_read_phase(as_bytes(g, "phase"), g.offset))
                        cap(line_phases, MAX_LINE_PHASES, "alternative line phases", schema=False)
                    except EgnError as exc:
                        raise relocate(exc, line=len(lines), phase=len(line_phases)) from None
            lines.append({"phases": line_phases, **branch})
            cap(lines, 50, "alternativeLines")
    return {"phases": phases, "alternativeLines": lines, **_ordered(single, ("dealNumber", "initialState"))}


DealReader = Callable[[int, "bytes", int], Any]


def read_file(data: bytes, base: int, deal: DealReader) -> dict[str, Any]:
    """Decode an ``EgnFile`` message; ``deal(index, payload, offset)`` decodes field 4 entries.

    Raises:
        CodecError: malformed message (its place names the deal when inside one).
    """
    deals: list[Any] = []
    single: dict[str, Any] = {}
    for f in read_fields(data, base=base):
        n = f.number
        if n == 1:
            single["fileType"] = decode_str(f, "fileType")
        elif n == 2:
            single["version"] = decode_str(f, "version")
        elif n == 3:
            single["metadata"] = read_metadata(as_bytes(f, "metadata"), f.offset)
        elif n == 4:
            index = len(deals)
            try:
                deals.append(deal(index, as_bytes(f, "deal"), f.offset))
                cap(deals, MAX_DEALS, "deals")
            except EgnError as exc:
                raise relocate(exc, deal=index) from None
    return {"deals": deals, **_ordered(single, ("fileType", "version", "metadata"))}


def read_expanded(data: bytes, base: int) -> Decoded:
    """Decode an expanded ``EgnFile`` message (without magic byte; ``base`` = its offset).

    The one-pass reader of :mod:`engine.codec.fastread` takes the common shape; anything
    else (and every error) is the general reader's.  The flags say whether every deal and
    the metadata are certainly schema-valid (see :func:`~engine.codec.fastread.read_file_fast`).

    Raises:
        CodecError, SchemaError: see :func:`read_file`.
    """
    fast = read_file_fast(data, condensed=False)
    if fast is not None:
        return fast
    return read_file(data, base, lambda _i, payload, offset: read_deal(payload, offset)), False, False
