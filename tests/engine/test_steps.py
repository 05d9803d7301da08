"""``engine.steps.Steps``: a timeline's states built on first read, behaving as the tuple it replaced.

Each test holds a replay's ``Steps`` against the tuple of the same states, built one by
one from the records with :func:`engine.steps.state_of` (the tuple the eager replay made).
"""

from __future__ import annotations

import json
import pickle

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import GameState, Timeline
from engine.steps import Steps, state_of


def _timeline(seed: int = 3, **options: object) -> Timeline:
    return load_game(json.dumps(generate_game(seed, deals=3, annotate=True, **options)), source="steps.egn").timeline  # type: ignore[arg-type]


def _pair() -> tuple[Steps, tuple[GameState, ...]]:
    """A fresh, unread ``Steps`` and the tuple of the same states built independently."""
    steps = _timeline().steps
    assert isinstance(steps, Steps)
    return steps, tuple(state_of(r) for r in steps.records())


def test_reads_build_nothing_until_asked_and_keep_what_they_built() -> None:
    steps, _ = _pair()
    assert not any(isinstance(r, GameState) for r in steps.records()[:-1])  # the last deal may end the game
    first = steps[5]
    assert steps[5] is first and steps.records()[5] is first
    assert sum(isinstance(r, GameState) for r in steps.records()[:-1]) == 1


@pytest.mark.parametrize("index", [0, 1, 7, -1, -2, -40])
def test_indexing_as_a_tuple(index: int) -> None:
    steps, eager = _pair()
    assert steps[index] == eager[index]


@pytest.mark.parametrize("index", [10_000, -10_000])
def test_out_of_range_raises_index_error(index: int) -> None:
    steps, eager = _pair()
    with pytest.raises(IndexError):
        eager[index]
    with pytest.raises(IndexError):
        steps[index]


@pytest.mark.parametrize("cut", [slice(None), slice(3, 9), slice(-5, None), slice(None, None, -3), slice(40, 2, -7), slice(500, 600)])
def test_a_slice_is_a_tuple_of_states(cut: slice) -> None:
    steps, eager = _pair()
    got = steps[cut]
    assert type(got) is tuple and got == eager[cut]


def test_length_iteration_membership_equality_and_concatenation() -> None:
    steps, eager = _pair()
    assert len(steps) == len(eager) and list(steps) == list(eager)
    assert steps == eager and eager == steps and steps == Steps(eager)
    assert steps != eager[:-1] and steps != list(eager)
    assert eager[4] in steps and steps.index(eager[4]) == eager.index(eager[4])
    assert steps.count(eager[0]) == 1
    assert steps + eager[:2] == eager + eager[:2] and eager[:2] + steps == eager[:2] + eager
    assert hash(steps) == hash(eager)
    assert Steps() == () and len(Steps()) == 0


def test_pickles_as_its_states() -> None:
    steps, eager = _pair()
    back = pickle.loads(pickle.dumps(steps))
    assert isinstance(back, Steps) and back == eager
    assert all(isinstance(r, GameState) for r in back.records())


@pytest.mark.parametrize("options", [{}, {"ruleset": {"joker": True}}, {"player_cards": False}, {"ruleset": {"defend_alone": True, "allow_no_trump": True}}])
def test_each_state_is_built_once_whatever_the_order_of_reads(options: dict[str, object]) -> None:
    """Reading backwards, forwards or twice gives the same states (no record is changed by a read)."""
    a = _timeline(11, **options).steps
    b = _timeline(11, **options).steps
    backwards = [a[i] for i in range(len(a) - 1, -1, -1)][::-1]
    assert backwards == list(b) == list(a)
    assert all(x is y for x, y in zip(backwards, a))
