"""The values the replay makes once per deal: a deal's outcome and the game loop's checkpoint.

They live apart from the modules that make them (:mod:`engine.deal`, :mod:`engine.replay`)
because those modules may be compiled with mypyc (:mod:`engine.native`), and a class
defined in a compiled module becomes a native class: one :func:`engine.state.build`
cannot make (it writes the instance's ``__dict__``; a native instance has none) and that
pickling or ``copy`` would not reproduce.  Kept here, uncompiled, they stay ordinary frozen
dataclasses in both modes, built without the frozen constructor's ``setattr`` per field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import Problem
from .model import Deal
from .state import Branch, DealSummary
from .steps import Record, Steps

__all__ = ["DealOutcome", "Checkpoint", "DealBlock"]


@dataclass(frozen=True)
class DealOutcome:
    """The replay of one deal.

    ``states`` is empty in the summary-only pass; everything else is the same in both.
    """

    summary: DealSummary
    states: Steps  # built on first read (:mod:`engine.steps`)
    step_count: int  # steps of this deal (``len(states)`` when they are built)
    score: tuple[int, ...]  # running score after the deal
    tokens: tuple[int, ...]  # four-trick tokens after the deal
    action_steps: tuple[int, ...]  # step (within the deal) of each action: calls, then cards
    problems: tuple[Problem, ...]  # this deal's problems, in the order found
    shown_at: tuple[int, ...]  # for each problem, the step (within the deal) it is shown on; -1: none


@dataclass(frozen=True)
class Checkpoint:
    """Everything the replay loop carries from one deal to the next, taken after a deal
    (a later replay of the same game starts at the first deal that changed)."""

    key: tuple[Any, ...]  # (source, metadata, summary_only) the deal was replayed under
    deal: Deal | str | None  # None: the state before the first deal (no deal played yet)
    steps: int
    summaries: int
    branches: int
    problems: int
    score: tuple[int, ...]
    tokens: tuple[int, ...]
    game_over_at: int | None
    winner: int | None


@dataclass(frozen=True)
class DealBlock:
    """What one deal adds to a timeline, and the game loop's state after it.

    A timeline is its deals' blocks one after the other (steps, summaries, alternative
    lines and problems), with the game's own problems around them; a live game
    (:mod:`engine.live`) keeps one block per deal and replays only the last.
    """

    steps: Steps  # the deal's steps (and the game-over step when the deal ends the game)
    #: the steps' records as the replay made them (``steps`` replaces each by its state when
    #: read): equal records make equal states, so comparing two replays of a deal is cheap
    records: tuple[Record, ...]
    summary: DealSummary | None  # None: a packed deal that could not be read (no steps either)
    branches: tuple[Branch, ...]
    problems: tuple[Problem, ...]  # found in this deal (its alternative lines' too), in order
    checkpoint: Checkpoint  # the loop's state after the deal
