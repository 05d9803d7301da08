"""Condensed deal bitstreams: pack V1/V2/V3, unpack V3/V2/V1 with the legacy V0 fallback.

Layouts, version choice and the alternative-line conventions are spec sections 6 and 7.
The packer reproduces the reference's bits exactly, including where the reference writes
a stream it cannot read back (oversized fields, calls it cannot express): those bytes are
what other EGN tools exchange.  The unpacker follows the reference, except that a stream
whose only reading is the legacy fallback's garbage is refused (see :func:`unpack_deal`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import lshift
from typing import Any

from ..cards import SUIT_ORDER, card_name, deck
from ..errors import CodecError, Place
from ..fastcheck import CALLS
from .bitstream import WIDTHS, BitReader, BitWriter, ShortStream, b64url_decode, width
from .pool import card_position, index_fields, read_tricks
from .protobuf import js_utf8

__all__ = ["pack_deal", "unpack_deal", "unpack_deal_checked", "choose_version", "deck_for", "MIN_RANK_CODES"]

BIDDING = "EUCHRE_BIDDING"
PLAY = "TRICK_PLAY"

#: min_rank -> code in the V2/V3 header (spec 7.2); any other value uses code 0.
MIN_RANK_CODES = {9: 0, 8: 1, 7: 2, 6: 3}
_CODE_RANKS = {v: k for k, v in MIN_RANK_CODES.items()}
_SUITS = tuple(s.value for s in SUIT_ORDER)  # s, h, c, d
_DECKS: dict[int, tuple[str, ...]] = {
    code: tuple(card_name(c) for c in deck(rank)) for rank, code in MIN_RANK_CODES.items()
}
_INDEX = {code: {c: i for i, c in enumerate(cards)} for code, cards in _DECKS.items()}
END_MARKER = 0b1010
_MAX_POOL = len(WIDTHS)


def deck_for(code: int) -> tuple[str, ...]:
    """The full deck for a min-rank code, in the reference's order (s, h, c, d per rank)."""
    return _DECKS[code]


def _rank_code(ruleset: Mapping[str, Any]) -> int:
    rank = ruleset.get("min_rank", 9)
    return MIN_RANK_CODES.get(rank, 0) if isinstance(rank, int) and not isinstance(rank, bool) else 0


def choose_version(deal: Mapping[str, Any], ruleset: Mapping[str, Any]) -> int:
    """Which bitstream version the reference's converter writes for this deal (spec 6)."""
    biddings = [p for p in deal.get("phases") or () if isinstance(p, dict) and p.get("type") == BIDDING]
    alt_biddings = [
        p
        for line in deal.get("alternativeLines") or ()
        if isinstance(line, dict)
        for p in line.get("phases") or ()
        if isinstance(p, dict) and p.get("type") == BIDDING
    ]
    state = deal.get("initialState") or {}
    hands = state.get("playerCards")
    if any("discard" in p for p in biddings + alt_biddings) or (
        isinstance(hands, list) and any(isinstance(h, list) and h for h in hands)
    ):
        return 3
    players = ruleset.get("num_players", 4)
    rank = ruleset.get("min_rank", 9)
    dealer = state.get("dealer", 0)
    defender = any("aloneDefender" in p and p["aloneDefender"] != -1 for p in biddings)
    if players != 4 or rank != 9 or defender or (isinstance(dealer, int) and dealer >= 4):
        return 2
    return 1


# --- packing -----------------------------------------------------------------------------

#: (calls, first action index, players, up-card suit) -> (bits, bit count) of those calls.
_CALL_BITS: dict[tuple[tuple[str, ...], int, int, str], tuple[int, int]] = {}


