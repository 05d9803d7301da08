"""Who played each card: a trick-play phase laid out before any hand is walked.

The file writes each trick's cards in table order from its leader, and the winner of a
full trick leads the next; so the seat of every card follows from trump, the seats that
sit out and the first leader alone.  The deal replay (:mod:`engine.deal`) lays the play
out first, back-calculates the hands missing from ``playerCards`` from it, then walks the
cards with the hands known.  Pure: values in, a :class:`Layout` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

from .cards import Card, Suit, effective_suit, parse_card, resolve, trick_power
from .rules import Table

__all__ = ["HAND_SIZE", "Layout", "Resolved", "lay_out", "card_of", "memo_for", "resolved"]

#: Cards dealt to each player (and tricks in a deal), whatever the ruleset.
HAND_SIZE: Final = 5

#: What :func:`resolved` remembers of a card under one trump: the card with trump-relative
#: notation resolved, the suit it follows, its power as a trump and in a trick of its suit.
Resolved = tuple[Card, Suit | None, int, int]

# Bounded memos: validated card texts x five trump values; tables of at most 10 seats.
# ``Final`` here and on the other module-level names the replay reads: a compiled module
# (engine.native) keeps them in C variables instead of looking them up by name each time.
_CARDS: Final[dict[str, Card]] = {}
_RESOLVED: Final[dict[Suit | None, dict[str, Resolved]]] = {trump: {} for trump in (None, *Suit)}
_ORDERS: Final[dict[tuple[int, frozenset[int]], tuple[tuple[int, ...], ...]]] = {}
_CARD: Final = itemgetter(0)  # of a :data:`Resolved`
_SUIT: Final = itemgetter(1)


def card_of(text: str) -> Card:
    """``parse_card`` for validated text, remembered (a game names the same few cards)."""
    card = _CARDS.get(text)
    if card is None:
        card = _CARDS[text] = parse_card(text)
    return card


def resolved(text: str, trump: Suit | None) -> Resolved:
    """The card a validated text names under ``trump``, the suit it follows and its powers (remembered).

    The powers are :func:`~engine.cards.trick_power` worked out once per card and trump:
    as a trump (0 if it is none) and in a trick led in its own suit.  In a trick led in
    ``led`` the card's power is the first if not 0, else the second if its suit is
    ``led``, else 0: exactly ``trick_power(card, trump, led)``, since a card that is not a
    trump can only win by following the led suit.
    """
    memo = _RESOLVED[trump]
    hit = memo.get(text)
    if hit is None:
        card = resolve(card_of(text), trump)
        suit = effective_suit(card, trump)
        hit = memo[text] = (card, suit, trick_power(card, trump, None), trick_power(card, trump, suit) if suit is not None else 0)
    return hit


def memo_for(trump: Suit | None) -> dict[str, Resolved]:
    """What :func:`resolved` has remembered under ``trump``, by card text: a hot loop reads
    it with ``memo.get(text) or resolved(text, trump)`` and saves a call per card (a dict,
    not a read-only ``Mapping``: compiled, ``dict.get`` is a C call, a mapping's a method lookup)."""
    return _RESOLVED[trump]


def _orders(table: Table, sit_out: frozenset[int]) -> tuple[tuple[int, ...], ...]:
    """Per seat: the playing seats clockwise from it (remembered per table and sitters-out)."""
    key = (table.players, sit_out)
    orders = _ORDERS.get(key)
    if orders is None:
        orders = _ORDERS[key] = tuple(tuple(table.order_from(lead, sit_out)) for lead in range(table.players))
    return orders


@dataclass(slots=True)
class Layout:
    """The seat, resolved card and effective suit of every card of a play phase, per trick."""

    leaders: tuple[int, ...]
    orders: tuple[tuple[int, ...], ...]  # per trick: the playing seats from its leader
    seats: tuple[tuple[int, ...], ...]  # per trick: the seat of each card played
    cards: tuple[tuple[Card, ...], ...]  # per trick: the cards, trump-relative notation resolved
    suits: tuple[tuple[Suit | None, ...], ...]  # per trick: each card's effective suit
    winners: tuple[int | None, ...]  # per trick: position of the winning card among a full row
    played_by: dict[int, list[Card]]  # per seat: the cards it played, in order
    complete: bool  # every one of the HAND_SIZE tricks is recorded in full


def lay_out(tricks: Sequence[Sequence[str]], table: Table, trump: Suit | None, sit_out: frozenset[int], first_leader: int) -> Layout:
    """Seat of every card, trick by trick: a full trick's winner leads the next.

    Cards past the number of playing seats are left out.  A trick nobody can judge goes
    to its leader; after a short trick the next is led from ``first_leader`` again.
    """
    per_trick = table.players - len(sit_out)
    leader: int | None = first_leader
    leaders: list[int] = []
    orders: list[tuple[int, ...]] = []
    played_seats: list[tuple[int, ...]] = []
    played_cards: list[tuple[Card, ...]] = []
    played_suits: list[tuple[Suit | None, ...]] = []
    winners: list[int | None] = []
    by_seat: list[list[Card]] = [[] for _ in range(table.players)]
    memo = _RESOLVED[trump]
    orders_from = _orders(table, sit_out)
    memo_get = memo.get
    for trick in tricks:
        lead = leader if leader is not None else first_leader
        leaders.append(lead)
        seats = orders_from[lead]
        orders.append(seats)
        n = len(trick)
        part = trick if n <= per_trick else trick[:per_trick]
        # the memo read in C (map), a card it has not seen yet resolved after; no
        # comprehension: on Python 3.11 each one is a function call
        rows: list[Any] = list(map(memo_get, part))  # Resolved, or None where the memo has not seen the card
        if None in rows:
            rows = [row or resolved(c, trump) for row, c in zip(rows, part)]
        cards = tuple(map(_CARD, rows))
        played_cards.append(cards)
        played_suits.append(tuple(map(_SUIT, rows)))
        played_seats.append(seats if n >= len(seats) else seats[:n])
        w = _winner(rows) if n >= per_trick else None
        winners.append(w)
        leader = seats[w if w is not None else 0] if n == per_trick else None
        for seat, card in zip(seats, cards):
            by_seat[seat].append(card)
    complete = len(tricks) >= HAND_SIZE and set(map(len, tricks[:HAND_SIZE])) == {per_trick}
    played_by = {seat: cards for seat, cards in enumerate(by_seat) if cards}
    return Layout(tuple(leaders), tuple(orders), tuple(played_seats), tuple(played_cards), tuple(played_suits), tuple(winners), played_by, complete)


def _winner(rows: list[Resolved]) -> int | None:
    """:func:`~engine.rules.trick_winner` of a trick from its cards' remembered powers (see :func:`resolved`)."""
    led = rows[0][1] if rows else None
    best, best_power = None, 0
    for i, (_, suit, as_trump, following) in enumerate(rows):
        power = as_trump or (following if suit is led else 0)
        if power > best_power:
            best, best_power = i, power
    return best
