"""The skia executor's caches change speed, not pictures.

Static layers, sprite images, shadow masks and the partial clear of a reused surface must give
the frame that a fresh, cache-free executor draws (within one 8-bit rounding where a cached
group's own ops overlap, and a handful of anti-aliased edge pixels of sprites), and a frame's
bytes must not depend on what was drawn before it in the process: the renderer is a function
of (state, view, theme, timing, t), so split renders need no warm-up.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind, Timeline
from renderer.build import build_scene
from renderer.layers import plan
from renderer.raster import Assets, raster, to_premul

from ..golden import channel_diff, compare


@pytest.fixture(scope="module")
def tl() -> Timeline:
    return load_game(json.dumps(generate_game(2)), source="gen-2").timeline


def _frame(scene: object, t: float, assets: Assets) -> np.ndarray:
    return to_premul(raster(scene, t, assets)).copy()  # type: ignore[arg-type]


def test_cached_frames_match_uncached_through_a_game(tl: Timeline) -> None:
    cached = Assets.load()
    plain = Assets.load(sprite_cache=False)
    picks = [s for s in tl.steps if s.kind in (StepKind.CARD, StepKind.TRICK_TAKEN, StepKind.DEAL_SCORED, StepKind.CALL)][:14]
    for state in picks:
        scene = build_scene(state, size=(1280, 720))
        for t in (0.0, 0.13, 0.41, scene.duration):
            a = _frame(scene, t, cached)
            b = _frame(scene, t, plain)
            off = channel_diff(a, b) > 4
            assert int(off.sum()) <= 16, (state.kind, t, int(off.sum()))  # single AA pixels at rounded corners
            assert compare(b, a) is None, (state.kind, t)


#: frames of moving and resting cards: the start, mid-animation times and the end of a step
TIMES = (0.0, 0.11, 0.29, 0.53, 0.9)


def test_a_frame_does_not_depend_on_what_was_drawn_before(tl: Timeline) -> None:
    """Frames of a game drawn in order (two sizes interleaved, as a channel draws its outputs)
    have the bytes of the same frames drawn in reverse order, and of each drawn alone, by a
    fresh executor."""
    kinds = (StepKind.DEAL_START, StepKind.CALL, StepKind.CARD, StepKind.TRICK_TAKEN, StepKind.DEAL_SCORED)
    picks = [s for s in tl.steps if s.kind in kinds][4:40:3]
    assert {s.kind for s in picks} >= {StepKind.CARD, StepKind.TRICK_TAKEN}
    frames = []
    for state in picks:
        for size in ((1280, 720), (640, 360)):
            scene = build_scene(state, size=size)
            frames += [(scene, min(t, scene.duration)) for t in TIMES]
    in_order = Assets.load()
    first = [_frame(scene, t, in_order).tobytes() for scene, t in frames]
    backwards = Assets.load()
    last = [_frame(scene, t, backwards).tobytes() for scene, t in reversed(frames)][::-1]
    differ = [i for i, (a, b) in enumerate(zip(first, last)) if a != b]
    assert not differ, f"{len(differ)} of {len(frames)} frames differ drawn backwards (first: {differ[:5]})"
    for i in range(0, len(frames), 4):
        scene, t = frames[i]
        assert _frame(scene, t, Assets.load()).tobytes() == first[i], (i, t)


def test_reused_surface_keeps_nothing_of_the_previous_frame(tl: Timeline) -> None:
    busy = build_scene(next(s for s in tl.steps if s.kind is StepKind.CARD), size=(1280, 720))
    quiet = build_scene(tl.steps[-1], size=(1280, 720))
    reused = Assets.load()
    _frame(busy, 0.2, reused)
    after = _frame(quiet, quiet.duration, reused)
    fresh = _frame(quiet, quiet.duration, Assets.load())
    assert (after == fresh).all()


def test_plan_caches_static_groups_only() -> None:
    ops = [
        ["s"],
        ["tr", 10, 10],
        ["s"], ["rr", 0, 0, 5, 5, 1, "#fff", None, 0], ["t", "bold", 10, 0, 0, "A", "#000", 0], ["r"],
        ["s"], ["tr", {"k": 0}, 0], ["rr", 0, 0, 5, 5, 1, "#fff", None, 0], ["rr", 0, 0, 5, 5, 1, "#fff", None, 0], ["r"],
        ["s"], ["a", {"k": 0}], ["s"], ["rr", 0, 0, 5, 5, 1, "#fff", None, 0], ["sp", "x", 0, 0, 1], ["r"], ["r"],
        ["r"],
    ]
    p = plan(ops, {"x": []})
    # the first inner group only: the second moves, the third sits under a fading alpha
    assert list(p.groups) == [2]
    assert p.groups[2][0] == 6