class _Packer:
    def __init__(self, deal: Mapping[str, Any], ruleset: Mapping[str, Any], place: Place) -> None:
        self.deal = deal
        self.place = place
        self.version = choose_version(deal, ruleset)
        if self.version == 1:
            self.players, self.code = 4, 0
        else:
            players = ruleset.get("num_players", 4)
            if not isinstance(players, int) or isinstance(players, bool) or players < 1:
                raise CodecError(f"num_players {players!r} cannot be written in a deal stream", place)
            self.players, self.code = players, _rank_code(ruleset)
        self.deck = _DECKS[self.code]
        self.index = _INDEX[self.code]
        self.w = BitWriter()

    def fail(self, message: str, **where: Any) -> CodecError:
        return CodecError(message, self.place.with_(**where))

    def deck_index(self, card: Any, what: str, **where: Any) -> None:
        idx = self.index.get(card) if isinstance(card, str) else None
        if idx is None:
            raise self.fail(f"Card {card} not found in the deck ({what})", **where)
        self.w.write(idx, width(len(self.deck) - 1))

    def pack(self) -> str:
        deal, w = self.deal, self.w
        state = deal.get("initialState")
        if not isinstance(state, dict):
            raise self.fail("deal has no initialState")
        dealer = state.get("dealer")
        if not isinstance(dealer, int) or isinstance(dealer, bool):
            raise self.fail(f"dealer {dealer!r} is not a seat number")
        up = state.get("upCard")
        w.write(self.version, 4)
        if self.version == 1:
            w.write(dealer, 2)
        else:
            w.write(dealer, 3)
            w.write(self.players - 1, 3)
            w.write(self.code, 2)
        self.deck_index(up, "up-card")
        self.up_suit = str(up)[1]
        if self.version == 3:
            hands = state.get("playerCards")
            w.bit(isinstance(hands, list))
            if isinstance(hands, list):
                for seat in range(self.players):
                    hand = hands[seat] if seat < len(hands) and isinstance(hands[seat], list) else []
                    w.write(len(hand), 4)
                    for card in hand:
                        self.deck_index(card, f"playerCards of seat {seat}")
        phases = deal.get("phases") or []
        w.write(len(phases), 3)
        pool = list(self.deck)
        for i, phase in enumerate(phases):
            self.phase(phase, 0, pool, None, i)
        lines = deal.get("alternativeLines") or []
        w.bit(bool(lines))
        if lines:
            w.write(len(lines), 8)
            for n, line in enumerate(lines):
                branch = line.get("branchIndex") if isinstance(line, dict) else None
                if not isinstance(branch, int) or isinstance(branch, bool):
                    raise self.fail(f"branchIndex {branch!r} is not a number", line=n)
                w.write(branch, 16)
                alt_phases = line.get("phases") or []
                w.write(len(alt_phases), 4)
                alt_pool = _pool_before(self.deck, phases, branch)
                for i, phase in enumerate(alt_phases):
                    self.phase(phase, branch, alt_pool, n, i)
        w.write(END_MARKER, 4)
        return w.to_text()

    def phase(self, phase: Any, start: int, pool: list[str], line: int | None, index: int) -> None:
        loc = {"line": line, "phase": index}
        if not isinstance(phase, dict):
            raise self.fail(f"phase {phase!r} is not an object", **loc)
        kind = phase.get("type")
        if kind == BIDDING:
            self.w.bit(False)
            self.bidding(phase, start, loc)
        elif kind == PLAY:
            self.w.bit(True)
            self.play(phase, pool, loc)
        else:
            raise self.fail(f"unknown phase type {kind!r}", **loc)

    def bidding(self, phase: Mapping[str, Any], start: int, loc: dict[str, Any]) -> None:
        w = self.w
        loc = {**loc, "phase_type": BIDDING}
        calls = phase.get("calls") or ()
        # A few call sequences make up most biddings: their bits are cached.
        try:
            key = (tuple(calls), start, self.players, self.up_suit) if CALLS.issuperset(calls) else None
        except TypeError:  # an unhashable call: the loop below words the error
            key = None
        bits = _CALL_BITS.get(key) if key is not None else None
        if bits is None:
            sub = BitWriter()
            self.calls(sub, calls, start, loc)
            bits = sub.acc, sub.nbits
            if key is not None and len(_CALL_BITS) < 4096:
                _CALL_BITS[key] = bits
        w.acc = (w.acc << bits[1]) | bits[0]
        w.nbits += bits[1]
        alone = bool(phase.get("isAlone"))
        w.bit(alone)
        if self.version >= 2 and alone:
            defender = phase.get("aloneDefender")
            has = isinstance(defender, int) and not isinstance(defender, bool) and defender >= 0
            w.bit(has)
            if has:
                assert isinstance(defender, int)
                w.write(defender, 3)
        if self.version == 3:
            w.bit("discard" in phase)
            if "discard" in phase:
                self.deck_index(phase["discard"], "discard", **loc)
        self.annotations(phase.get("callAnnotations"), loc)

    def calls(self, w: BitWriter, calls: Any, start: int, loc: dict[str, Any]) -> None:
        players = self.players
        round2 = [s for s in _SUITS if s != self.up_suit]
        for i, call in enumerate(calls):
            if not isinstance(call, str):
                raise self.fail(f"call {call!r} is not a string", call=i, **loc)
            if start + i < players:
                w.bit(call != "Pass")
            else:
                # Calls the stream cannot express ('n', 'x', 'Order', the up-card suit) are
                # written as Pass, exactly as the reference does (quirks q01-q06).
                letter = call[:1].lower()
                w.write(round2.index(letter) + 1 if letter in round2 else 0, 2)

    def play(self, phase: Mapping[str, Any], pool: list[str], loc: dict[str, Any]) -> None:
        w = self.w
        loc = {**loc, "phase_type": PLAY}
        tricks = phase.get("tricks") or []
        w.write(len(tricks), 3)
        # Each card is its index in the pool of cards not yet played; the widths depend only
        # on the pool's size, so the indices are found first and written in one step.
        n = len(pool)
        indices: list[int] = []
        index, keep = pool.index, indices.append
        try:
            for trick in tricks:
                for card in trick if isinstance(trick, list) else ():
                    i = index(card)
                    del pool[i]
                    keep(i)
        except ValueError:
            t, c = card_position(tricks, len(indices))
            raise self.fail(f"Card {tricks[t][c]} not found in remaining cards", trick=t, card=c, **loc) from None
        fields = index_fields(n, len(indices))
        w.acc = (w.acc << fields.total) | sum(map(lshift, indices, fields.shifts))
        w.nbits += fields.total
        self.annotations(phase.get("playAnnotations"), loc)

    def annotations(self, annotations: Any, loc: dict[str, Any]) -> None:
        w = self.w
        if not isinstance(annotations, dict) or not annotations:
            w.bit(False)
            return
        w.bit(True)
        keys: list[tuple[int, str]] = []
        for key in annotations:
            if not (key.isascii() and key.isdigit()) or len(key) > 15:
                raise self.fail(f"annotation key {key!r} cannot be written", **loc)
            keys.append((int(key), key))
        keys.sort(key=lambda k: k[0])
        w.write(len(keys), 8)
        for number, _ in keys:
            # The reference looks the texts up again by the decimal spelling of the number,
            # so a key such as "00" is written with no texts (quirk q11).
            texts = annotations.get(str(number))
            texts = texts if isinstance(texts, list) else ([] if texts is None else [texts])
            w.write(number, 8)
            w.write(len(texts), 8)
            for text in texts:
                if not isinstance(text, str):
                    raise self.fail(f"annotation text {text!r} is not a string", **loc)
                raw = js_utf8(text)
                w.write(len(raw), 16)
                w.raw(raw)


