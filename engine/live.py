"""A game that grows one logger action at a time: :class:`LiveGame`, pushed as python-chess's ``Board``.

A live logger sends one action at a time: a new deal, a call, the dealer's discard, a card,
an undo (:class:`~engine.actions.LiveAction`, the live feed's action JSON).  Writing each
into the EGN document and loading and replaying the whole game again costs more the longer
the game runs (the feed measured 2.8 ms at deal 2, 16 ms at deal 100).  A :class:`LiveGame`
keeps its replay deal by deal (each deal's steps, summary, alternative lines, problems, and
the running score after it: :class:`~engine.outcome.DealBlock`).  An action only ever changes
the last deal, so :meth:`LiveGame.push` writes it into that one deal's EGN JSON
(:mod:`engine.actions`), validates
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
replay of :meth:`LiveGame.to_egn` (``tests/engine/test_incremental.py``).  Pure: no I/O.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import KINDS, LiveAction, actions_of, opened, written
from .errors import ActionError, Place, Problem, SizeLimitError
from .load import MAX_INPUT, LoadedGame
from .model import FILE_TYPE, EgnDocument
from .outcome import Checkpoint, DealBlock
from .packed import unpack_deals
from .replay import final_score_problem, game_context, opening, replay_next, timeline_of
from .state import Branch, DealSummary, GameState, Timeline, evolve_state
from .steps import JoinedSteps, Steps
from .validate import validate_deal, validate_document

__all__ = ["LiveGame", "Change", "LiveAction", "KINDS", "actions_of"]  # the last three: engine.actions', re-exported

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
                rules=self._ctx.rules,
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
        entries = self._entries
        if kind == "new_deal":
            return self._write(len(entries), opened(act, count=len(entries), last=self.last, source=self.source))
        if kind not in KINDS:
            raise ActionError(f"unknown action kind {kind!r}", Place(source=self.source))
        if not entries:
            raise ActionError(f"{kind} needs a deal: send new_deal first", Place(source=self.source))
        index = len(entries) - 1
        deal = entries[-1].json
        if not isinstance(deal, dict):
            raise ActionError(f"{kind}: this deal is packed (a condensed string); actions edit deals written out in JSON", Place(source=self.source, deal=index))
        js = written(deal, index, act, last=self.last, source=self.source)
        return self._drop() if js is None else self._write(index, js)

    def pop(self) -> Change:
        """Undo the last action (``push`` of an ``undo``): the last call, discard or card of
        the last deal, or the deal itself when it has none.

        Raises:
            EgnError: as :meth:`push` (nothing to undo: no deal).
        """
        return self.push(LiveAction("undo"))

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


def _without_hands(state: GameState) -> GameState:
    """A step with its hands left out: what was played, which is what a correction changes."""
    return evolve_state(state, hands=(), hands_known=())
