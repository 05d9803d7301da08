"""What an output may show: one rule for every message it sends (state, scene, analysis).

A card is public once it is played, and the up-card from the deal's start (it is turned face
up); the dealer's discard never is.  Besides those, an output shows the hands its view draws
face up at that step (``Perspective.ALL``: every hand; ``FOCUS``: the focus seat's; ``PLAYED``
and ``NONE``: none) and, with the dealer's hand, the discard.

Before this module the clean output masked its state JSON field by field (hands, discard,
annotations) and forgot one: at the discard step ``action.card`` named the discarded card
(issue 22 item 2), and an output whose view hid the hands (a delayed program drawn
``played``) sent its state, its analysis (``best``, every card's value, the bidding table's
discard) and best-play marks on face-down cards with every hole card in them.  Now one
:class:`Mask` per (output, step) is applied twice, to everything the output sends:

* :meth:`Mask.state` to the :class:`~engine.state.GameState` every message of the output is
  built from: hands of hidden seats become face-down ``Xx`` cards (as many), a hidden
  discard ``Xx``, the action's card ``Xx`` when it is not public, and the free texts
  (annotations, rule-breach texts, which name held cards) go.  The scene, the state JSON
  and the analysis layer are drawn from it, so they cannot hold what it does not.
* :meth:`Mask.json` to a finished JSON message: every card string it may not show becomes
  ``Xx`` (the analysis numbers, which a worker computes from the whole state).

An output whose view shows every hand gets no mask (``None``): nothing is hidden from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.cards import Card, card_name, parse_card
from engine.state import Action, GameState, evolve_state
from renderer.view import Perspective, View

__all__ = ["HIDDEN", "Mask", "public_cards", "shown_seats", "mask_of"]

#: a face-down card, as the state JSON writes one
HIDDEN = "Xx"
_HIDDEN_CARD = parse_card(HIDDEN)
#: a card name of any notation (``engine.cards.CARD_RE``), hidden ones (``Xx``) included
_CARD = re.compile(r"^(?:[2-9NTJQKAX][SsHhCcDdxtng]|[LRB])$")
#: JSON keys whose strings are names, never cards (a player called "Jd" keeps the name)
_NAMES = frozenset({"players", "player", "name", "names", "title"})


def public_cards(state: GameState) -> frozenset[str]:
    """The cards public at ``state``: the up-card (turned at the deal's start) and every card
    played in the deal so far."""
    out = {card_name(state.up_card)} if state.up_card is not None else set()
    tricks = (*state.tricks, state.trick) if state.trick is not None else state.tricks
    for trick in tricks:
        out.update(card_name(c) for c in trick.cards)
    return frozenset(out)


def shown_seats(view: View, seats: int) -> frozenset[int]:
    """The seats whose hands ``view`` draws face up (``renderer.context.Ctx.face_up``)."""
    if view.perspective is Perspective.ALL:
        return frozenset(range(seats))
    if view.perspective is Perspective.FOCUS:
        return frozenset({view.focus_seat})
    return frozenset()


@dataclass(frozen=True)
class Mask:
    """The cards one output may show at one step, and which hands it shows."""

    allowed: frozenset[str]
    seats: frozenset[int]

    def hides(self, card: Card | None) -> bool:
        return card is not None and card_name(card) not in self.allowed

    def state(self, state: GameState) -> GameState:
        """``state`` as this output may show it (see the module's docstring)."""
        hands = tuple(h if i in self.seats else (_HIDDEN_CARD,) * len(h) for i, h in enumerate(state.hands))
        action = state.action
        if action is not None and self.hides(action.card):
            action = Action(action.kind, action.seat, _HIDDEN_CARD, action.call, action.index)
        discard = _HIDDEN_CARD if self.hides(state.discard) else state.discard
        return evolve_state(state, hands=hands, action=action, discard=discard, annotations=(), problems=())

    def json(self, value: Any) -> Any:
        """``value`` (a JSON message or part of one) with every card string this output may
        not show replaced by ``Xx``; names (players, titles) are left alone."""
        if isinstance(value, str):
            return HIDDEN if _CARD.match(value) and value not in self.allowed else value
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: (v if k in _NAMES else self.json(v)) for k, v in value.items()}
        return value


def mask_of(view: View, state: GameState) -> Mask | None:
    """The rule for an output drawn with ``view`` at ``state`` (None: it shows every hand,
    so nothing is hidden from it)."""
    if view.perspective is Perspective.ALL:
        return None
    seats = shown_seats(view, len(state.hands))
    allowed = set(public_cards(state))
    for seat in seats:
        if seat < len(state.hands):
            allowed.update(card_name(c) for c in state.hands[seat])
    if state.discard is not None and state.dealer in seats:
        allowed.add(card_name(state.discard))
    allowed.add(HIDDEN)
    return Mask(frozenset(allowed), seats)
