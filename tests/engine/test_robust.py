"""Any input gives a game or one typed error: mutated documents never crash the engine."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import EgnError
from engine.generate import generate_game
from engine.load import load_game

BASE = generate_game(5, deals=3, ruleset={"defend_alone": True}, annotate=True)

#: values put in the document's places; an empty dict or list is a new one each time (``st.just({})``
#: gave one shared dict: an edit into it after another had placed it put it inside itself, and
#: what one example wrote into it stayed for the next)
junk = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 300), st.floats(allow_nan=False), st.text(max_size=6),
    st.sampled_from(["Jd", "B", "Xx", "Pass", "Order", "n", "x", "R", "TRICK_PLAY", "EUCHRE_BIDDING"]),
    st.lists(st.sampled_from(["Jd", "9s", "Ah", "Pass"]), max_size=6), st.builds(dict), st.builds(list),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


PATHS = _paths(BASE)[1:]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.sampled_from(PATHS), junk, st.booleans()), min_size=1, max_size=4))
def test_mutated_documents_give_a_game_or_a_typed_error(edits: list[tuple[tuple[Any, ...], Any, bool]]) -> None:
    doc: Any = copy.deepcopy(BASE)
    for path, value, delete in edits:
        node = doc
        try:
            for part in path[:-1]:
                node = node[part]
            if delete and isinstance(node, (dict, list)):
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(doc)
    for strict in (False, True):
        try:
            game = load_game(text, source="m.egn", strict=strict)
        except EgnError as exc:
            assert str(exc).startswith("m.egn")
            continue
        for state in game.timeline.steps:
            state.to_json()  # every state serialises for the page


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200))
def test_random_bytes_give_one_typed_error(data: bytes) -> None:
    try:
        load_game(data, source="r.bin")
    except EgnError as exc:
        assert str(exc).startswith("r.bin")
