"""Unpacking a condensed deal stream: V3/V2/V1 by its header, with the legacy V0 fallback
(spec sections 6 and 7).

The unpacker follows the reference, except that a stream whose only reading is the legacy
fallback's garbage is refused (see :func:`unpack_deal_checked`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import CodecError, Place
from .bitstream import WIDTHS, BitReader, ShortStream, b64url_decode, width
from .deal_layout import BIDDING, DECKS, END_MARKER, MAX_POOL, PLAY, SUITS, pool_before, rank_code
from .pool import read_tricks

__all__ = ["unpack_deal", "unpack_deal_checked"]

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
    __slots__ = ("r", "version", "certain", "players", "deck", "up")

    def __init__(self, r: BitReader, version: int) -> None:
        self.r = r
        self.version = version
        #: False once the deal holds something the schema refuses (see unpack_deal_checked).
        self.certain = True

    def card(self, cards: Sequence[str], n: int) -> str | None:
        idx = self.r.read(WIDTHS[n] if n < MAX_POOL else width(n - 1))
        return cards[idx] if idx < n else None

    def head(self) -> tuple[int, int]:
        """Read version, dealer, (players, min-rank code,) up-card; set ``deck``, ``up``,
        ``players``.  Returns the dealer and the phase count when it was read too (V1 in one
        read of 14 bits: version 4, dealer 2, up-card 5, phase count 3), else -1."""
        r = self.r
        if self.version == 1:
            self.players, self.deck = 4, DECKS[0]
            if r.value >= 0 and r.end >= 14:
                head = r.value >> (r.end - 14)
                r.pos = 14
                up = (head >> 3) & 31
                self.up = self.deck[up] if up < 24 else None
                return (head >> 8) & 3, head & 7
            dealer = r.read(6) & 3  # version (4 bits), dealer (2)
        elif r.pos + 12 <= r.end:
            head = r.read(12)  # version (4 bits), dealer (3), players - 1 (3), min-rank code (2)
            dealer, self.players, self.deck = (head >> 5) & 7, ((head >> 2) & 7) + 1, DECKS[head & 3]
        else:  # a short stream fails at the field the reference fails at
            r.read(4)
            dealer = r.read(3)
            self.players = r.read(3) + 1
            self.deck = DECKS[r.read(2)]
        self.up = self.card(self.deck, len(self.deck))
        return dealer, -1

    def run(self, number: int) -> dict[str, Any]:
        r = self.r
        read = r.read
        dealer, count = self.head()
        up = self.up
        state: dict[str, Any] = {"dealer": dealer}
        if up is not None:
            state["upCard"] = up
        else:
            self.certain = False
        if count < 0:
            if self.version == 3 and read(1):
                hands = []
                deck = self.deck
                for _ in range(self.players):
                    size = read(4)
                    hand = [self.card(deck, len(deck)) for _ in range(size)]
                    if size > 10 or None in hand:
                        self.certain = False
                    hands.append(hand)
                state["playerCards"] = hands
            count = read(3)
        phases: list[dict[str, Any]] = []
        gov = _Gov()
        pool = list(self.deck)
        if count > 2:
            self.certain = False
        for i in range(count):
            phases.append(self.play(i, pool, gov, None) if read(1) else self.bidding(i, 0, gov))
        deal: dict[str, Any] = {"dealNumber": number, "initialState": state, "phases": phases}
        if read(1):
            deal["alternativeLines"] = self.lines(phases, gov)
        if read(4) != END_MARKER:
            raise _Fail(f"no end marker at bit {r.pos - 4}")
        return deal

    def lines(self, phases: list[dict[str, Any]], gov: _Gov) -> list[dict[str, Any]]:
        r = self.r
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
            line_pool = pool_before(self.deck, phases, branch)
            alt: list[dict[str, Any]] = []
            for i in range(count):
                first = None
                if i == 0:
                    p = branch - first_calls
                    c = line_gov.cards_per_trick(self.players)
                    if p > 0 and c > 0 and p % c:
                        first = c - p % c
                if r.read(1):
                    alt.append(self.play(branch + i, line_pool, line_gov, first))
                else:
                    alt.append(self.bidding(branch + i, branch, line_gov))
            lines.append({"branchIndex": branch, "phases": alt})
        return lines

    def bidding(self, number: int, start: int, gov: _Gov) -> dict[str, Any]:
        r = self.r
        calls = _read_calls(r, start, self.players, self.up)
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
        if r.read(1):
            phase["callAnnotations"] = self.annotations()
        gov.alone, gov.defender = alone, defender
        return phase

    def play(self, number: int, pool: list[str], gov: _Gov, first_trick: int | None) -> dict[str, Any]:
        r = self.r
        per_trick = self.players - (2 if gov.alone and gov.defender else 1 if gov.alone else 0)
        count = r.read(3)
        tricks = read_tricks(r, pool, count, per_trick, first_trick)
        if tricks is None:
            tricks = self.tricks(pool, count, per_trick, first_trick)
            if any(None in trick for trick in tricks):
                self.certain = False
        phase: dict[str, Any] = {"phaseNumber": number, "type": PLAY, "tricks": tricks}
        if r.read(1):
            phase["playAnnotations"] = self.annotations()
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
                bits = WIDTHS[n] if n < MAX_POOL else width(n - 1)
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

    def annotations(self) -> dict[str, list[str]]:
        """A phase's annotations (its flag bit, read by the caller, was set)."""
        r = self.r
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
        suits = [s for s in SUITS if s != up[1]]
        if v > len(suits):
            raise _Fail(f"round-2 suit code {v} does not exist")
        calls.append(suits[v - 1])
        return calls
    return calls


def _unpack_v0(r: BitReader, number: int) -> tuple[dict[str, Any], bool]:
    """Legacy headerless reading.  Returns the deal and whether it ended on clean padding."""
    cards = DECKS[0]
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
        raise CodecError(f"{lead}not a legacy V0 stream either ({exc})", place or Place(deal=number)) from None
    rules = ruleset or {}
    if rules.get("num_players", 4) != 4 or rank_code(rules) != 0 or rules.get("min_rank", 9) != 9:
        lead = f"{why}; its" if why else "its"
        raise CodecError(
            f"{lead} legacy V0 reading cannot describe a game with num_players "
            f"{rules.get('num_players', 4)!r} and min_rank {rules.get('min_rank', 9)!r}",
            place or Place(deal=number),
        )
    if not clean:
        lead = f"{why}; its" if why else "its"
        raise CodecError(f"{lead} legacy V0 reading leaves undecoded bits (garbage)", place or Place(deal=number))
    return deal, False
