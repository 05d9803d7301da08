"""Packing a deal object into its condensed bitstream (V1/V2/V3, spec sections 6 and 7).

The packer reproduces the reference's bits exactly, including where the reference writes
a stream it cannot read back (oversized fields, calls it cannot express): those bytes are
what other EGN tools exchange.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import lshift
from typing import Any

from ..errors import CodecError, Place
from ..fastcheck import CALLS
from .bitstream import BitWriter, width
from .deal_layout import BIDDING, DECK_INDEX, DECKS, END_MARKER, PLAY, SUITS, choose_version, pool_before, rank_code
from .pool import card_position, index_fields
from .protobuf import js_utf8

__all__ = ["pack_deal"]

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
            self.players, self.code = players, rank_code(ruleset)
        self.deck = DECKS[self.code]
        self.index = DECK_INDEX[self.code]
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
                alt_pool = pool_before(self.deck, phases, branch)
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
        round2 = [s for s in SUITS if s != self.up_suit]
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


def pack_deal(deal: Mapping[str, Any], ruleset: Mapping[str, Any], *, place: Place | None = None) -> str:
    """Pack one deal object into the base64url text the condensed file stores.

    Raises:
        CodecError: a card that is not a concrete deck card ("Card … not found"), a card
            played twice, or a value the stream cannot hold at all (negative numbers).
    """
    return _Packer(deal, ruleset, place or Place()).pack()
