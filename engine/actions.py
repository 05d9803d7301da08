"""Live actions: what a game logger sends, one at a time, and where each goes in a deal's EGN JSON.

A logger sends a new deal (dealer, up-card, optionally the hands), each call, the dealer's
discard, each card, and undos (:class:`LiveAction`, the live feed's action JSON).  An
action only ever changes the game's last deal: :func:`opened` makes a new deal's JSON and
:func:`written` writes the others into the last deal's (a new value each time: phases and
lists are copied where they change, shared where they do not).  Whether an action is
legal is the replay's to judge (:class:`engine.live.LiveGame`); here only whether it fits
the deal's shape, as the feed decided before: a call after the play has started, a card
before trump is made, a new deal while one is being played are refused with the place.

:func:`actions_of` is the inverse: the actions that write a document's deals.  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .errors import ActionError, Place
from .state import GameState, StepKind

__all__ = ["KINDS", "LiveAction", "opened", "written", "actions_of"]

#: The kinds of live action.
KINDS: Final = ("new_deal", "call", "discard", "card", "undo")

_BIDDING: Final = "EUCHRE_BIDDING"
_PLAY: Final = "TRICK_PLAY"
_CARD: Final = StepKind.CARD

#: action JSON key -> field (camelCase as the feed sends it, snake_case accepted too)
_KEYS: Final = {
    "kind": "kind",
    "call": "call",
    "alone": "alone",
    "aloneDefender": "alone_defender",
    "alone_defender": "alone_defender",
    "card": "card",
    "dealer": "dealer",
    "upCard": "up_card",
    "up_card": "up_card",
    "dealNumber": "deal_number",
    "deal_number": "deal_number",
    "playerCards": "player_cards",
    "player_cards": "player_cards",
}
_TEXT: Final = frozenset(("kind", "call", "card", "up_card"))
_INT: Final = frozenset(("alone_defender", "dealer", "deal_number"))


@dataclass(frozen=True)
class LiveAction:
    """One logger action, as the live feed sends it (see :func:`LiveAction.from_json`).

    ``new_deal``: ``dealer`` and ``up_card`` (optional ``deal_number``, ``player_cards``);
    ``call``: ``call`` (``Pass``, ``Order``, a suit letter, ``n``, ``x``), optional ``alone``
    and ``alone_defender``; ``discard`` and ``card``: ``card``; ``undo``: nothing (it
    removes the last action of the last deal, or the deal itself when it has none).
    """

    kind: str
    call: str | None = None
    alone: bool | None = None
    alone_defender: int | None = None
    card: str | None = None
    dealer: int | None = None
    up_card: str | None = None
    deal_number: int | None = None
    player_cards: tuple[tuple[str, ...], ...] | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], *, source: str = "<input>") -> LiveAction:
        """Read an action's JSON (camelCase keys, as the feed's ``ActionIn``; ``seq`` is the
        feed's and ignored).  Values are checked for their JSON type only: what they mean
        is the deal's validation and replay's to judge.

        Raises:
            ActionError: not an object, an unknown key, no ``kind``, or a value of the wrong type.
        """
        here = Place(source=source)
        if not isinstance(obj, Mapping):
            raise ActionError(f"an action is a JSON object, not {type(obj).__name__}", here)
        fields: dict[str, Any] = {}
        for key, value in obj.items():
            if key == "seq":
                continue
            name = _KEYS.get(key)
            if name is None:
                raise ActionError(f"unknown action field {key!r}", here)
            if value is None:
                continue
            if name in _TEXT and not isinstance(value, str):
                raise ActionError(f"{key!r} must be a string, not {value!r}", here)
            if name in _INT and (isinstance(value, bool) or not isinstance(value, int)):
                raise ActionError(f"{key!r} must be an integer, not {value!r}", here)
            if name == "alone" and not isinstance(value, bool):
                raise ActionError(f"{key!r} must be true or false, not {value!r}", here)
            if name == "player_cards":
                if not isinstance(value, list) or not all(isinstance(h, list) and all(isinstance(c, str) for c in h) for h in value):
                    raise ActionError(f"{key!r} must be a list of lists of cards, not {value!r}", here)
                value = tuple(tuple(h) for h in value)
            fields[name] = value
        if "kind" not in fields:
            raise ActionError("an action needs 'kind'", here)
        return cls(**fields)


def opened(act: LiveAction, *, count: int, last: GameState | None, source: str) -> dict[str, Any]:
    """The JSON of the deal a ``new_deal`` opens after the game's ``count`` deals (``last``:
    the game's last state).

    Raises:
        ActionError: no dealer or up-card, or the deal on the table is not over.
    """
    if act.dealer is None or act.up_card is None:
        raise ActionError("new_deal needs 'dealer' and 'upCard'", Place(source=source))
    if count and last is not None and last.deal == count - 1 and not _deal_over(last):
        played = sum(len(t.cards) for t in last.tricks) + (len(last.trick.cards) if last.trick is not None and not last.trick.complete else 0)
        raise ActionError(
            f"new_deal while this deal is not over ({len(last.calls)} calls, {played} cards played): finish it or undo it first",
            Place(source=source, deal=count - 1),
        )
    initial: dict[str, Any] = {"dealer": act.dealer, "upCard": act.up_card}
    if act.player_cards is not None:
        initial["playerCards"] = [list(hand) for hand in act.player_cards]
    number = act.deal_number if act.deal_number is not None else count
    return {"dealNumber": number, "initialState": initial, "phases": []}


def written(deal: dict[str, Any], index: int, act: LiveAction, *, last: GameState | None, source: str) -> dict[str, Any] | None:
    """The JSON of the game's last deal (at ``index``) with a ``call``, ``discard``,
    ``card`` or ``undo`` written in: a new value (``deal`` is not changed); ``None`` for an
    undo on a deal with no call or card yet (the deal itself goes).  ``last`` is the game's
    last state: where an action goes can depend on the play (is the trick on the table
    complete?), which the replay knows.

    Raises:
        ActionError: the action does not fit the deal (a call after the play started, a
            discard before any call or after a round-2 call, a card before trump is made,
            a missing value).
    """
    kind = act.kind
    if kind == "undo":
        return _undone(deal) if _has_actions(deal) else None
    if kind == "call":
        return _called(deal, index, act, source)
    if kind == "discard":
        return _discarded(deal, index, act, last, source)
    return _played(deal, index, act, last, source)


def actions_of(document: Mapping[str, Any], *, deals: int | None = None) -> list[dict[str, Any]]:
    """The actions (JSON, ``seq`` from 1) that write an EGN JSON document's deals one by
    one onto a game with none (the first ``deals`` deals, if given): what a logger sends,
    for tests and benchmarks.  Annotations and alternative lines are not actions."""
    out: list[dict[str, Any]] = []
    for deal in list(document["deals"])[:deals]:
        init = deal["initialState"]
        out.append({"kind": "new_deal", "dealer": init["dealer"], "upCard": init["upCard"], "playerCards": init.get("playerCards")})
        for phase in deal["phases"]:
            if phase["type"] == _BIDDING:
                calls = phase["calls"]
                for i, call in enumerate(calls):
                    a: dict[str, Any] = {"kind": "call", "call": call}
                    if i == len(calls) - 1 and phase.get("isAlone") is not None:
                        a["alone"] = phase["isAlone"]
                    if i == len(calls) - 1 and phase.get("aloneDefender") is not None:
                        a["aloneDefender"] = phase["aloneDefender"]  # a lone defender sits the partner out
                    out.append(a)
                if "discard" in phase:
                    out.append({"kind": "discard", "card": phase["discard"]})
            else:
                for trick in phase["tricks"]:
                    out.extend({"kind": "card", "card": c} for c in trick)
    for i, a in enumerate(out, 1):
        a["seq"] = i
    return out


def _called(deal: dict[str, Any], index: int, act: LiveAction, source: str) -> dict[str, Any]:
    if not act.call:
        raise ActionError("call needs 'call'", Place(source=source, deal=index))
    if _find(deal, _PLAY) is not None:
        raise ActionError(f"call {act.call!r} after the play has started", Place(source=source, deal=index, phase=1, phase_type=_PLAY))
    phases = list(deal["phases"])
    at = _find(deal, _BIDDING)
    if at is None:
        bidding: dict[str, Any] = {"phaseNumber": 0, "type": _BIDDING, "calls": []}
        phases.insert(0, bidding)
    else:
        bidding = phases[at] = dict(phases[at])
    bidding["calls"] = [*bidding["calls"], act.call]
    if act.alone is not None:
        bidding["isAlone"] = act.alone
    if act.alone_defender is not None:
        bidding["aloneDefender"] = act.alone_defender
    return {**deal, "phases": phases}


def _discarded(deal: dict[str, Any], index: int, act: LiveAction, last: GameState | None, source: str) -> dict[str, Any]:
    if not act.card:
        raise ActionError("discard needs 'card'", Place(source=source, deal=index))
    at = _find(deal, _BIDDING)
    if at is None:
        raise ActionError(f"discard {act.card!r} before any call", Place(source=source, deal=index))
    making = [c for c in last.calls if c.call != "Pass"] if last is not None and last.deal == index else []
    if making and making[-1].round >= 2:
        raise ActionError(
            f"discard {act.card!r} after a round-{making[-1].round} call: the dealer picked up nothing",
            Place(source=source, deal=index, phase=0, phase_type=_BIDDING),
        )
    phases = list(deal["phases"])
    phases[at] = {**phases[at], "discard": act.card}
    return {**deal, "phases": phases}


def _played(deal: dict[str, Any], index: int, act: LiveAction, last: GameState | None, source: str) -> dict[str, Any]:
    if not act.card:
        raise ActionError("card needs 'card'", Place(source=source, deal=index))
    if last is None or last.deal != index or all(c.call == "Pass" for c in last.calls):
        raise ActionError(
            f"card {act.card!r} before trump was made: send the calls first",
            Place(source=source, deal=index, phase=0, phase_type=_BIDDING),
        )
    phases = list(deal["phases"])
    at = _find(deal, _PLAY)
    if at is None:
        play: dict[str, Any] = {"phaseNumber": len(phases), "type": _PLAY, "tricks": []}
        phases.append(play)
    else:
        play = phases[at] = dict(phases[at])
    tricks = list(play["tricks"])
    # the replay knows whether the trick on the table is complete (loners, sit-outs)
    if tricks and last.trick is not None and not last.trick.complete and last.kind == _CARD:
        tricks[-1] = [*tricks[-1], act.card]
    else:
        tricks.append([act.card])
    play["tricks"] = tricks
    return {**deal, "phases": phases}


def _find(deal: dict[str, Any], kind: str) -> int | None:
    """Position of the deal's first phase of ``kind``."""
    for i, phase in enumerate(deal.get("phases", [])):
        if isinstance(phase, dict) and phase.get("type") == kind:
            return i
    return None


