"""What a logger may send next: the legal actions at a live game's current end.

A person beside the table taps the up-card, each call and each card; a logger page offers
only the actions the rules allow from here (:func:`choices_of`), as the exact live-action
JSON it posts (:class:`engine.actions.LiveAction`'s form), so no rule is written again in a
page.  The choices come from the replay's last state (:class:`engine.live.LiveGame.last`)
and the game's ruleset:

* **deal start** (no deal yet, or the last one scored or thrown in): a ``new_deal`` per
  up-card, the dealer rotating by itself (the first deal's dealer is the caller's, seat 0
  by default); with hands entered for a hole-card camera, only cards outside them;
* **bidding**: pass (not for a dealer stuck under stick-the-dealer), order up in round 1
  (a suit per trump when the joker turns up), each suit but the turned-down one in round 2,
  no-trump where the ruleset allows it; each making call plain and alone (alone only where
  the seat has a partner; a Canadian dealer's partner orders alone only), and with
  defend-alone, one per lone defender;
* **the dealer's discard** after a round-1 order (optional: a discard the logger never saw
  may be left out, so the first card is offered as well);
* **play**: the cards the seat to act may still hold.  A known hand (``playerCards``)
  offers its own cards; an unknown one every card not played, discarded, turned down or
  known to be in another hand.  Follow-suit is not enforced: a renege is a fact of the
  table, offered with a warning where the hand is known to hold the led suit.

:func:`deal_actions` lists the last deal's actions (the edit list of a logger),
:func:`choices_at` the choices at one of them, and :func:`edited` makes the game with one
of them replaced, re-checking every action after it.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from .actions import LiveAction, actions_of
from .cards import Card, Suit, card_name, deck, effective_suit, parse_card, resolve, sort_key
from .errors import ActionError, EgnError, NotationError, Place, Problem
from .layout import HAND_SIZE
from .live import LiveGame
from .rules import Table, reneges
from .ruleset import Ruleset
from .state import GameState, StepKind, UpCardState

__all__ = ["Choice", "Choices", "DealAction", "choices_of", "choices_at", "deal_actions", "edited", "pad_of", "SYMBOL"]

#: a suit's symbol, for labels
SYMBOL: Final = {Suit.SPADES: "\u2660", Suit.HEARTS: "\u2665", Suit.DIAMONDS: "\u2666", Suit.CLUBS: "\u2663"}
_SUIT_CALLS: Final = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
_OVER: Final = (StepKind.DEAL_SCORED, StepKind.GAME_OVER)


@dataclass(frozen=True)
class Choice:
    """One legal action: its JSON (what the page posts, ``seq`` aside), a label for a button,
    the key a keyboard types for it, its group (``upcard``, ``call``, ``alone``, ``defend``,
    ``discard``, ``card``), the seat it is for, and a warning where the rules say the table
    breaks one (a renege)."""

    action: dict[str, Any]
    label: str
    key: str
    group: str
    seat: int | None
    warning: str | None = None
    #: a card of the led suit (or no suit led yet): what a page shows first
    follows: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "label": self.label,
            "key": self.key,
            "group": self.group,
            "seat": self.seat,
            "warning": self.warning,
            "follows": self.follows,
        }


@dataclass(frozen=True)
class Choices:
    """The legal actions at a game's end, and what a logger needs to say about them.

    ``phase``: ``deal`` (a new deal is next), ``bidding``, ``discard`` (the dealer's, or the
    first card), ``play``, ``over`` (the game is over: nothing but undo).  ``seat``: whose
    turn.  ``deal``: the deal being played or the one the choices open (from 0).
    ``dealer``: its dealer, and ``dealer_open`` when the caller chooses it (the first deal).
    ``free``: the deck's cards outside the hands entered (for hand entry at a deal start).
    ``note``: what a person should know (stick the dealer, the game is over...).
    """

    phase: str
    seat: int | None
    deal: int
    dealer: int | None
    choices: tuple[Choice, ...]
    dealer_open: bool = False
    free: tuple[str, ...] = ()
    deck: tuple[str, ...] = ()
    note: str | None = None
    hands: tuple[tuple[str, ...], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "seat": self.seat,
            "deal": self.deal,
            "dealer": self.dealer,
            "dealerOpen": self.dealer_open,
            "choices": [c.to_json() for c in self.choices],
            "free": list(self.free),
            "deck": list(self.deck),
            "note": self.note,
            "hands": [list(h) for h in self.hands],
        }


@dataclass(frozen=True)
class DealAction:
    """One action of the last deal, as the edit list shows it: its position in the deal
    (0: the ``new_deal``), its JSON, the seat that made it and a label."""

    index: int
    action: dict[str, Any]
    seat: int | None
    label: str

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "action": self.action, "seat": self.seat, "label": self.label}


def card_label(card: Card) -> str:
    """``J♥`` for ``Jh`` (the joker and unknown cards as written)."""
    if card.joker or card.rank is None or card.suit is None:
        return card_name(card)
    rank = "10" if card.rank.letter == "T" else card.rank.letter
    return rank + SYMBOL[card.suit]


def choices_of(game: LiveGame, *, dealer: int | None = None, hands: Sequence[Sequence[str]] | None = None) -> Choices:
    """The legal actions at ``game``'s end (see the module docstring).

    ``dealer``: the dealer of a deal that starts now (default: the seat after the last
    deal's dealer; seat 0 for the first deal).  ``hands``: the hands entered so far for a
    deal that starts now (per seat, card notation; a hand is sent once it holds all
    :data:`~engine.layout.HAND_SIZE` cards).

    Raises:
        ActionError: ``dealer`` is not a seat, or ``hands`` names a card twice or a card
            that is not in the deck.
    """
    rules = game.metadata.rules
    last = game.last
    seats = last.num_players if last is not None else Table(rules.num_players if 2 <= rules.num_players <= 10 else 4).players
    cards = deck(rules.min_rank, joker=rules.joker)
    names = tuple(card_name(c) for c in cards)
    if last is not None and last.game_over:
        return Choices("over", None, last.deal, last.dealer, (), deck=names, note="the game is over: undo, edit the last deal, or start the next game at this table")
    if last is None or last.kind in _OVER:
        return _deal_start(game, last, seats, cards, names, dealer, hands)
    table = Table(seats)
    if last.maker is None and not last.no_trump and last.kind in (StepKind.DEAL_START, StepKind.CALL):
        return _bidding(game, last, table, names)
    play = _play(last, table, cards, names)
    if last.kind is StepKind.DISCARD and last.discard is None and not last.tricks and last.trick is None:
        discards = tuple(
            Choice({"kind": "discard", "card": card_name(c)}, card_label(c), "d" + card_name(c), "discard", last.dealer)
            for c in _candidates(last, last.dealer, cards)
        )
        return Choices("discard", last.dealer, last.deal, last.dealer, discards + play.choices, deck=names, note=play.note)
    return play


def _deal_start(
    game: LiveGame, last: GameState | None, seats: int, cards: list[Card], names: tuple[str, ...], dealer: int | None, hands: Sequence[Sequence[str]] | None
) -> Choices:
    index = len(game)
    opened = dealer is None and last is None
    chosen = dealer if dealer is not None else (0 if last is None else (last.dealer + 1) % seats)
    if not 0 <= chosen < seats:
        raise ActionError(f"dealer {chosen!r} is not a seat of a {seats}-player table", Place(source=game.source, deal=index))
    entered = _hands(hands or (), seats, names, game.source, index)
    taken = {c for h in entered for c in h}
    full = [list(h) if len(h) == HAND_SIZE else [] for h in entered]
    note = None
    short = [i for i, h in enumerate(entered) if 0 < len(h) < HAND_SIZE]
    if short:
        note = "hands are sent with all five cards: " + ", ".join(f"seat {i} has {len(entered[i])}" for i in short)
    out = []
    for c in cards:
        name = card_name(c)
        if name in taken:
            continue
        act: dict[str, Any] = {"kind": "new_deal", "dealer": chosen, "upCard": name}
        if any(full):
            act["playerCards"] = full
        out.append(Choice(act, card_label(c), name, "upcard", chosen))
    free = tuple(n for n in names if n not in taken)
    return Choices("deal", chosen, index, chosen, tuple(out), dealer_open=opened or dealer is not None, free=free, deck=names, note=note, hands=tuple(tuple(h) for h in entered))


def _hands(hands: Sequence[Sequence[str]], seats: int, names: tuple[str, ...], source: str, index: int) -> list[tuple[str, ...]]:
    """The entered hands, checked: seats of the table, cards of the deck, none twice."""
    here = Place(source=source, deal=index)
    if len(hands) > seats:
        raise ActionError(f"{len(hands)} hands for a {seats}-player table", here)
    seen: dict[str, int] = {}
    out: list[tuple[str, ...]] = []
    for seat, hand in enumerate(hands):
        if len(hand) > HAND_SIZE:
            raise ActionError(f"seat {seat}'s hand has {len(hand)} cards: a hand is {HAND_SIZE}", here)
        for text in hand:
            try:
                name = card_name(parse_card(text))
            except NotationError:
                raise ActionError(f"{text!r} is not a card", here) from None
            if name not in names:
                raise ActionError(f"{text!r} is not a card of this deck", here)
            if name in seen:
                raise ActionError(f"{text!r} is in seat {seen[name]}'s hand and seat {seat}'s", here)
            seen[name] = seat
        out.append(tuple(hand))
    out += [()] * (seats - len(out))
    return out


def _bidding(game: LiveGame, last: GameState, table: Table, names: tuple[str, ...]) -> Choices:
    rules = game.metadata.rules
    seats = table.players
    n = len(last.calls)
    seat = (last.dealer + 1 + n) % seats
    up = last.up_card
    out: list[Choice] = []
    note = None
    if n < seats:
        forced = rules.canadian and seat == table.partner(last.dealer)
        out.append(Choice({"kind": "call", "call": "Pass"}, "Pass", "p", "call", seat))
        if up is not None and up.joker:
            for suit in _SUIT_CALLS:
                out += _making(game, table, seat, suit.value, SYMBOL[suit], suit.value, forced=forced)
        else:
            out += _making(game, table, seat, "Order", "Order up", "o", forced=forced)
        if forced:
            note = "Canadian loner: the dealer's partner who orders up goes alone"
    else:
        stuck = rules.std and n == 2 * seats - 1
        if stuck:
            note = f"stick the dealer: seat {seat} must name trump"
        else:
            out.append(Choice({"kind": "call", "call": "Pass"}, "Pass", "p", "call", seat))
        turned = up.suit if up is not None and not up.joker else None
        for suit in _SUIT_CALLS:
            if suit is not turned:
                out += _making(game, table, seat, suit.value, SYMBOL[suit], suit.value)
        if rules.allow_no_trump:
            out += _making(game, table, seat, "n", "No trump", "n")
    return Choices("bidding", seat, last.deal, last.dealer, tuple(out), deck=names, note=note)


def _making(game: LiveGame, table: Table, seat: int, call: str, label: str, key: str, *, forced: bool = False) -> list[Choice]:
    """A making call: plain (unless it must go alone), alone where the seat has a partner,
    and with defend-alone one per lone defender."""
    out: list[Choice] = []
    if not forced:
        out.append(Choice({"kind": "call", "call": call, "alone": False}, label, key, "call", seat))
    if table.partner(seat) is None:
        return out
    out.append(Choice({"kind": "call", "call": call, "alone": True}, f"{label} alone", key.upper(), "alone", seat))
    if game.metadata.rules.defend_alone:
        players = game.timeline.players
        for d in range(table.players):
            if table.team(d) != table.team(seat):
                who = players[d] if d < len(players) else f"seat {d}"
                act = {"kind": "call", "call": call, "alone": True, "aloneDefender": d}
                out.append(Choice(act, f"{label} alone, {who} defends alone", key.upper() + str(d), "defend", seat))
    return out


def _play(last: GameState, table: Table, cards: list[Card], names: tuple[str, ...]) -> Choices:
    seat = last.to_act
    if seat is None:
        return Choices("play", None, last.deal, last.dealer, (), deck=names, note="no seat is to play")
    trump = last.trump
    trick = last.trick if last.trick is not None and not last.trick.complete else None
    led = trick.led if trick is not None else None
    known = bool(last.hands_known) and last.hands_known[seat]
    # the cards known to be in the hand (all of it where known; else the up-card the dealer took)
    held = [effective_suit(c, trump) for c in last.hands[seat] if c.known] if last.hands else []
    # where the hand is not known, a card of a suit the seat did not follow earlier shows
    # that it held that suit then: the replay names that earlier card a renege
    shown: dict[Suit, int] = {}
    if not known:
        for t in last.tricks if trick is None else (*last.tricks, trick):
            for pos, (s, c) in enumerate(zip(t.seats, t.cards)):
                if s == seat and pos and t.led is not None and reneges(effective_suit(c, trump), [t.led], t.led):
                    shown.setdefault(t.led, t.number)
    out = []
    for c in sorted(_candidates(last, seat, cards), key=lambda c: sort_key(c, trump)):
        suit = effective_suit(c, trump)
        follows = led is None or suit is led
        warning = None
        if not follows and reneges(suit, held, led):
            warning = f"renege: seat {seat} holds {led.label if led is not None else '?'} and must follow"
        elif suit is not None and suit in shown:
            warning = f"renege: seat {seat} did not follow {suit.label} in trick {shown[suit] + 1}"
        name = card_name(c)
        out.append(Choice({"kind": "card", "card": name}, card_label(c), name, "card", seat, warning, follows))
    return Choices("play", seat, last.deal, last.dealer, tuple(out), deck=names)


def _candidates(last: GameState, seat: int, cards: list[Card]) -> list[Card]:
    """The cards ``seat`` may still hold: its own where its hand is known, else every card of
    the deck not played, discarded, turned down or known in another hand (the dealer who
    picked up the up-card may play or discard it)."""
    trump = last.trump
    if last.hands_known and last.hands_known[seat]:
        return [c for c in last.hands[seat] if c.known]
    out_: set[tuple[object, ...]] = set()
    for t in last.tricks:
        out_.update(resolve(c, trump).identity for c in t.cards)
    if last.trick is not None and not last.trick.complete:
        out_.update(resolve(c, trump).identity for c in last.trick.cards)
    if last.discard is not None:
        out_.add(resolve(last.discard, trump).identity)
    up = last.up_card
    if up is not None and not (last.up_card_state is UpCardState.TAKEN and seat == last.dealer):
        out_.add(up.identity)
    for other, hand in enumerate(last.hands):
        if other != seat:
            out_.update(resolve(c, trump).identity for c in hand if c.known)
    return [c for c in cards if c.identity not in out_]


def pad_of(game: LiveGame) -> tuple[tuple[Choice, ...], tuple[int, ...]]:
    """Every action a logger of this game could send, unchecked, and the dealers of the
    next deals in turn: what a page offers while it cannot reach the engine (offline), to
    queue actions the engine judges once they arrive.  The calls are the ruleset's (no
    trump where allowed, a lone defender per seat with defend-alone); the cards the deck's,
    as ``card``, ``discard`` and a ``new_deal`` by the next dealer (``upcard``).
    """
    rules = game.metadata.rules
    last = game.last
    seats = last.num_players if last is not None else Table(rules.num_players if 2 <= rules.num_players <= 10 else 4).players
    first = 0 if last is None else (last.dealer + 1) % seats  # the deal after the last one opened
    return _pad(rules, seats, first), tuple((first + i) % seats for i in range(seats))


@lru_cache(maxsize=64)
def _pad(rules: Ruleset, seats: int, dealer: int) -> tuple[Choice, ...]:
    """:func:`pad_of`'s actions (a game's are the same but for the dealer: kept)."""
    table = Table(seats)
    out: list[Choice] = [Choice({"kind": "call", "call": "Pass"}, "Pass", "p", "call", None)]
    calls = [("Order", "Order up", "o")] + [(s.value, SYMBOL[s], s.value) for s in _SUIT_CALLS]
    if rules.allow_no_trump:
        calls.append(("n", "No trump", "n"))
    for call, label, key in calls:
        out.append(Choice({"kind": "call", "call": call, "alone": False}, label, key, "call", None))
        if table.partner(0) is not None:
            out.append(Choice({"kind": "call", "call": call, "alone": True}, f"{label} alone", key.upper(), "alone", None))
            if rules.defend_alone:
                for d in range(seats):
                    act = {"kind": "call", "call": call, "alone": True, "aloneDefender": d}
                    out.append(Choice(act, f"{label} alone, seat {d} defends alone", key.upper() + str(d), "defend", None))
    cards = deck(rules.min_rank, joker=rules.joker)
    for group, kind, prefix in (("card", "card", ""), ("discard", "discard", "d")):
        out += [Choice({"kind": kind, "card": card_name(c)}, card_label(c), prefix + card_name(c), group, None) for c in cards]
    out += [Choice({"kind": "new_deal", "dealer": dealer, "upCard": card_name(c)}, card_label(c), card_name(c), "upcard", dealer) for c in cards]
    return tuple(out)


# --------------------------------------------------------------------------- editing a deal


def deal_actions(game: LiveGame) -> list[DealAction]:
    """The last deal's actions in order (0: its ``new_deal``), each with its seat and a
    label: what a logger's edit list shows.  Empty with no deal."""
    if not len(game):
        return []
    deal = game.to_egn()["deals"][-1]
    if not isinstance(deal, dict):
        return []
    acts = actions_of({"deals": [deal]})
    states = _deal_steps(game)
    seats: list[int | None] = []
    for s in states:
        if s.kind is StepKind.DEAL_START:
            seats.append(s.dealer)
        elif s.kind in (StepKind.CALL, StepKind.CARD) and s.action is not None:
            seats.append(s.action.seat)
        elif s.kind is StepKind.DISCARD and any(a["kind"] == "discard" for a in acts):
            seats.append(s.dealer)
    players = game.timeline.players
    out = []
    for i, act in enumerate(acts):
        act = {k: v for k, v in act.items() if k != "seq" and v is not None}
        seat = seats[i] if i < len(seats) else None
        out.append(DealAction(i, act, seat, _label(act, seat, players)))
    return out


