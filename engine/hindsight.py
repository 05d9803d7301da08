"""Which hands the analysis of a step reads, where they come from, and why a step has none.

Most real files list neither the hands nor the dealer's discard.  The replay rebuilds the
hands from the cards each seat plays (:meth:`engine.dealstate.DealState.ensure_hands`, the
one place that does it; the renderer draws those hands): once every card of a deal is
played, the four hands at the start of play are known, and a step can be analysed in
hindsight, the way a replay shows them.  This module does not rebuild anything; it judges
the state's hands for the step's question:

* the **bidding** (deal start, each call before trump is made, and the dealer's discard
  after an order-up) values calls on the hands *as dealt*, every seat's (a seat that will sit
  out a loner is still dealt five cards); the dealer's discard is part of its dealt hand;
* the **play** (the discard step on) reads the hands *as held*, the seats that play only.

The hands are ``"recorded"`` when the file's ``playerCards`` names every card the step reads
(:attr:`engine.state.GameState.hands_recorded`), ``"reconstructed"`` when a hand came from
the play.  A hand the play does not show in full (a deal still being played, a seat that sat
out, a thrown-in deal, cards written ``Xx``) holds unknown cards, so a step is analysed only
where every card it reads is known: a live deal gets no hindsight before its play is
complete in the game the output shows.  Otherwise :attr:`Hands.reason` says why, in words
for the studio.  Pure: a state in, a value out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from .cards import Card, card_name, deck, resolve
from .layout import HAND_SIZE
from .ruleset import Ruleset
from .state import GameState, StepKind, UpCardState

__all__ = ["RECORDED", "RECONSTRUCTED", "Source", "Hands", "hands_for", "needs_hands", "played_out", "discard_options", "plays_no_card", "sat_out"]

Source = Literal["recorded", "reconstructed"]
RECORDED: Final[Source] = "recorded"
RECONSTRUCTED: Final[Source] = "reconstructed"

_PLAY_KINDS: Final = frozenset({StepKind.DISCARD, StepKind.CARD, StepKind.TRICK_TAKEN, StepKind.CALL})


@dataclass(frozen=True)
class Hands:
    """What the analysis of one step may read: ``source`` of the hands (``None``: none is
    read), and ``reason``, why none is read where the step asks for hands (``None`` where it
    asks for none: a scored deal, the game's end).

    ``unknown_discard``: the hands as dealt lack one card, the dealer's discard, which the
    file does not record (the dealer kept the up-card and played it): the bidding can still
    be valued for each card the discard may be (:func:`discard_options`), and a value that
    is the same for every one of them is the value; ``reason`` then says what is missing."""

    source: Source | None = None
    reason: str | None = None
    unknown_discard: bool = False


def needs_hands(state: GameState) -> Literal["dealt", "held"] | None:
    """The hands the step's question reads: as dealt (the bidding and the dealer's discard),
    as held (the play), or none (a scored or thrown-in deal, the game's end)."""
    if state.thrown_in or state.game_over or state.kind in (StepKind.DEAL_SCORED, StepKind.GAME_OVER):
        return None
    if state.maker is None:
        return "dealt" if state.kind in (StepKind.DEAL_START, StepKind.CALL) and state.to_act is not None else None
    if state.kind is StepKind.CALL and state.up_card_state is UpCardState.TAKEN:
        return "dealt"  # the dealer's discard table: its hand as dealt and the up-card
    return "held" if state.kind in _PLAY_KINDS else None


def played_out(state: GameState) -> bool:
    """Every card of the deal is on the table or taken at this step (its last card played,
    or the deal scored): nothing of its hands is hidden any more, wherever this step is shown."""
    if state.kind in (StepKind.DEAL_SCORED, StepKind.GAME_OVER):
        return True
    per_trick = state.num_players - len(state.sit_out)
    trick = state.trick
    on_table = len(trick.cards) if trick is not None and not trick.complete else 0
    return per_trick > 0 and len(state.tricks) * per_trick + on_table >= HAND_SIZE * per_trick


def hands_for(state: GameState) -> Hands:
    """The hands the analysis of ``state`` may read (see the module docstring)."""
    if state.num_players != 4:
        return Hands(None, f"analysis needs a table of four (this one seats {state.num_players})")
    need = needs_hands(state)
    if need is None:
        return Hands()
    if state.maker is not None and state.trump is None and not state.no_trump:
        return Hands(None, "trump is not recorded (called 'x'): no trick can be judged")
    seats = range(4) if need == "dealt" else [s for s in range(4) if s not in state.sit_out]
    hands = state.hands
    if len(hands) < 4:
        return Hands(None, "the hands are not in this state")
    if need == "dealt" and (state.up_card is None or not state.up_card.known):
        return Hands(None, "the up-card is not recorded")
    unseen = {s: sum(1 for c in hands[s] if not c.known) + max(0, HAND_SIZE - len(hands[s])) * (need == "dealt") for s in seats}
    missing = {s: n for s, n in unseen.items() if n}
    if missing:
        reason = _unseen_reason(state, missing, need)
        dealer = state.dealer
        if need == "dealt" and list(missing) == [dealer] and missing[dealer] == 1 and not _recorded(state, dealer):
            return Hands(RECONSTRUCTED, reason, unknown_discard=True)
        return Hands(None, reason)
    dealer = state.dealer
    if need == "held" and state.up_card_state is UpCardState.TAKEN and dealer in seats and len(hands[dealer]) > HAND_SIZE:
        if state.discard is None:
            return Hands(None, f"the dealer's discard is not recorded and the play does not show it (seat {dealer} holds six cards)")
        return Hands(None, f"the dealer's discard {card_name(state.discard)!r} is not in its hand (seat {dealer} holds six cards)")
    twice = _held_twice(state, seats, need)
    if twice is not None:
        return Hands(None, f"{card_name(twice)!r} is in two places at once (the record shows it twice)")
    recorded = all(_recorded(state, s) for s in seats)
    return Hands(RECORDED if recorded else RECONSTRUCTED)


def discard_options(state: GameState, rules: Ruleset) -> tuple[tuple[tuple[Card, ...], ...], ...]:
    """The hands as dealt, once for each card the dealer's unrecorded discard may be: every
    card of the deck that no hand holds and that is not the up-card (the rest of the kitty
    is never seen either).  Empty unless :attr:`Hands.unknown_discard`."""
    dealer, hands = state.dealer, state.hands
    if len(hands) < 4 or sum(1 for c in hands[dealer] if not c.known) != 1:
        return ()
    seen = {c.identity for h in hands for c in h if c.known}
    if state.up_card is not None:
        seen.add(state.up_card.identity)
    options = [c for c in deck(rules.min_rank, joker=rules.joker) if c.identity not in seen]
    out = []
    for card in options:
        own = tuple(card if not c.known else c for c in hands[dealer])
        out.append(tuple(own if s == dealer else tuple(h) for s, h in enumerate(hands)))
    return tuple(out)


def plays_no_card(seat: int) -> str:
    """Why a seat's hand is not known at all, as a step can tell (the deal may still be going)."""
    return f"seat {seat} plays no card in the record (it sat out a loner, or the deal was thrown in or is not played yet)"


def sat_out(seat: int) -> str:
    """:func:`plays_no_card` once the deal says why: the seat sat out."""
    return f"seat {seat} sat out a loner, so its hand is never seen"


def _recorded(state: GameState, seat: int) -> bool:
    """The seat's whole hand comes from ``playerCards`` (states that do not say: the known flag)."""
    flags = state.hands_recorded or state.hands_known
    return seat < len(flags) and flags[seat]


def _unseen_reason(state: GameState, missing: dict[int, int], need: str) -> str:
    """Why the cards of ``missing`` (seat: cards not known) are not known, seat by seat."""
    dealer = state.dealer
    parts: list[str] = []
    for seat, n in missing.items():
        cards = "one card" if n == 1 else f"{n} cards"
        if _recorded(state, seat):
            parts.append(f"seat {seat}'s recorded hand names {cards} as unknown ('Xx')")
        elif need == "dealt" and seat == dealer and n == 1:
            parts.append(f"the dealer's discard is not recorded (one card of seat {seat}'s hand as dealt is never seen)")
        elif n >= len(state.hands[seat]) and n == HAND_SIZE:
            parts.append(plays_no_card(seat))
        else:
            parts.append(f"{cards} of seat {seat}'s hand are not played in the record (the deal is not played out yet, or cards are written 'Xx')")
    return "; ".join(parts)


def _held_twice(state: GameState, seats: Sequence[int], need: str) -> Card | None:
    """A card in two hands (or in a hand and on the table): a record that plays it twice."""
    trump = None if state.no_trump else state.trump
    seen: set[tuple[object, ...]] = set()
    cards: list[Card] = [c for s in seats for c in state.hands[s]]
    if need == "dealt" and state.up_card is not None:
        cards.append(state.up_card)
    elif state.trick is not None and not state.trick.complete:
        cards.extend(state.trick.cards)
    for card in cards:
        key = resolve(card, trump).identity
        if key in seen:
            return card
        seen.add(key)
    return None