def _pool_before(full: Sequence[str], phases: Sequence[Any], branch: int) -> list[str]:
    """Full deck minus the main-line cards played before ``branch`` actions (spec 7.2)."""
    pool = list(full)
    left = branch
    for phase in phases:
        if left <= 0 or not isinstance(phase, dict):
            break
        if phase.get("type") == BIDDING:
            left -= len(phase.get("calls") or ())
        elif phase.get("type") == PLAY:
            for trick in phase.get("tricks") or ():
                for card in trick if isinstance(trick, list) else ():
                    if left <= 0:
                        return pool
                    if card in pool:
                        pool.remove(card)
                    left -= 1
    return pool


def pack_deal(deal: Mapping[str, Any], ruleset: Mapping[str, Any], *, place: Place | None = None) -> str:
    """Pack one deal object into the base64url text the condensed file stores.

    Raises:
        CodecError: a card that is not a concrete deck card ("Card … not found"), a card
            played twice, or a value the stream cannot hold at all (negative numbers).
    """
    return _Packer(deal, ruleset, place or Place()).pack()


# --- unpacking ---------------------------------------------------------------------------


class _Fail(Exception):
    """Internal: this version's reading failed (the reference then tries V0)."""


@dataclass
class _Gov:
    """The governing bidding state of a line: decides the number of cards per trick."""

    alone: bool = False
    defender: bool = False

    def cards_per_trick(self, players: int) -> int:
        return players - (2 if self.alone and self.defender else 1 if self.alone else 0)


