"""Card notation (EGN's card strings) and the one function that judges suit.

Notation: rank ``7 8 9 N T J Q K A X`` + suit ``s h c d`` (or upper case), ``x`` (unknown),
``t``/``n``/``g`` (generic trump / next / green); whole cards ``R`` ``L`` (right and left
bower) and ``B`` (joker).  ``h`` is always hearts (the spec's "green 2" collides with it).

Every rule that asks "which suit does this card belong to?" calls :func:`effective_suit`;
follow-suit, trick winner, renege detection and hand sorting all go through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from enum import Enum, IntEnum

from .errors import NotationError, Place

__all__ = [
    "Suit",
    "Rank",
    "Card",
    "JOKER",
    "parse_card",
    "card_name",
    "effective_suit",
    "deck",
    "resolve",
    "sort_key",
    "trick_power",
    "bower",
    "SUIT_ORDER",
]


class Suit(str, Enum):
    """The four suits; the value is the EGN letter."""

    SPADES = "s"
    HEARTS = "h"
    CLUBS = "c"
    DIAMONDS = "d"

    @property
    def colour(self) -> str:
        return "red" if self in (Suit.HEARTS, Suit.DIAMONDS) else "black"

    @property
    def partner(self) -> Suit:
        """The other suit of the same colour (the left bower's printed suit)."""
        return _PARTNER[self]

    @property
    def label(self) -> str:
        """The suit's name for people: "Spades"."""
        return self.name.capitalize()


_PARTNER = {
    Suit.SPADES: Suit.CLUBS,
    Suit.CLUBS: Suit.SPADES,
    Suit.HEARTS: Suit.DIAMONDS,
    Suit.DIAMONDS: Suit.HEARTS,
}

#: Deck order of the reference codec: rank-major, suits s, h, c, d.
SUIT_ORDER: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)


class Rank(IntEnum):
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def letter(self) -> str:
        return _RANK_LETTER[self]


_RANK_LETTER = {
    Rank.SIX: "6",
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "T",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.ACE: "A",
}
_LETTER_RANK = {v: k for k, v in _RANK_LETTER.items()}
_JACK = Rank.JACK  # bound once: the suit rules ask for it for every card they judge
_LETTER_RANK["N"] = Rank.NINE

CARD_RE = re.compile(r"^([78N9TJQKAX][SsHhCcDdxtngh]|[LRB])$")


@dataclass(frozen=True)
class Card:
    """A card as written.  ``rank``/``suit`` are ``None`` when unknown.

    ``generic`` keeps notation that only makes sense once trump is known:
    ``"t"``/``"n"``/``"g"`` (suit relative to trump), ``"R"``/``"L"`` (bowers).
    ``text`` is the original spelling, so ``card_name(parse_card(s)) == s``.

    ``identity`` (what makes two cards the same physical card, spelling ignored) and
    ``known`` (one definite card of the deck, or the joker) are worked out once, when the
    card is made: the replay asks both for every card it walks.
    """

    rank: Rank | None
    suit: Suit | None
    joker: bool = False
    generic: str | None = None
    text: str = ""
    identity: tuple[object, ...] = field(init=False, repr=False, compare=False)
    known: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "identity", (self.rank, self.suit, self.joker, self.generic))
        object.__setattr__(self, "known", self.joker or (self.rank is not None and self.suit is not None and self.generic is None))

    def __str__(self) -> str:
        return self.text or card_name(self)

    def same(self, other: Card) -> bool:
        return self.identity == other.identity

    def __reduce__(self) -> tuple[type[Card], tuple[Rank | None, Suit | None, bool, str | None, str]]:
        # made again by its constructor when pickled or copied, as every compiled frozen
        # dataclass is (engine.pickling); spelt out here: a card is pickled the most
        return (Card, (self.rank, self.suit, self.joker, self.generic, self.text))


JOKER = Card(None, None, joker=True, text="B")


def parse_card(text: str, *, place: Place | None = None) -> Card:
    """Parse EGN card notation.

    Raises:
        NotationError: the text is not EGN card notation.
    """
    card = _parse(text) if isinstance(text, str) else None
    if card is None:
        raise NotationError(f"{text!r} is not a card (expected e.g. 'Jd', 'Xx', 'R', 'B')", place)
    return card


@lru_cache(maxsize=512)
def _parse(text: str) -> Card | None:
    if not CARD_RE.fullmatch(text):
        return None
    if text == "B":
        return JOKER
    if text in ("R", "L"):
        return Card(Rank.JACK, None, generic=text, text=text)
    r, s = text[0], text[1]
    rank = None if r == "X" else _LETTER_RANK[r]
    if s == "x":
        return Card(rank, None, text=text)
    if s in "tng":
        return Card(rank, None, generic=s, text=text)
    return Card(rank, Suit(s.lower()), text=text)


