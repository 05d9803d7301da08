"""A game that grows one logger action at a time: :class:`LiveGame`, pushed as python-chess's ``Board``.

A live logger sends one action at a time: a new deal, a call, the dealer's discard, a card,
an undo (:class:`LiveAction`, the live feed's action JSON).  Writing each into the EGN
document and loading and replaying the whole game again costs more the longer the game
runs (the feed measured 2.8 ms at deal 2, 16 ms at deal 100).  A :class:`LiveGame` keeps
its replay deal by deal (each deal's steps, summary, alternative lines, problems, and the
running score after it: :class:`~engine.outcome.DealBlock`).  An action only ever changes
the last deal, so :meth:`LiveGame.push` writes it into that one deal's EGN JSON, validates
that deal (:func:`engine.validate.validate_deal`), replays it from the score before it
(:func:`engine.replay.replay_next`) and keeps the result, or refuses the action and
changes nothing.  The cost of a push is one deal's, at deal 100 as at deal 2.

Why the last deal is replayed whole instead of stepped on: where ``playerCards`` is not
given, the hands come from the cards each seat plays later (:mod:`engine.layout`), so a new
card can change the hands the deal's earlier steps show; a deal is at most about forty
steps.  :class:`Change` says which steps an action changed.

A push is refused (:class:`~engine.errors.EgnError`, naming the place) where the feed
refused it when it reloaded the whole document, with the same error:

* the action does not fit the game (:class:`~engine.errors.ActionError`: no deal yet, a
  card before trump is made, a new deal while one is being played...);
* the deal it writes breaks the schema (:class:`~engine.errors.SchemaError`, as a strict
  load words it);
* the deal's replay has an error it did not have before (typed as the replay typed it:
  a card not in the seat's hand, a call after the bidding ended...).  Warnings (a renege,
  facts a logger records from a real table) are accepted and listed on the change;
* the game, written as compact JSON, would be over :data:`~engine.load.MAX_INPUT` bytes
  (:class:`~engine.errors.SizeLimitError`): the one real limit on a live game's length,
  since no load accepts a bigger document.  There is no cap on the number of deals
  (the reference schema's 100, :data:`~engine.model.MAX_DEALS`, applies only to files
  written for the reference, such as the binary forms).

The full replay stays the oracle: after every push, :attr:`LiveGame.timeline` equals the
replay of :meth:`LiveGame.to_egn` (``tests/test_engine_incremental.py``).  Pure: no I/O.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .errors import ActionError, Place, Problem, SizeLimitError
from .load import MAX_INPUT, LoadedGame
from .model import FILE_TYPE, EgnDocument
from .outcome import Checkpoint, DealBlock
from .packed import unpack_deals
from .replay import final_score_problem, game_context, opening, replay_next, timeline_of
from .state import Branch, DealSummary, GameState, StepKind, Timeline, evolve_state
from .steps import JoinedSteps, Steps
from .validate import validate_deal, validate_document

__all__ = ["KINDS", "LiveAction", "Change", "LiveGame", "actions_of"]

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


@dataclass(frozen=True)
class Change:
    """What an accepted push did to the game's steps.

    The action changes the last deal only, so every step before it stands; within it, a
    new card may change the hands that earlier steps show (hands worked out from the play)
    without changing what was played at them.
    """

    #: leading steps equal before and after, hands included: their pictures stand
    shared: int
    #: the first step whose play changed, hands aside (a new step, or an undone one); None: none
    first: int | None
    #: the game's states from ``shared`` on, after the action: what it made or changed
    steps: tuple[GameState, ...]
    #: steps in the game now
    total: int
    #: the engine's warnings the action brought (rule breaches a logger records as facts)
    warnings: tuple[Problem, ...]


@dataclass(frozen=True)
class _Entry:
    """One deal of the game: its JSON as the document holds it, and its replay."""

    json: dict[str, Any] | str  # a packed deal stays a string; never mutated (a push makes a new one)
    block: DealBlock
    data: bytes  # ``json`` as compact JSON (the stored game is these, joined)
    known: frozenset[str]  # problems the load reported at this deal before any replay (repairs)


@dataclass(frozen=True)
class _Prefix:
    """The timeline's parts from the game's first ``count`` deals (every deal but the last,
    which actions change), kept between pushes so a timeline costs no pass over the game."""

    count: int
    last: _Entry | None  # the deal at ``count - 1`` (a prefix is good while it is still there)
    parts: tuple[Steps, ...]
    starts: tuple[int, ...]
    steps: int
    deals: tuple[DealSummary, ...]
    branches: tuple[Branch, ...]
    problems: tuple[Problem, ...]
    checkpoints: tuple[Checkpoint, ...]

    def extended(self, entry: _Entry) -> _Prefix:
        """The prefix with one more deal (tuple joins: a copy of pointers, no Python loop)."""
        block = entry.block
        size = len(block.steps)
        return _Prefix(
            count=self.count + 1,
            last=entry,
            parts=self.parts + (block.steps,) if size else self.parts,
            starts=self.starts + (self.steps,) if size else self.starts,
            steps=self.steps + size,
            deals=self.deals + (block.summary,) if block.summary is not None else self.deals,
            branches=self.branches + block.branches,
            problems=self.problems + block.problems,
            checkpoints=self.checkpoints + (block.checkpoint,),
        )


def _compact(value: Any) -> bytes:
    """The compact JSON a game is stored as (the feed's ``document_bytes``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class LiveGame:
    """A game that actions are pushed onto, one at a time (see the module docstring).

    Build one from a loaded game (:meth:`from_loaded`), a validated document, or players
    and a ruleset with no deal yet (:meth:`new`).  :meth:`push` applies an action or
    refuses it, leaving the game unchanged; :meth:`pop` undoes the last action;
    :attr:`timeline` is the game's replay and :meth:`to_egn` its EGN document.  Mutable,
    as python-chess's ``Board``: :meth:`copy` is cheap (a pointer per deal), for a caller
    that keeps the game before an action until the action is stored.
    """

    def __init__(
        self, document: EgnDocument, *, source: str = "<input>", problems: Sequence[Problem] = (), timeline: Timeline | None = None
    ) -> None:
        """A live game continuing ``document`` (validated).

        ``problems``: what loading it reported (a lenient load's repairs), for the refusal
        rule (an action is refused for an error its deal did not have).  ``timeline``: its
        replay, if at hand (a load's): the deals are cut out of it instead of replayed
        again, where its checkpoints say it is this document's full replay.
        """
        self.source = source
        self.metadata = document.metadata
        ctx = game_context(document, source=source)
        self._ctx = ctx.fresh()  # each replay of a deal collects its own problems
        self._head = tuple(ctx.problems)  # the game's own, before any deal
        self._opening = opening(document, ctx, (source, document.metadata, False))
        whole = document.to_json()
        self._header = {k: v for k, v in whole.items() if k != "deals"}
        self._lead = _compact({**self._header, "deals": []})[:-2]  # the document's bytes up to its first deal
        known: dict[int, set[str]] = {}
        for p in problems:
            if p.place.deal is not None:
                known.setdefault(p.place.deal, set()).add(str(p))
        cut = timeline is not None and _replays(timeline, document, self._opening, self._head)
        entries: list[_Entry] = []
        before = self._opening
        for index, (js, raw, deal) in enumerate(zip(whole["deals"], document.deals, unpack_deals(document, source=source))):
            if cut and timeline is not None:
                block = _cut(timeline, before, timeline.checkpoints[index])
            else:
                block = replay_next(self._ctx.fresh(), index, raw, deal, before)
            entries.append(_Entry(js, block, _compact(js), frozenset(known.get(index, ()))))
            before = block.checkpoint
        self._entries = entries
        self._bytes = len(self._lead) + sum(len(e.data) for e in entries) + max(0, len(entries) - 1) + 2
        self._timeline: Timeline | None = None
        self._empty = _Prefix(0, None, (), (), 0, (), (), self._head, ())
        self._prefix = self._empty

    # -- making one -------------------------------------------------------------

    @classmethod
    def from_loaded(cls, loaded: LoadedGame) -> LiveGame:
        """The live game continuing a loaded game (:func:`engine.load.load_game`; its replay
        is reused, not made again)."""
        return cls(loaded.document, source=loaded.source, problems=loaded.problems, timeline=loaded.timeline)

    @classmethod
    def new(cls, metadata: Mapping[str, Any], *, source: str = "<input>", version: str = "1.4") -> LiveGame:
        """A game with no deal yet: ``metadata`` as EGN writes it (players, initial score, ruleset...).

        Raises:
            SchemaError: the metadata breaks the schema (named with its path).
        """
        document = validate_document(
            {"fileType": FILE_TYPE, "version": version, "metadata": dict(metadata), "deals": []}, source=source, reference=False
        )
        return cls(document, source=source)

    def copy(self) -> LiveGame:
        """The same game, which later pushes onto either leave the other alone."""
        other = copy.copy(self)
        other._entries = list(self._entries)
        return other

    # -- reading it -------------------------------------------------------------

    def __len__(self) -> int:
        """Deals in the game."""
        return len(self._entries)

    @property
    def size(self) -> int:
        """Bytes of :meth:`to_egn_bytes`."""
        return self._bytes

    def to_egn_bytes(self) -> bytes:
        """:meth:`to_egn` as compact JSON (UTF-8, the feed's stored form), joined from each
        deal's bytes kept since the deal last changed: no pass of a JSON encoder over the game."""
        return self._lead + b",".join([e.data for e in self._entries]) + b"]}"

    @property
    def timeline(self) -> Timeline:
        """The game's replay: equal to a full replay of :meth:`to_egn`, built from the deals'
        replays (a pointer per deal and per problem), once per change."""
        if self._timeline is None:
            entries = self._entries
            whole = self._before_last().extended(entries[-1]) if entries else self._empty
            state = entries[-1].block.checkpoint if entries else self._opening
            last = self._final_problem(state)
            self._timeline = timeline_of(
                steps=JoinedSteps.of(whole.parts, whole.starts, whole.steps),
                deals=whole.deals,
                branches=whole.branches,
                problems=whole.problems + (last,) if last is not None else whole.problems,
                state=state,
                players=self._ctx.players,
                title=self.metadata.title,
                checkpoints=whole.checkpoints,
            )
        return self._timeline

    def _before_last(self) -> _Prefix:
        """The prefix of every deal but the last: kept, extended by a deal when one is added,
        built again only when an undo removed a deal it holds."""
        entries = self._entries
        want = len(entries) - 1
        prefix = self._prefix
        if prefix.count > want or (prefix.count and entries[prefix.count - 1] is not prefix.last):
            prefix = self._empty
        while prefix.count < want:
            prefix = prefix.extended(entries[prefix.count])
        self._prefix = prefix
        return prefix

    @property
    def last(self) -> GameState | None:
        """The game's last state (``None`` before any step)."""
        for e in reversed(self._entries):
            if len(e.block.steps):
                return e.block.steps[-1]
        return None

    def to_egn(self) -> dict[str, Any]:
        """The game as an EGN JSON document: the one the feed built by writing each action
        into the document and loading it (strict).  Fresh top-level values; the deals'
        values are the game's own and must not be changed."""
        return {**self._header, "deals": [e.json for e in self._entries]}

    # -- changing it ------------------------------------------------------------

    def push(self, action: LiveAction | Mapping[str, Any]) -> Change:
        """Apply one action (a :class:`LiveAction` or its JSON), or refuse it.

        Raises:
            EgnError: refused, and the game is unchanged: :class:`~engine.errors.ActionError`
                (does not fit the game), :class:`~engine.errors.SchemaError` (the deal it
                writes breaks the schema), :class:`~engine.errors.SizeLimitError` (the game
                would be over :data:`~engine.load.MAX_INPUT` bytes), or the replay's first
                new error in the deal, typed as the replay typed it.
        """
        act = action if isinstance(action, LiveAction) else LiveAction.from_json(action, source=self.source)
        kind = act.kind
        if kind == "new_deal":
            return self._new_deal(act)
        if kind not in KINDS:
            raise ActionError(f"unknown action kind {kind!r}", Place(source=self.source))
        entries = self._entries
        if not entries:
            raise ActionError(f"{kind} needs a deal: send new_deal first", Place(source=self.source))
        index = len(entries) - 1
        deal = entries[-1].json
        if not isinstance(deal, dict):
            raise ActionError(f"{kind}: this deal is packed (a condensed string); actions edit deals written out in JSON", Place(source=self.source, deal=index))
        if kind == "undo":
            return self._drop() if not _has_actions(deal) else self._write(index, _undone(deal))
        if kind == "call":
            return self._write(index, self._called(deal, index, act))
        if kind == "discard":
            return self._write(index, self._discarded(deal, index, act))
        return self._write(index, self._played(deal, index, act))

    def pop(self) -> Change:
        """Undo the last action (``push`` of an ``undo``): the last call, discard or card of
        the last deal, or the deal itself when it has none.

        Raises:
            EgnError: as :meth:`push` (nothing to undo: no deal).
        """
        return self.push(LiveAction("undo"))

    # -- the actions, written into the last deal's JSON (copied, never changed) --

    def _new_deal(self, act: LiveAction) -> Change:
        if act.dealer is None or act.up_card is None:
            raise ActionError("new_deal needs 'dealer' and 'upCard'", Place(source=self.source))
        count = len(self._entries)
        last = self.last
        if count and last is not None and last.deal == count - 1 and not _deal_over(last):
            played = sum(len(t.cards) for t in last.tricks) + (len(last.trick.cards) if last.trick is not None and not last.trick.complete else 0)
            raise ActionError(
                f"new_deal while this deal is not over ({len(last.calls)} calls, {played} cards played): finish it or undo it first",
                Place(source=self.source, deal=count - 1),
            )
        initial: dict[str, Any] = {"dealer": act.dealer, "upCard": act.up_card}
        if act.player_cards is not None:
            initial["playerCards"] = [list(hand) for hand in act.player_cards]
        number = act.deal_number if act.deal_number is not None else count
        return self._write(count, {"dealNumber": number, "initialState": initial, "phases": []})

    def _called(self, deal: dict[str, Any], index: int, act: LiveAction) -> dict[str, Any]:
        if not act.call:
            raise ActionError("call needs 'call'", Place(source=self.source, deal=index))
        if _find(deal, _PLAY) is not None:
            raise ActionError(f"call {act.call!r} after the play has started", Place(source=self.source, deal=index, phase=1, phase_type=_PLAY))
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

    def _discarded(self, deal: dict[str, Any], index: int, act: LiveAction) -> dict[str, Any]:
        if not act.card:
            raise ActionError("discard needs 'card'", Place(source=self.source, deal=index))
        at = _find(deal, _BIDDING)
        if at is None:
            raise ActionError(f"discard {act.card!r} before any call", Place(source=self.source, deal=index))
        last = self.last
        making = [c for c in last.calls if c.call != "Pass"] if last is not None and last.deal == index else []
        if making and making[-1].round >= 2:
            raise ActionError(
                f"discard {act.card!r} after a round-{making[-1].round} call: the dealer picked up nothing",
                Place(source=self.source, deal=index, phase=0, phase_type=_BIDDING),
            )
        phases = list(deal["phases"])
        phases[at] = {**phases[at], "discard": act.card}
        return {**deal, "phases": phases}

    def _played(self, deal: dict[str, Any], index: int, act: LiveAction) -> dict[str, Any]:
        if not act.card:
            raise ActionError("card needs 'card'", Place(source=self.source, deal=index))
        last = self.last
        if last is None or last.deal != index or all(c.call == "Pass" for c in last.calls):
            raise ActionError(
                f"card {act.card!r} before trump was made: send the calls first",
                Place(source=self.source, deal=index, phase=0, phase_type=_BIDDING),
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

    # -- judging and keeping a deal ------------------------------------------------

    def _write(self, index: int, js: dict[str, Any]) -> Change:
        """Make ``js`` the deal at ``index`` (the last deal, or a new one after it), or refuse it."""
        entries = self._entries
        old = entries[index] if index < len(entries) else None
        data = _compact(js)
        total = self._bytes + len(data) - (len(old.data) if old is not None else (-1 if entries else 0))
        if total > MAX_INPUT:
            raise SizeLimitError(
                f"the game would be {total} bytes of JSON: a game is limited to {MAX_INPUT} bytes (8 MiB), what a load accepts; start a new game",
                Place(source=self.source, deal=index),
            )
        raw = validate_deal(js, index, source=self.source)
        before = entries[index - 1].block.checkpoint if index else self._opening
        block = replay_next(self._ctx.fresh(), index, raw, raw, before)
        seen = {str(p) for p in old.block.problems} | old.known if old is not None else set()
        fresh = [p for p in block.problems if str(p) not in seen]
        for p in fresh:
            if p.severity == "error":
                raise p.error()
        warnings = fresh
        old_final = self._final_problem(entries[-1].block.checkpoint if entries else self._opening)
        new_final = self._final_problem(block.checkpoint)
        if new_final is not None and (old_final is None or str(new_final) != str(old_final)):
            warnings.append(new_final)
        entry = _Entry(js, block, data, frozenset())
        if old is None:
            entries.append(entry)
        else:
            entries[index] = entry
        self._bytes = total
        self._timeline = None
        return self._change(before.steps, old.block if old is not None else None, block, tuple(warnings))

    def _drop(self) -> Change:
        """Remove the last deal (an undo on a deal with no action yet)."""
        entries = self._entries
        old = entries.pop()
        self._bytes -= len(old.data) + (1 if entries else 0)
        self._timeline = None
        start = entries[-1].block.checkpoint if entries else self._opening
        final = self._final_problem(start)
        before = self._final_problem(old.block.checkpoint)
        warnings = (final,) if final is not None and (before is None or str(final) != str(before)) else ()
        return self._change(start.steps, old.block, None, warnings)

    def _change(self, offset: int, before: DealBlock | None, after: DealBlock | None, warnings: tuple[Problem, ...]) -> Change:
        """The change from the last deal's replay ``before`` to ``after`` (None: no such deal),
        whose steps both start at step ``offset``."""
        old, new = before.steps if before else Steps(), after.steps if after else Steps()
        n = min(len(old), len(new))
        same = 0
        if before is not None and after is not None:
            # equal records make equal states (the states are built only where they differ)
            a, b = before.records, after.records
            built = old.records()
            while same < n:
                if a[same] == b[same]:
                    state = built[same]
                    if type(state) is GameState:  # built already: shared, not built again
                        new.adopt(same, state)
                elif old[same] != new[same]:
                    break
                same += 1
        first: int | None = None
        for i in range(same, n):
            if _without_hands(old[i]) != _without_hands(new[i]):
                first = i
                break
        else:
            if len(old) != len(new):
                first = n
        return Change(
            shared=offset + same,
            first=None if first is None else offset + first,
            steps=new[same:],
            total=offset + len(new),
            warnings=warnings,
        )

    def _final_problem(self, state: Checkpoint) -> Problem | None:
        return final_score_problem(self.source, self.metadata.finalScore, state)


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
                    out.append(a)
                if "discard" in phase:
                    out.append({"kind": "discard", "card": phase["discard"]})
            else:
                for trick in phase["tricks"]:
                    out.extend({"kind": "card", "card": c} for c in trick)
    for i, a in enumerate(out, 1):
        a["seq"] = i
    return out


def _replays(timeline: Timeline, document: EgnDocument, start: Checkpoint, head: tuple[Problem, ...]) -> bool:
    """``timeline`` is the full replay of ``document`` under ``start``'s key, whose own
    problems are ``head`` (its checkpoints say so)."""
    cps = timeline.checkpoints
    if len(cps) != len(document.deals) or not isinstance(timeline.steps, (Steps, JoinedSteps)):
        return False
    if timeline.problems[: len(head)] != head:
        return False
    return all(isinstance(cp, Checkpoint) and cp.key == start.key and (cp.deal is raw or cp.deal == raw) for cp, raw in zip(cps, document.deals))


def _cut(timeline: Timeline, before: Checkpoint, after: Checkpoint) -> DealBlock:
    """The block of the deal between checkpoints ``before`` and ``after``, cut out of its replay."""
    steps = timeline.steps
    records = steps.records()[before.steps : after.steps] if isinstance(steps, Steps) else steps[before.steps : after.steps]
    return DealBlock(
        steps=Steps(records),
        records=tuple(records),
        summary=timeline.deals[before.summaries] if after.summaries > before.summaries else None,
        branches=timeline.branches[before.branches : after.branches],
        problems=timeline.problems[before.problems : after.problems],
        checkpoint=after,
    )


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


def _without_hands(state: GameState) -> GameState:
    """A step with its hands left out: what was played, which is what a correction changes."""
    return evolve_state(state, hands=(), hands_known=())
