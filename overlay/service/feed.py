"""Live feed: whole games, single actions and followed files, turned into new timelines.

No rules live here.  A single action is written into the EGN JSON document (a call appended
to the bidding phase, a card to the last trick...), then the whole document is loaded and
replayed by the engine, which judges it: an action whose replay reports a new problem is
refused with the engine's own text (file, deal, phase, index).  Where the shape of the
document depends on the play (is the last trick full?) the engine's last
:class:`~engine.state.GameState` answers, not a rule written here.

A match (``.emn``) loads as every game it holds, played one after the other: its
:attr:`Loaded.steps` run through game 1, then game 2...; :attr:`Loaded.parts` says where each
game starts and how to label it ("Game 2 of 6").  A plain game is a single part.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import copy
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from engine.errors import Place, Problem, SchemaError
from engine.load import MAX_INPUT
from engine.state import GameState, StepKind, Timeline

from .errors import BadRequest, TooLarge
from .protocol import ActionIn, FeedGame

__all__ = [
    "Part",
    "Loaded",
    "load_bytes",
    "apply_action",
    "compare",
    "new_problems",
    "new_warnings",
    "document_bytes",
    "refuse_new_problems",
    "digest",
    "feed_game_bytes",
    "actions_of",
]



@dataclass(frozen=True)
class Part:
    """One game of what a channel plays (the only one, or one game of a match)."""

    index: int  # game index in the match file (0 for a plain game)
    timeline: Timeline
    first_step: int  # global step index of the game's first state
    label: str | None  # "Game 2 of 6" (None for a plain game)

    @property
    def title(self) -> str | None:
        """What the scene shows as its title: the game's own title and, in a match, which game."""
        if self.label is None:
            return self.timeline.title
        return f"{self.timeline.title} \u2014 {self.label}" if self.timeline.title else self.label


@dataclass(frozen=True)
class Loaded:
    """A game (or match) the engine accepted: the bytes kept on disk and what they replay to.

    ``timeline`` is the game's replay; for a match it is the first game's (single actions
    and incremental replay only apply to plain games).  ``steps`` is what the Director plays.
    """

    data: bytes
    source: str
    document: dict[str, Any]  # EGN JSON (what single actions edit); EMN JSON for a match
    timeline: Timeline
    digest: str
    problems: tuple[Problem, ...]
    parts: tuple[Part, ...] = ()
    steps: tuple[GameState, ...] = ()
    match: bool = False
    games_in_file: int = 1
    _firsts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.parts:
            object.__setattr__(self, "parts", (Part(0, self.timeline, 0, None),))
            object.__setattr__(self, "steps", tuple(self.timeline.steps))
        object.__setattr__(self, "_firsts", tuple(p.first_step for p in self.parts))

    def part_of(self, step: int) -> Part:
        """The game that global step ``step`` belongs to."""
        i = bisect.bisect_right(self._firsts, step) - 1
        return self.parts[max(i, 0)]

    def slim(self) -> Loaded:
        """The same replay without the stored bytes (kept for delayed outputs)."""
        return replace(self, data=b"")


def load_bytes(data: bytes, *, source: str, strict: bool = True, previous: Loaded | None = None) -> Loaded:
    """Load a game of any supported format (JSON ``.egn``, ``.egnb``, ``.emn``).

    ``strict`` refuses schema problems (the live feed); lenient repairs and lists them.
    ``previous`` (the channel's current game) lets the engine replay only the deals that
    changed.  A match loads every game it holds (lenient: games the engine cannot read are
    left out, and the others keep their numbers).

    Raises:
        TooLarge: more than :data:`MAX_INPUT` bytes.
        EgnError: the engine's typed error for a document it cannot accept.
    """
    from engine.load import LoadedMatch, load_any

    if len(data) > MAX_INPUT:
        raise TooLarge(f"{source}: input of {len(data)} bytes is over the {MAX_INPUT} byte cap")
    if not data.strip():
        raise BadRequest(f"{source}: empty input")
    prev = previous.timeline if previous is not None and not previous.match else None
    loaded = load_any(data, source=source, strict=strict, previous=prev)
    if isinstance(loaded, LoadedMatch):
        return _match(data, loaded, source=source)
    doc = loaded.document
    document = doc.to_json() if hasattr(doc, "to_json") else dict(doc)
    if not strict:
        _refuse_blank(document, loaded.all_problems, source=source)
    return Loaded(
        data=bytes(data),
        source=source,
        document=document,
        timeline=loaded.timeline,
        digest=digest(data),
        problems=tuple(loaded.all_problems),
    )