def _deal_steps(game: LiveGame) -> list[GameState]:
    """The last deal's steps (at most about forty), read back from the end."""
    steps = game.timeline.steps
    index = len(game) - 1
    out: list[GameState] = []
    for i in range(len(steps) - 1, -1, -1):
        s = steps[i]
        if s.deal != index:
            break
        out.append(s)
    out.reverse()
    return out


def _label(act: Mapping[str, Any], seat: int | None, players: Sequence[str]) -> str:
    who = players[seat] if seat is not None and seat < len(players) else (f"seat {seat}" if seat is not None else "?")
    kind = act["kind"]
    if kind == "new_deal":
        return f"{who} deals, {card_label(parse_card(act['upCard']))} up"
    if kind == "call":
        call = act["call"]
        text = {"Pass": "passes", "Order": "orders up", "n": "calls no trump", "x": "names trump (unknown)"}.get(call)
        if text is None:
            text = f"calls {SYMBOL[Suit(call)]}" if call in "shdc" else f"calls {call}"
        if act.get("alone"):
            text += " alone"
        return f"{who} {text}"
    return f"{who} {'discards' if kind == 'discard' else 'plays'} {card_label(parse_card(act['card']))}"


def _truncated(game: LiveGame, at: int) -> tuple[LiveGame, list[DealAction]]:
    """A copy of ``game`` without the last deal's actions from ``at`` on (at 0: without the deal).

    Raises:
        ActionError: no deal, or ``at`` is not an action of the last deal.
    """
    acts = deal_actions(game)
    if not 0 <= at < len(acts):
        where = Place(source=game.source, deal=max(len(game) - 1, 0))
        raise ActionError(f"action {at} is not one of the last deal's {len(acts)} actions", where)
    cut = game.copy()
    for _ in range(len(acts) - at):
        cut.pop()
    return cut, acts


