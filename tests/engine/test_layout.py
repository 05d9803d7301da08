"""Laying out a play phase (engine.layout): the seat of every card, before any hand is known."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CARD_RE, Suit, card_name, deck, parse_card, resolve
from engine.layout import lay_out
from engine.rules import Table, trick_winner

HEARTS = Suit.HEARTS


@pytest.mark.parametrize(
    ("tricks", "sit_out", "first", "leaders", "winners", "complete"),
    [
        # the left bower (Jd under hearts) wins trick 0 for seat 2, who leads trick 1
        ([["9s", "Ts", "Jd", "Qs"], ["Ac", "Kc", "Qc", "Tc"]], frozenset(), 0, [0, 2], [2, 0], False),
        # a loner's partner (seat 3) sits out: three cards a trick, seats 0, 1, 2
        ([["Ah", "9h", "Th"], ["As", "Ks", "Qs"]], frozenset({3}), 0, [0, 0], [0, 0], False),
        # a short trick followed by another: the next is led from the first leader again
        ([["9s", "Ts"], ["Ac", "Kc", "Qc", "Tc"]], frozenset(), 1, [1, 1], [None, 0], False),
        # a trick nobody can judge goes to its leader
        ([["Xx", "Xx", "Xx", "Xx"], ["Ac", "Kc", "Qc", "Tc"]], frozenset(), 3, [3, 3], [None, 0], False),
        # five full tricks: the play is complete (hands can be back-calculated in full)
        ([["9s", "Ts", "Qs", "Ks"]] * 5, frozenset(), 0, [0, 3, 2, 1, 0], [3, 3, 3, 3, 3], True),
    ],
)
def test_each_card_gets_its_seat(
    tricks: list[list[str]], sit_out: frozenset[int], first: int, leaders: list[int], winners: list[int | None], complete: bool
) -> None:
    layout = lay_out(tricks, Table(4), HEARTS, sit_out, first)
    assert list(layout.leaders) == leaders
    assert list(layout.winners) == winners  # position of the winning card in its trick
    for t, trick in enumerate(tricks):
        assert [card_name(c) for c in layout.cards[t]] == trick
        assert all(s not in sit_out for s in layout.seats[t])
        assert layout.seats[t] == layout.orders[t][: len(trick)]
    assert layout.complete is complete
    played = sorted(card_name(c) for cards in layout.played_by.values() for c in cards)
    assert played == sorted(c for trick in tricks for c in trick)


def test_generic_cards_are_resolved_under_trump() -> None:
    layout = lay_out([["R", "L", "Kt", "9n"]], Table(4), HEARTS, frozenset(), 0)
    cards = layout.cards[0]
    assert [(c.rank, c.suit) for c in cards] == [(11, Suit.HEARTS), (11, Suit.DIAMONDS), (13, Suit.HEARTS), (9, Suit.DIAMONDS)]
    assert list(layout.suits[0]) == [HEARTS, HEARTS, HEARTS, Suit.DIAMONDS]
    assert layout.winners[0] == 0  # the right bower


_TEXTS = [card_name(c) for c in deck(9, joker=True)] + ["Xx", "R", "L", "Jt", "Ant", "9n", "Kg", "Tx"]
_TEXTS = [t for t in _TEXTS if CARD_RE.match(t)]


@settings(max_examples=400, deadline=None)
@given(
    trick=st.lists(st.sampled_from(_TEXTS), min_size=4, max_size=4),
    trump=st.sampled_from([None, *Suit]),
)
def test_remembered_trick_powers_judge_as_trick_winner(trick: list[str], trump: Suit | None) -> None:
    """The layout's winner (from powers remembered per card and trump) is ``rules.trick_winner``'s."""
    layout = lay_out([trick], Table(4), trump, frozenset(), 0)
    cards = [resolve(parse_card(t), trump) for t in trick]
    assert layout.winners[0] == trick_winner(cards, trump)
    assert layout.winners[0] == trick_winner([parse_card(t) for t in trick], trump)
