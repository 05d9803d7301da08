"""A timeline's states, each built the first time it is read.

A full replay used to build every :class:`~engine.state.GameState` as it walked the deal
(a state, its trick and its action per step, then the collector walking them all).  Many
readers never look at most of them: ``bench engine``, an alternative line (which keeps
only the steps after its deviation), a summary read off a full load.  :class:`Steps`
keeps one small record per step instead and builds the state on first access, then keeps
it; the state built is the one the eager replay built, field for field.

It behaves as the tuple it replaces: ``len``, indexing (negative too), iteration, ``in``,
``index``, ``count``, equality with tuples and other ``Steps`` (element by element),
``+`` with tuples; a slice is a ``tuple`` of states.  Readers that index the timeline
(the director, the analysis, alternative lines) see no difference; a reader of every
step (the service reads them all when a game is loaded) pays about what the eager replay
paid, since the work is the same, only later.

Records (made by :mod:`engine.dealstate`, read only here):

* a :class:`GameState`: already built;
* a ``dict`` holding every field of a state (a row): the state is made from it;
* a :data:`CardRecord` tuple, for the card steps (most steps): the row of the last step
  before it that is not a card step, plus what a card step changes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, Union, overload

from .cards import Card, Suit
from .errors import Problem
from .state import Action, GameState, StepKind, TrickState, build, make_state

__all__ = ["Steps", "JoinedSteps", "CardRecord", "Record", "state_of"]

#: A card step: (row of the last step that was not a card, hands, step, seat, card,
#: flat play index, trick number, trick leader, the trick's seats, the trick's cards,
#: position of this card in the trick, led suit, annotations, whose turn, problems).
CardRecord = tuple[
    dict[str, Any],
    tuple[tuple[Card, ...], ...],
    int,
    int,
    Card,
    int,
    int,
    int,
    tuple[int, ...],
    tuple[Card, ...],
    int,
    Union[Suit, None],
    tuple[str, ...],
    Union[int, None],
    tuple[Problem, ...],
]
Record = Union[GameState, dict[str, Any], CardRecord]

_CARD = StepKind.CARD


def state_of(record: Record) -> GameState:
    """The state a record stands for (a new one each call for a row or a card record)."""
    if type(record) is GameState:
        return record
    if isinstance(record, dict):
        return make_state(dict(record))  # copied: a row may also be the start of card records
    assert isinstance(record, tuple)
    fixed, hands, step, seat, card, flat, number, lead, seats, cards, c, led, annotations, to_act, problems = record
    row = fixed.copy()
    row["hands"] = hands
    row["step"] = step
    row["kind"] = _CARD
    row["action"] = build(Action, {"kind": _CARD, "seat": seat, "card": card, "call": None, "index": flat})
    row["trick"] = build(TrickState, {"number": number, "leader": lead, "seats": seats[: c + 1], "cards": cards[: c + 1], "led": led, "winner": None, "complete": False})
    row["annotations"] = annotations
    row["to_act"] = to_act
    row["problems"] = problems
    return make_state(row)


class Steps(Sequence[GameState]):
    """The states of a timeline (or of one deal), built on first access; see the module docstring."""

    __slots__ = ("_records", "_built")

    def __init__(self, records: Iterable[Record] = ()) -> None:
        self._records: list[Record] = list(records)
        self._built = False  # every record is its state (found by a whole pass of __iter__)

    def records(self) -> Sequence[Record]:
        """The records as they stand (built states and records still to build), for joining
        timelines: a view, not a copy (records are never changed, only replaced by their state)."""
        return self._records

    def adopt(self, index: int, state: GameState) -> None:
        """Take ``state``, built from a record equal to step ``index``'s (another replay of
        the same deal: :mod:`engine.live`), as that step's state: it is not built again."""
        self._records[index] = state

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> GameState: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[GameState, ...]: ...

    def __getitem__(self, index: int | slice) -> GameState | tuple[GameState, ...]:
        if isinstance(index, slice):
            return tuple([self._at(i) for i in range(*index.indices(len(self._records)))])
        record = self._records[index]  # IndexError as a tuple raises it
        if type(record) is GameState:
            return record
        return self._at(index if index >= 0 else index + len(self._records))

    def _at(self, i: int) -> GameState:
        record = self._records[i]
        if type(record) is GameState:
            return record
        state = state_of(record)
        self._records[i] = state  # kept: the same state object on every later read
        return state

    def __iter__(self) -> Iterator[GameState]:
        if self._built:  # records are only ever replaced by their states: the list is the states
            return iter(self._records)  # type: ignore[arg-type]  # every record is a GameState
        return self._build_all()

    def _build_all(self) -> Iterator[GameState]:
        records = self._records
        for i in range(len(records)):
            record = records[i]
            yield record if type(record) is GameState else self._at(i)
        self._built = True

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Steps, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: object) -> tuple[GameState, ...]:
        if isinstance(other, (Steps, tuple)):
            return tuple(self) + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[GameState, ...]:
        if isinstance(other, tuple):
            return other + tuple(self)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Steps({tuple(self)!r})"

    def __reduce__(self) -> tuple[type[Steps], tuple[tuple[GameState, ...]]]:
        """Pickled as its built states (a process pool or a cache gets plain values)."""
        return (Steps, (tuple(self),))


class JoinedSteps(Sequence[GameState]):
    """Several :class:`Steps` read as one: a live game's timeline, one part per deal
    (:mod:`engine.live`).

    Joining costs a pointer per part, not per step, and a state built through the join is
    kept by its part, so every later timeline that shares the part reads the same state.
    It behaves as :class:`Steps` does (a tuple of states); pickled, it is a :class:`Steps`
    of its built states.
    """

    __slots__ = ("_parts", "_starts", "_len")

    def __init__(self, parts: Iterable[Steps]) -> None:
        self._parts: tuple[Steps, ...] = tuple(p for p in parts if len(p))
        starts: list[int] = []
        at = 0
        for part in self._parts:
            starts.append(at)
            at += len(part)
        self._starts: Sequence[int] = starts
        self._len = at

    @classmethod
    def of(cls, parts: tuple[Steps, ...], starts: tuple[int, ...], length: int) -> JoinedSteps:
        """The join of non-empty ``parts`` whose first steps are at ``starts``, ``length``
        steps in all, as a caller that keeps them knows them (no pass over the parts)."""
        joined = cls(())
        joined._parts, joined._starts, joined._len = parts, starts, length
        return joined

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> GameState: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[GameState, ...]: ...

    def __getitem__(self, index: int | slice) -> GameState | tuple[GameState, ...]:
        if isinstance(index, slice):
            return tuple([self[i] for i in range(*index.indices(self._len))])
        i = index + self._len if index < 0 else index
        if not 0 <= i < self._len:
            raise IndexError("step index out of range")
        part = bisect_right(self._starts, i) - 1
        return self._parts[part][i - self._starts[part]]

    def __iter__(self) -> Iterator[GameState]:
        return chain.from_iterable(self._parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (JoinedSteps, Steps, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: object) -> tuple[GameState, ...]:
        if isinstance(other, (JoinedSteps, Steps, tuple)):
            return tuple(self) + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[GameState, ...]:
        if isinstance(other, tuple):
            return other + tuple(self)
        return NotImplemented

    def __repr__(self) -> str:
        return f"JoinedSteps({tuple(self)!r})"

    def __reduce__(self) -> tuple[type[Steps], tuple[tuple[GameState, ...]]]:
        """Pickled as a :class:`Steps` of its built states (as a :class:`Steps` is)."""
        return (Steps, (tuple(self),))