class _Unpacker:
    def __init__(self, r: BitReader, version: int) -> None:
        self.r = r
        self.version = version
        #: False once the deal holds something the schema refuses (see unpack_deal_checked).
        self.certain = True

    def card(self, cards: Sequence[str], n: int) -> str | None:
        idx = self.r.read(width(n - 1))
        return cards[idx] if idx < n else None

    def run(self, number: int) -> dict[str, Any]:
        r = self.r
        if self.version == 1:
            dealer = r.read(6) & 3  # version (4 bits), dealer (2)
            self.players, code = 4, 0
        elif r.pos + 12 <= r.end:
            head = r.read(12)  # version (4 bits), dealer (3), players - 1 (3), min-rank code (2)
            dealer, self.players, code = (head >> 5) & 7, ((head >> 2) & 7) + 1, head & 3
        else:  # a short stream fails at the field the reference fails at
            r.read(4)
            dealer = r.read(3)
            self.players = r.read(3) + 1
            code = r.read(2)
        self.deck = _DECKS[code]
        up = self.card(self.deck, len(self.deck))
        self.up = up
        state: dict[str, Any] = {"dealer": dealer}
        if up is not None:
            state["upCard"] = up
        else:
            self.certain = False
        if self.version == 3 and r.read(1):
            hands = []
            for _ in range(self.players):
                size = r.read(4)
                hand = [self.card(self.deck, len(self.deck)) for _ in range(size)]
                if size > 10 or None in hand:
                    self.certain = False
                hands.append(hand)
            state["playerCards"] = hands
        phases: list[dict[str, Any]] = []
        gov = _Gov()
        pool = list(self.deck)
        count = r.read(3)
        if count > 2:
            self.certain = False
        for i in range(count):
            phases.append(self.phase(i, 0, pool, gov, first_trick=None))
        deal: dict[str, Any] = {"dealNumber": number, "initialState": state, "phases": phases}
        if r.read(1):
            first_calls = next((len(p["calls"]) for p in phases if p["type"] == BIDDING), 0)
            lines = []
            nlines = r.read(8)
            if nlines > 50:
                self.certain = False
            for _ in range(nlines):
                branch = r.read(16)
                count = r.read(4)
                if not count:
                    self.certain = False
                line_gov = _Gov(gov.alone, gov.defender)
                line_pool = _pool_before(self.deck, phases, branch)
                alt: list[dict[str, Any]] = []
                for i in range(count):
                    first = None
                    if i == 0:
                        p = branch - first_calls
                        c = line_gov.cards_per_trick(self.players)
                        if p > 0 and c > 0 and p % c:
                            first = c - p % c
                    alt.append(self.phase(branch + i, branch, line_pool, line_gov, first_trick=first))
                lines.append({"branchIndex": branch, "phases": alt})
            deal["alternativeLines"] = lines
        if r.read(4) != END_MARKER:
            raise _Fail(f"no end marker at bit {r.pos - 4}")
        return deal

    def phase(
        self, number: int, start: int, pool: list[str], gov: _Gov, *, first_trick: int | None
    ) -> dict[str, Any]:
        if self.r.read(1) == 0:
            return self.bidding(number, start, gov)
        return self.play(number, pool, gov, first_trick)

    def bidding(self, number: int, start: int, gov: _Gov) -> dict[str, Any]:
        r, players = self.r, self.players
        calls = _read_calls(r, start, players, self.up)
        alone = bool(r.read(1))
        phase: dict[str, Any] = {"phaseNumber": number, "type": BIDDING, "calls": calls, "isAlone": alone}
        defender = False
        if self.version >= 2 and alone and r.read(1):
            phase["aloneDefender"] = r.read(3)
            defender = True
        if self.version == 3 and r.read(1):
            discard = self.card(self.deck, len(self.deck))
            if discard is not None:
                phase["discard"] = discard
        notes = self.annotations()
        if notes is not None:
            phase["callAnnotations"] = notes
        gov.alone, gov.defender = alone, defender
        return phase

    def play(self, number: int, pool: list[str], gov: _Gov, first_trick: int | None) -> dict[str, Any]:
        r = self.r
        per_trick = gov.cards_per_trick(self.players)
        count = r.read(3)
        tricks = read_tricks(r, pool, count, per_trick, first_trick)
        if tricks is None:
            tricks = self.tricks(pool, count, per_trick, first_trick)
            if any(None in trick for trick in tricks):
                self.certain = False
        phase: dict[str, Any] = {"phaseNumber": number, "type": PLAY, "tricks": tricks}
        notes = self.annotations()
        if notes is not None:
            phase["playAnnotations"] = notes
        return phase

    def tricks(self, pool: list[str], count: int, per_trick: int, first_trick: int | None) -> list[list[str | None]]:
        """The tricks card by card (any stream; an index past the pool reads as ``None``)."""
        r = self.r
        tricks: list[list[str | None]] = []
        value, end, pos = r.value, r.end, r.pos
        for t in range(count):
            size = first_trick if (t == 0 and first_trick is not None) else per_trick
            trick: list[str | None] = []
            for _ in range(size):
                n = len(pool)
                if not n:
                    break
                bits = WIDTHS[n] if n < _MAX_POOL else width(n - 1)
                stop = pos + bits
                if value >= 0 and stop <= end:
                    # Inlined BitReader.read on a short stream.
                    idx = (value >> (end - stop)) & ((1 << bits) - 1)
                    pos = stop
                else:
                    r.pos = pos
                    idx = r.read(bits)
                    pos = r.pos
                trick.append(pool.pop(idx) if idx < n else None)
            tricks.append(trick)
        r.pos = pos
        return tricks

    def annotations(self) -> dict[str, list[str]] | None:
        r = self.r
        if not r.read(1):
            return None
        out: dict[str, list[str]] = {}
        for _ in range(r.read(8)):
            key = r.read(8)
            texts = []
            for _ in range(r.read(8)):
                length = r.read(16)
                raw = r.read_bytes(length)
                try:
                    texts.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    raise _Fail(f"annotation text before bit {r.pos} is not UTF-8") from None
                if len(texts[-1]) > 1024:
                    self.certain = False
            if len(texts) > 50:
                self.certain = False
            out[str(key)] = texts
        return out