def card_name(card: Card) -> str:
    """Format a card in EGN notation (the inverse of :func:`parse_card`)."""
    if card.text:
        return card.text
    if card.joker:
        return "B"
    if card.generic in ("R", "L"):
        return card.generic
    r = "X" if card.rank is None else card.rank.letter
    if card.generic:
        return r + card.generic
    return r + ("x" if card.suit is None else card.suit.value)


def resolve(card: Card, trump: Suit | None) -> Card:
    """Turn trump-relative notation (``R``, ``L``, ``Xt``, ``Kn``) into a concrete card.

    Cards stay generic while trump is unknown; ``g`` (a "green" suit) stays generic too,
    since it does not say which of the two other-colour suits it is.
    """
    if card.generic is None or trump is None:
        return card
    g = card.generic
    if g == "R":
        return Card(Rank.JACK, trump, text=card.text)
    if g == "L":
        return Card(Rank.JACK, trump.partner, text=card.text)
    if g == "t":
        return Card(card.rank, trump, text=card.text)
    if g == "n":
        return Card(card.rank, trump.partner, text=card.text)
    return card


def effective_suit(card: Card, trump: Suit | None) -> Suit | None:
    """Suit the card follows; the left bower (and the joker) count as trump.

    ``trump`` is ``None`` for no-trump (and while trump is not yet known): every card then
    follows its printed suit.  Returns ``None`` when the suit cannot be known (``Xx``, a
    joker with no trump, a ``g`` card).
    """
    if card.generic is not None and trump is not None:
        card = resolve(card, trump)
    if card.joker:
        return trump
    if card.generic in ("R", "L"):
        return None
    if trump is not None and card.rank == _JACK and card.suit is _PARTNER[trump]:
        return trump
    return card.suit


def deck(min_rank: int = 9, *, joker: bool = False) -> list[Card]:
    """The deck in the reference codec's order (rank-major, suits s, h, c, d): a new list
    each call (callers shuffle and filter it) of the same frozen cards, made once per kind
    of deck (the generator deals thousands of decks: the win-probability prior alone, 1,671)."""
    lowest = min_rank if min_rank in (6, 7, 8, 9) else 9
    return list(_deck(lowest, joker))


@lru_cache(maxsize=None)
def _deck(lowest: int, joker: bool) -> tuple[Card, ...]:
    cards = [Card(rank, suit) for rank in Rank if rank >= lowest for suit in SUIT_ORDER]
    cards = [Card(c.rank, c.suit, text=card_name(c)) for c in cards]
    if joker:
        cards.append(JOKER)
    return tuple(cards)


def bower(card: Card, trump: Suit | None) -> str | None:
    """``"right"``, ``"left"`` or ``None``: which bower the card is under this trump."""
    card = resolve(card, trump)
    if trump is None or card.joker or card.rank != Rank.JACK or effective_suit(card, trump) is not trump:
        return None
    return "right" if card.suit is trump else "left"


def trick_power(card: Card, trump: Suit | None, led: Suit | None) -> int:
    """How strongly a card plays in a trick led in ``led``: 0 means it cannot win.

    Joker > right bower > left bower > other trumps by rank > led suit by rank.  Built on
    :func:`effective_suit`, so the left bower is judged in one place.
    """
    if card.generic is not None and trump is not None:
        card = resolve(card, trump)
    if card.joker:
        return 1000
    suit = effective_suit(card, trump)
    rank = int(card.rank) if card.rank is not None else 0
    if suit is None:
        return 0
    if trump is not None and suit is trump:
        if card.rank == _JACK:
            return 500 if card.suit is trump else 499
        return 300 + rank
    if suit is led:
        return 100 + rank
    return 0


def sort_key(card: Card, trump: Suit | None) -> tuple[int, int]:
    """Key for a hand on screen: trump first (bowers on top), then suits alternating colour."""
    suit = effective_suit(card, trump)
    if trump is not None:
        other = _OTHER_COLOUR_FIRST[trump]
        order = [trump, other, trump.partner, other.partner]
    else:
        order = list(SUIT_ORDER)
    group = order.index(suit) if suit in order else len(order)
    return (group, -trick_power(card, trump, suit))


_OTHER_COLOUR_FIRST = {
    Suit.SPADES: Suit.HEARTS,
    Suit.CLUBS: Suit.DIAMONDS,
    Suit.HEARTS: Suit.SPADES,
    Suit.DIAMONDS: Suit.CLUBS,
}
