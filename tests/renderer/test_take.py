"""The TAKE transition as one scene (renderer/take.py): a mix fades the old picture out as
the new one comes in, a wipe shows the new picture left of a moving edge and the old one
right of it, a cut is the new picture; a take that began before the scene's clock goes on
from where it was.  Drawn with the skia executor; the page player draws the same scenes
(tests/renderer/test_parity.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from renderer.build import build_scene
from renderer.raster import raster
from renderer.scene import Scene
from renderer.take import in_take, take_scene
from renderer.timing import TakeTransition
from renderer.view import default_view
from overlay.service.outputs import frozen_scene

SIZE = (640, 360)


def _pair() -> tuple[Scene, Scene]:
    """One step drawn in two layouts: the default view, and one with the score and the trick
    moved (the old and the new picture of a take)."""
    tl = load_game(json.dumps(generate_game(4)), source="g").timeline
    state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 2)
    view = default_view()
    moved = tuple(e.model_copy(update={"x": e.x + 700}) if e.type.value in ("ns-score", "ew-score", "play-area") else e for e in view.elements)
    return build_scene(state, view, size=SIZE), build_scene(state, view.model_copy(update={"elements": moved}), size=SIZE)


def _px(scene: Scene, t: float) -> np.ndarray:
    return np.asarray(raster(scene, t).toarray(), dtype=np.float64)


def _off(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).mean())


@pytest.fixture(scope="module")
def pair() -> tuple[Scene, Scene]:
    return _pair()


def test_a_mix_goes_from_the_old_picture_to_the_new(pair: tuple[Scene, Scene]) -> None:
    old, new = pair
    t_end = max(old.duration, new.duration) + 1.0  # both pictures settled
    tr = TakeTransition(style="mix", run_time=0.6, ease="linear")
    sc = take_scene(old, new, tr, t_end)
    Scene.from_json(json.loads(sc.dumps()))  # the op table takes it (both executors draw it)
    assert _off(_px(sc, t_end), _px(old, t_end)) < 0.05
    assert _off(_px(sc, t_end + 0.6), _px(new, t_end)) < 0.05
    mid = _px(sc, t_end + 0.3)
    a, b = _px(old, t_end), _px(new, t_end)
    assert _off(mid, a) > 0.5 and _off(mid, b) > 0.5  # neither picture alone
    assert sc.duration >= t_end + 0.6 and sc.elements == new.elements


def test_a_wipe_shows_the_new_picture_behind_the_edge_and_the_old_ahead(pair: tuple[Scene, Scene]) -> None:
    old, new = pair
    t = max(old.duration, new.duration) + 1.0
    sc = take_scene(old, new, TakeTransition(style="wipe", run_time=1.0, ease="linear"), t)
    frame, a, b = _px(sc, t + 0.5), _px(old, t), _px(new, t)
    w = SIZE[0]
    left, right = slice(0, w // 2 - 8), slice(w // 2 + 8, w)
    assert _off(frame[:, left], b[:, left]) < 0.05 and _off(frame[:, right], a[:, right]) < 0.05
    assert _off(a[:, right], b[:, right]) > 0.5  # the two pictures differ there
    assert _off(_px(sc, t + 1.0), b) < 0.05


def test_a_take_begun_before_the_step_goes_on_from_where_it_was(pair: tuple[Scene, Scene]) -> None:
    """A new step during a mix: its scene starts at the progress the take had reached."""
    old, new = (frozen_scene(s, 2.0) for s in pair)  # the step's own animation out of the way
    tr = TakeTransition(style="mix", run_time=1.0, ease="inout")
    sc = take_scene(old, new, tr, -0.5)  # half done when this scene starts
    assert in_take(tr, -0.5) and not in_take(tr, -1.0)
    halfway = take_scene(old, new, tr, 0.0)
    assert _off(_px(sc, 0.0), _px(halfway, 0.5)) < 0.05 and _off(_px(sc, 0.25), _px(halfway, 0.75)) < 0.3
    assert _off(_px(sc, 0.5), _px(new, 0.5)) < 0.05
    assert take_scene(old, new, tr, -1.5) is new
    assert take_scene(old, new, TakeTransition(style="cut"), 0.0) is new


def test_a_frozen_scene_is_the_picture_at_its_time(pair: tuple[Scene, Scene]) -> None:
    old, _ = pair
    t = 0.2  # mid-animation: the card still in flight
    still = frozen_scene(old, t)
    assert not still.tracks
    assert _off(_px(still, 0.0), _px(old, t)) < 0.05 and _off(_px(still, 9.0), _px(old, t)) < 0.05


def test_a_stinger_covers_the_change_at_half_time(pair: tuple[Scene, Scene]) -> None:
    old, new = (frozen_scene(s, 2.0) for s in pair)
    tr = TakeTransition(style="stinger", run_time=1.0, ease="linear")
    sc = take_scene(old, new, tr, 0.0, panel="#101624e6", accent="#f2c230")
    covered = _px(sc, 0.5)
    assert covered[..., 3].min() == 255  # the whole canvas under an opaque panel
    w = SIZE[0]
    # in from the left: the old picture still shows right of the panel, then the new one
    # left of it on the way out
    assert _off(_px(sc, 0.25)[:, w // 2 + 8 :], _px(old, 0.0)[:, w // 2 + 8 :]) < 0.05
    assert _off(_px(sc, 0.75)[:, : w // 2 - 8], _px(new, 0.0)[:, : w // 2 - 8]) < 0.05
    assert _off(_px(sc, 1.0), _px(new, 0.0)) < 0.05
    # a stinger over a layout that does not change (a rundown cue of its own)
    same = take_scene(old, old, tr, 0.0)
    assert _px(same, 0.5)[..., 3].min() == 255 and _off(_px(same, 1.0), _px(old, 0.0)) < 0.05