def _read_round_one(r: BitReader, seats: int) -> list[str]:
    """Round one bit by bit (a long stream, or one that may end inside the round)."""
    calls = []
    for _ in range(seats):
        if r.read(1):
            calls.append("Order")
            break
        calls.append("Pass")
    return calls


def _read_calls(r: BitReader, start: int, players: int, up: str | None) -> list[str]:
    calls: list[str] = []
    if start < players:
        seats = players - start
        if r.value >= 0 and r.pos + seats <= r.end:
            # Round one in one read: passes, then possibly an order (the first 1 bit).
            at = r.pos
            bits = r.read(seats)
            if bits:
                passes = seats - bits.bit_length()
                r.pos = at + passes + 1
                return ["Pass"] * passes + ["Order"]
            calls = ["Pass"] * seats
        else:
            calls = _read_round_one(r, seats)
            if calls[-1:] == ["Order"]:
                return calls
    for _ in range(max(0, start - players), players):
        v = r.read(2)
        if v == 0:
            calls.append("Pass")
            continue
        if up is None:
            raise _Fail("a round-2 suit refers to an undefined up-card")
        suits = [s for s in _SUITS if s != up[1]]
        if v > len(suits):
            raise _Fail(f"round-2 suit code {v} does not exist")
        calls.append(suits[v - 1])
        return calls
    return calls