def _refuse_blank(document: dict[str, Any], problems: tuple[Problem, ...], *, source: str) -> None:
    """A lenient load may repair a document, but not into a game with nobody at the table:
    ``{}`` or a truncated save would otherwise blank a channel that had a good game.

    Raises:
        EgnError: the engine's first error about the document (typed as the engine typed it).
    """
    metadata = document.get("metadata")
    if isinstance(metadata, dict) and metadata.get("players"):
        return
    first = next((p for p in problems if p.severity == "error"), None)
    if first is not None:
        raise first.error()
    raise SchemaError("the game lists no players", Place(source=source, path="/metadata/players"))


def _match(data: bytes, loaded: Any, *, source: str) -> Loaded:
    games = loaded.games
    if not games:
        raise SchemaError("the match holds no games the engine can read", Place(source=source))
    listed = loaded.match.get("games") if isinstance(loaded.match, dict) else None
    total = max(len(listed) if isinstance(listed, list) else 0, len(games))
    parts: list[Part] = []
    steps: list[GameState] = []
    problems: list[Problem] = []
    for pos, g in enumerate(games):
        # the engine names each game "<source> game <i>" (i = its index in the file)
        tail = g.source.rsplit(" game ", 1)[-1]
        index = int(tail) if tail.isdigit() else pos
        parts.append(Part(index, g.timeline, len(steps), f"Game {index + 1} of {total}"))
        steps.extend(g.timeline.steps)
        problems.extend(g.all_problems)
    return Loaded(
        data=bytes(data),
        source=source,
        document=dict(loaded.match),
        timeline=games[0].timeline,
        digest=digest(data),
        problems=tuple(problems),
        parts=tuple(parts),
        steps=tuple(steps),
        match=True,
        games_in_file=total,
    )


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def feed_game_bytes(message: FeedGame) -> bytes:
    """The bytes of a whole game sent on a feed socket (a JSON ``document``, or ``data`` as
    text or base64), as a ``PUT …/game`` body: what the owner loads, on one box and when
    another process forwards the frame (:mod:`overlay.cluster.relay`).

    Raises:
        BadRequest: neither ``document`` nor ``data``, or ``data`` that is not base64.
    """
    if message.document is not None:
        return json.dumps(message.document, ensure_ascii=False).encode()
    if message.data is None:
        raise BadRequest("game message needs 'document' or 'data'")
    if message.base64:
        try:
            return base64.b64decode(message.data, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("game 'data' is not valid base64") from None
    return message.data.encode()


def document_bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _first_changed_deal(old: dict[str, Any], new: dict[str, Any]) -> int | None:
    """First deal whose JSON differs (0 when anything outside the deals differs)."""
    if any(old.get(k) != new.get(k) for k in set(old) | set(new) if k != "deals"):
        return 0
    a, b = old.get("deals", []), new.get("deals", [])
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def compare(old: Loaded | None, new: Loaded) -> tuple[int, int | None]:
    """How ``new`` differs from ``old``, the game it replaces: ``(shared, first)``.

    ``shared``: how many leading steps of ``new`` are equal states (hands included) to
    ``old``'s, so their pictures are the same and a new revision need not draw them again
    (0 with no old game, for a match or a changed title: what a scene shows besides the
    state).  ``first``: the first step that replays differently, hands aside (see
    :func:`_played`; None: identical).  The replay is a function of the document, so the
    steps of the deals before the first changed deal are equal and are not compared.
    """
    if old is None:
        return 0, (0 if len(new.steps) else None)
    if old.match or new.match:
        return 0, _first_unequal(old.steps, new.steps, 0)
    a, b = old.timeline.steps, new.timeline.steps
    n = min(len(a), len(b))
    deal = _first_changed_deal(old.document, new.document)
    deals = old.timeline.deals
    if deal is None:
        equal = n
    elif len(deals) == len(old.document.get("deals", [])):
        equal = min(deals[deal].first_step if deal < len(deals) else len(a), n)
    else:
        equal = 0
    while equal < n and a[equal] == b[equal]:
        equal += 1
    shared = equal if old.timeline.title == new.timeline.title else 0
    if deal is None and len(a) == len(b):
        return shared, None
    return shared, _first_unequal(a, b, equal)


def _first_unequal(a: Any, b: Any, start: int) -> int | None:
    for i in range(start, min(len(a), len(b))):
        if a[i] != b[i] and _played(a[i]) != _played(b[i]):
            return i
    if len(a) != len(b):
        return min(len(a), len(b))
    return None


def _played(state: Any) -> Any:
    """A step without its hands.

    Hands not given in the file are worked out from the cards each seat plays later, so
    every new card also fills in the hands of earlier steps.  That is not a correction of
    what happened: only a change in the actions (calls, cards, tricks, score...) is.
    """
    return replace(state, hands=(), hands_known=(), hands_recorded=()) if isinstance(state, GameState) else state


def new_warnings(old: Loaded | None, new: Loaded) -> list[str]:
    """The engine's warnings in ``new`` that ``old`` did not have, as text (for the ack)."""
    seen = {str(p) for p in (old.problems if old else ())}
    return [str(p) for p in new.problems if p.severity != "error" and str(p) not in seen]


def new_problems(old: Loaded | None, new: Loaded) -> list[Problem]:
    """Problems of ``new`` that ``old`` did not have (errors only)."""
    seen = {str(p) for p in (old.problems if old else ())}
    return [p for p in new.problems if p.severity == "error" and str(p) not in seen]


# --------------------------------------------------------------------------- actions


def _place(source: str, deal: int | None = None, **kw: Any) -> Place:
    return Place(source=source, deal=deal, **kw)


def _phase(deal: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for phase in deal.get("phases", []):
        if isinstance(phase, dict) and phase.get("type") == kind:
            return phase
    return None


def _last_state(timeline: Timeline) -> GameState | None:
    return timeline.steps[-1] if timeline.steps else None


def _deal_over(state: GameState) -> bool:
    """The deal of ``state`` is scored, thrown in, or the game is over."""
    return state.deal_points is not None or state.thrown_in or state.game_over


def apply_action(base: Loaded | None, action: ActionIn, *, source: str) -> dict[str, Any]:
    """The EGN document after ``action``; the caller loads it so the engine judges it.

    Raises:
        BadRequest: the action does not fit the document's shape (no deal to play in, a
            missing field) -- named with the deal and phase like the engine's errors.
    """
    if base is None:
        raise BadRequest(f"{source}: no game loaded: PUT a game (with players) before sending actions")
    if base.match:
        raise BadRequest(
            f"{source}: the channel holds a match ({len(base.parts)} games): single actions edit one game; "
            "PUT the whole match instead"
        )
    # only the last deal changes: copy it, share the rest (documents are never mutated)
    doc = dict(base.document)
    deals: list[Any] = list(doc.get("deals", []))
    if deals and isinstance(deals[-1], dict):
        deals[-1] = copy.deepcopy(deals[-1])
    doc["deals"] = deals
    kind = action.kind

    if kind == "new_deal":
        if action.dealer is None or action.up_card is None:
            raise BadRequest(f"{source}: new_deal needs 'dealer' and 'upCard'")
        last = _last_state(base.timeline)
        # the engine's last state says whether the deal on the table is over
        if deals and last is not None and last.deal == len(deals) - 1 and not _deal_over(last):
            played = sum(len(t.cards) for t in last.tricks) + (
                len(last.trick.cards) if last.trick is not None and not last.trick.complete else 0
            )
            raise BadRequest(
                f"{_place(source, len(deals) - 1).describe()}: new_deal while this deal is not over "
                f"({len(last.calls)} calls, {played} cards played): finish it or undo it first"
            )
        number = action.deal_number if action.deal_number is not None else len(deals)
        initial: dict[str, Any] = {"dealer": action.dealer, "upCard": action.up_card}
        if action.player_cards is not None:
            initial["playerCards"] = action.player_cards
        deals.append({"dealNumber": number, "initialState": initial, "phases": []})
        return doc

    if not deals or not isinstance(deals[-1], dict):
        raise BadRequest(f"{source}: {kind} needs a deal: send new_deal first")
    index = len(deals) - 1
    deal = deals[-1]
    phases: list[dict[str, Any]] = deal.setdefault("phases", [])

    if kind == "undo":
        if _undo_removes_deal(base, index):
            deals.pop()
        else:
            _undo(deal)
        return doc

    if kind == "call":
        if not action.call:
            raise BadRequest(f"{_place(source, index).describe()}: call needs 'call'")
        if _phase(deal, "TRICK_PLAY") is not None:
            raise BadRequest(
                f"{_place(source, index, phase=1, phase_type='TRICK_PLAY').describe()}: "
                f"call {action.call!r} after the play has started"
            )
        bidding = _phase(deal, "EUCHRE_BIDDING")
        if bidding is None:
            bidding = {"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": []}
            phases.insert(0, bidding)
        bidding["calls"].append(action.call)
        if action.alone is not None:
            bidding["isAlone"] = action.alone
        if action.alone_defender is not None:
            bidding["aloneDefender"] = action.alone_defender
        return doc

    if kind == "discard":
        if not action.card:
            raise BadRequest(f"{_place(source, index).describe()}: discard needs 'card'")
        bidding = _phase(deal, "EUCHRE_BIDDING")
        if bidding is None:
            raise BadRequest(f"{_place(source, index).describe()}: discard {action.card!r} before any call")
        last = _last_state(base.timeline)
        making = [c for c in last.calls if c.call != "Pass"] if last is not None and last.deal == index else []
        if making and making[-1].round >= 2:
            raise BadRequest(
                f"{_place(source, index, phase=0, phase_type='EUCHRE_BIDDING').describe()}: discard "
                f"{action.card!r} after a round-{making[-1].round} call: the dealer picked up nothing"
            )
        bidding["discard"] = action.card
        return doc

    if kind == "card":
        if not action.card:
            raise BadRequest(f"{_place(source, index).describe()}: card needs 'card'")
        last = _last_state(base.timeline)
        made = last is not None and last.deal == index and any(c.call != "Pass" for c in last.calls)
        if not made:
            raise BadRequest(
                f"{_place(source, index, phase=0, phase_type='EUCHRE_BIDDING').describe()}: card {action.card!r} "
                "before trump was made: send the calls first"
            )
        play = _phase(deal, "TRICK_PLAY")
        if play is None:
            play = {"phaseNumber": len(phases), "type": "TRICK_PLAY", "tricks": []}
            phases.append(play)
        tricks: list[list[str]] = play["tricks"]
        # the engine knows whether the trick on the table is complete (loners, sit-outs)
        trick_open = (
            bool(tricks)
            and last is not None
            and last.deal == index
            and last.trick is not None
            and not last.trick.complete
            and last.kind == StepKind.CARD
        )
        if trick_open:
            tricks[-1].append(action.card)
        else:
            tricks.append([action.card])
        return doc

    raise BadRequest(f"{source}: unknown action kind {kind!r}")  # pragma: no cover - pydantic


def _undo_removes_deal(base: Loaded, index: int) -> bool:
    """An undo on a deal with no actions removes the deal itself."""
    deal = base.document["deals"][index]
    return not any(
        (p.get("calls") if p.get("type") == "EUCHRE_BIDDING" else p.get("tricks"))
        for p in deal.get("phases", [])
        if isinstance(p, dict)
    )


def _undo(deal: dict[str, Any]) -> None:
    phases: list[dict[str, Any]] = deal.get("phases", [])
    play = _phase(deal, "TRICK_PLAY")
    if play is not None:
        tricks = play.get("tricks", [])
        if tricks:
            tricks[-1].pop()
            if not tricks[-1]:
                tricks.pop()
        if not tricks:
            phases.remove(play)
        return
    bidding = _phase(deal, "EUCHRE_BIDDING")
    if bidding is not None:
        if "discard" in bidding:
            del bidding["discard"]
            return
        calls = bidding.get("calls", [])
        if calls:
            calls.pop()
            if not calls or all(c == "Pass" for c in calls):
                bidding.pop("isAlone", None)
                bidding.pop("aloneDefender", None)
        if not calls:
            phases.remove(bidding)
        return


def refuse_new_problems(old: Loaded | None, new: Loaded) -> None:
    """Raise the first problem the action introduced (the engine's text and place).

    Raises:
        EgnError: typed as the engine typed the problem.
    """
    fresh = new_problems(old, new)
    if fresh:
        raise fresh[0].error()


def actions_of(doc: dict[str, Any], *, deals: int | None = None) -> list[dict[str, Any]]:
    """The logger actions that write ``doc`` deal by deal (seq from 1; the first ``deals``
    deals only, if given): the inverse of :func:`apply_action`, for benchmarks and tests."""
    out: list[dict[str, Any]] = []
    for deal in doc["deals"][:deals]:
        init = deal["initialState"]
        out.append({"kind": "new_deal", "dealer": init["dealer"], "upCard": init["upCard"], "playerCards": init.get("playerCards")})
        for phase in deal["phases"]:
            if phase["type"] == "EUCHRE_BIDDING":
                calls = phase["calls"]
                for i, call in enumerate(calls):
                    a: dict[str, Any] = {"kind": "call", "call": call}
                    if i == len(calls) - 1 and phase.get("isAlone") is not None:
                        a["alone"] = phase["isAlone"]
                    out.append(a)
                if "discard" in phase:
                    out.append({"kind": "discard", "card": phase["discard"]})
            else:
                for trick in phase["tricks"]:
                    out.extend({"kind": "card", "card": c} for c in trick)
    for i, a in enumerate(out, 1):
        a["seq"] = i
    return out