def _has_actions(deal: dict[str, Any]) -> bool:
    """The deal records a call or a card (an undo removes one; else the deal goes)."""
    return any(
        (p.get("calls") if p.get("type") == _BIDDING else p.get("tricks")) for p in deal.get("phases", []) if isinstance(p, dict)
    )


def _undone(deal: dict[str, Any]) -> dict[str, Any]:
    """The deal without its last action: the last card, else the discard, else the last call
    (a bidding with no making call left loses its loner flags).  A phase left empty goes."""
    phases = list(deal.get("phases", []))
    at = _find(deal, _PLAY)
    if at is not None:
        play = dict(phases[at])
        tricks = list(play.get("tricks", []))
        if tricks:
            trick = list(tricks[-1])[:-1]
            if trick:
                tricks[-1] = trick
            else:
                tricks.pop()
        if tricks:
            play["tricks"] = tricks
            phases[at] = play
        else:
            del phases[at]
        return {**deal, "phases": phases}
    at = _find(deal, _BIDDING)
    if at is not None:
        bidding = dict(phases[at])
        if "discard" in bidding:
            del bidding["discard"]
            phases[at] = bidding
            return {**deal, "phases": phases}
        calls = list(bidding.get("calls", []))
        if calls:
            calls.pop()
            if all(c == "Pass" for c in calls):
                bidding.pop("isAlone", None)
                bidding.pop("aloneDefender", None)
        if calls:
            bidding["calls"] = calls
            phases[at] = bidding
        else:
            del phases[at]
    return {**deal, "phases": phases}


def _deal_over(state: GameState) -> bool:
    """The deal of ``state`` is scored, thrown in, or the game is over."""
    return state.deal_points is not None or state.thrown_in or state.game_over
