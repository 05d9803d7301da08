"""The clean output hides hole cards, and its animation must not give them away either.

When a face-down hand plays or discards, the card used to leave from its place in the sorted
hand and the gap closed there: a viewer of the clean output could tell that the card came
from the left (say, the spades) or the right of the hand.  Now a hidden hand's card always
leaves from the middle slot, so the motion of a step depends only on how many cards the hand
holds — checked here on every card and discard step of generated games: steps alike in the
seat, the hand's size and the card's place in the trick animate identically.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from renderer.build import build_scene
from renderer.view import Perspective, default_view


def _motions(perspective: Perspective) -> dict[tuple[int, ...], set[str]]:
    """Per (seat, kind, cards left, place in the trick): the distinct sets of keyframe tracks."""
    view = default_view().model_copy(update={"perspective": perspective})
    seen: dict[tuple[int, ...], set[str]] = defaultdict(set)
    for seed in (3, 8, 21):
        for st in load_game(json.dumps(generate_game(seed, deals=3)), source="g").timeline.steps:
            act = st.action
            if st.kind not in (StepKind.CARD, StepKind.DISCARD) or act is None or act.seat is None:
                continue
            place = len(st.trick.cards) if st.trick is not None else 0
            key = (act.seat, int(st.kind is StepKind.CARD), len(st.hands[act.seat]), place)
            seen[key].add(json.dumps(build_scene(st, view, size=(1280, 720)).tracks))
    return seen


def test_a_hidden_hand_moves_the_same_whatever_card_leaves_it() -> None:
    hidden = _motions(Perspective.PLAYED)
    assert len(hidden) > 20
    leaks = {k: len(v) for k, v in hidden.items() if len(v) > 1}
    assert leaks == {}, f"the motion tells which card left a hidden hand: {leaks}"


@pytest.mark.parametrize("perspective", [Perspective.ALL])
def test_a_shown_hand_still_plays_from_the_cards_place(perspective: Perspective) -> None:
    """The check above can fail: with the hands shown, cards leave from their own places."""
    shown = _motions(perspective)
    assert any(len(v) > 1 for v in shown.values())