def _unpack_v0(r: BitReader, number: int) -> tuple[dict[str, Any], bool]:
    """Legacy headerless reading.  Returns the deal and whether it ended on clean padding."""
    cards = _DECKS[0]
    dealer = r.read(2)
    idx = r.read(5)
    if idx >= len(cards):
        raise _Fail(f"legacy up-card index {idx} is outside the 24-card deck")
    up = cards[idx]
    deal: dict[str, Any] = {
        "dealNumber": number,
        "initialState": {"dealer": dealer, "upCard": up},
        "phases": [],
    }
    if r.remaining == 0 or r.rest_is_padding():
        return deal, True
    calls = _read_calls(r, 0, 4, up)
    alone = bool(r.read(1))
    deal["phases"].append({"phaseNumber": 0, "type": BIDDING, "calls": calls, "isAlone": alone})
    if r.remaining == 0 or r.rest_is_padding():
        return deal, True
    per_trick = 3 if alone else 4
    pool = list(cards)
    tricks: list[list[str]] = []
    current: list[str] = []
    clean = False
    while True:
        if not pool:
            clean = r.rest_is_padding()
            break
        if not current and r.rest_is_padding():
            clean = True
            break
        bits = width(len(pool) - 1)
        if r.remaining < bits:
            clean = r.rest_is_padding()
            break
        i = r.read(bits)
        if i >= len(pool):
            raise _Fail(f"legacy card index {i} is outside the {len(pool)} remaining cards")
        current.append(pool.pop(i))
        if len(current) == per_trick:
            tricks.append(current)
            current = []
    if current:
        tricks.append(current)
    deal["phases"].append({"phaseNumber": 1, "type": PLAY, "tricks": tricks})
    return deal, clean


_HEADERS = {0b0011: 3, 0b0010: 2, 0b0001: 1}


def unpack_deal(
    text: str, number: int, *, ruleset: Mapping[str, Any] | None = None, place: Place | None = None
) -> dict[str, Any]:
    """Unpack one base64url deal string (see :func:`unpack_deal_checked`)."""
    return unpack_deal_checked(text, number, ruleset=ruleset, place=place)[0]


def unpack_deal_checked(
    text: str, number: int, *, ruleset: Mapping[str, Any] | None = None, place: Place | None = None
) -> tuple[dict[str, Any], bool]:
    """Unpack one base64url deal string; ``number`` becomes its ``dealNumber``.

    Like the reference: header ``0011``/``0010``/``0001`` is read as V3/V2/V1, anything
    else (or a failed attempt) as the headerless legacy V0 layout.  Unlike the reference,
    a V0 reading is accepted only when it is a plausible legacy stream: it must end on
    zero padding, and the game must be one V0 can describe (4 players, 24 cards).  The
    reference returns whatever the fallback produced, which can be a schema-valid but
    wrong deal (quirk q09); we refuse instead of returning garbage silently.

    The flag is ``True`` when the deal certainly passes the schema: a V1-V3 reading whose
    every card index fell inside its pool and whose counts are within the schema's limits
    (calls, numbers and seats read from the stream are valid by construction).  Legacy V0
    readings are never flagged.

    Raises:
        CodecError: not base64, or no version reads the stream.
    """
    where = place or Place(deal=number)
    data = b64url_decode(text)
    header = data[0] >> 4 if data else -1
    version = _HEADERS.get(header)
    why = ""
    if version is not None:
        try:
            unpacker = _Unpacker(BitReader(data), version)
            return unpacker.run(number), unpacker.certain
        except (_Fail, ShortStream) as exc:
            why = f"not a valid V{version} stream ({exc})"
    try:
        deal, clean = _unpack_v0(BitReader(data), number)
    except (_Fail, ShortStream) as exc:
        lead = f"{why}; " if why else ""
        raise CodecError(f"{lead}not a legacy V0 stream either ({exc})", where) from None
    rules = ruleset or {}
    if rules.get("num_players", 4) != 4 or _rank_code(rules) != 0 or rules.get("min_rank", 9) != 9:
        lead = f"{why}; its" if why else "its"
        raise CodecError(
            f"{lead} legacy V0 reading cannot describe a game with num_players "
            f"{rules.get('num_players', 4)!r} and min_rank {rules.get('min_rank', 9)!r}",
            where,
        )
    if not clean:
        lead = f"{why}; its" if why else "its"
        raise CodecError(f"{lead} legacy V0 reading leaves undecoded bits (garbage)", where)
    return deal, False
