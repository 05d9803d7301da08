"""Every dataclass of the compiled modules pickles and copies as itself (engine/pickling.py).

Compiled (engine/native.py, as the suite runs after ``scripts/bootstrap``), a class keeps its
fields in C slots and pickle's default for a frozen one fails (``FrozenInstanceError``):
the analysis pool's spawned workers then never got their states (session 16's hang).  Each
sample is made by the engine's own code where it makes one (a solved position of a generated
game, a deal's layout, the game's context); a dataclass added to a compiled module without a
sample here fails the first test.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from engine import native
from engine.branch import _LineMap
from engine.cards import Suit, parse_card
from engine.codec.deal_unpack import _Gov
from engine.codec.pool import index_fields
from engine.generate import generate_game
from engine.layout import lay_out
from engine.load import load_game
from engine.model import Ruleset
from engine.replay import game_context
from engine.rules import Table, score_deal
from engine.solve import Solver, position_of


def _solved() -> tuple[Any, Any]:
    """The first position of a generated game the solver can read, and its analysis."""
    game = load_game(json.dumps(generate_game(5, deals=1)), source="gen5.egn")
    rules = Ruleset.model_validate({})
    for state in game.timeline.steps:
        position = position_of(state, rules)
        if position is not None:
            return position, Solver().analyse(position)
    raise AssertionError("no position to solve in generated game 5")


def _context() -> Any:
    game = load_game(json.dumps(generate_game(6, deals=1)), source="gen6.egn")
    return game_context(game.document, source="gen6.egn")


SAMPLES: dict[str, Callable[[], Any]] = {
    "engine.cards.Card": lambda: parse_card("Jd"),
    "engine.rules.Table": lambda: Table(3),
    "engine.rules.DealResult": lambda: score_deal(
        Ruleset.model_validate({}), Table(4), maker=1, alone=True, alone_defender=-1, winners=[1, 1, 1, 1, 1], tokens=[0, 0]
    ),
    "engine.solve.Position": lambda: _solved()[0],
    "engine.solve.PlayAnalysis": lambda: _solved()[1],
    "engine.solve.CardValue": lambda: _solved()[1].cards[0],
    "engine.dealstate.DealContext": _context,
    "engine.layout.Layout": lambda: lay_out([["Jh", "9h", "Ah", "Th"], ["Jd"]], Table(4), Suit.HEARTS, frozenset(), 1),
    "engine.codec.pool.IndexFields": lambda: index_fields(24, 5),
    "engine.codec.deal_unpack._Gov": lambda: _Gov(alone=True),
    "engine.branch._LineMap": lambda: _LineMap(1, None, 0, 1, 2, 3),
}


def compiled_dataclasses() -> set[str]:
    found = set()
    for name in native.COMPILED:
        module = importlib.import_module(f"engine.{name}")
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and dataclasses.is_dataclass(value):
                found.add(f"{value.__module__}.{value.__qualname__}")
    return found


def test_every_dataclass_of_a_compiled_module_has_a_sample() -> None:
    assert compiled_dataclasses() == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_compiled_dataclass_pickles_and_copies_as_itself(name: str) -> None:
    value = SAMPLES[name]()
    assert f"{type(value).__module__}.{type(value).__qualname__}" == name
    for back in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
        assert type(back) is type(value)
        # every field, those left out of == (a Table's teams, a Card's identity) included
        assert [getattr(back, f.name) for f in dataclasses.fields(value)] == [getattr(value, f.name) for f in dataclasses.fields(value)]
        assert back == value