def choices_at(game: LiveGame, at: int) -> Choices:
    """The choices in place of the last deal's action ``at`` (what an edit may put there):
    the game's choices with that action and the ones after it taken away.  At 0 (the
    ``new_deal``) the dealer stays the deal's.

    Raises:
        ActionError: ``at`` is not an action of the last deal.
    """
    cut, acts = _truncated(game, at)
    dealer = acts[0].action.get("dealer") if at == 0 else None
    hands = acts[0].action.get("playerCards") if at == 0 else None
    return choices_of(cut, dealer=dealer, hands=hands)


def edited(game: LiveGame, at: int, action: LiveAction | Mapping[str, Any]) -> tuple[LiveGame, tuple[Problem, ...]]:
    """The game with the last deal's action ``at`` replaced by ``action``, every action
    after it pushed again and judged again (a new game; ``game`` is unchanged), and the
    warnings the new deal brought (a renege...).

    Raises:
        EgnError: the replacement is refused (the engine's error), or an action after it no
            longer fits: an :class:`~engine.errors.ActionError` naming it and why.
    """
    cut, acts = _truncated(game, at)
    warnings: list[Problem] = list(cut.push(action).warnings)
    for later in acts[at + 1 :]:
        try:
            warnings += cut.push(later.action).warnings
        except EgnError as exc:
            raise ActionError(
                f"after the edit, action {later.index} ({later.label}) no longer fits: {exc.detail}",
                exc.place if exc.place.deal is not None else Place(source=game.source, deal=len(game) - 1),
            ) from None
    return cut, tuple(warnings)
