"""Match data and broadcast extras in the renderer: what the studio places, the scene draws
(pure, with the existing op set, so the skia executor and the page player both draw it)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.load import load_game
from engine.state import GameState, StepKind
from renderer.build import build_scene
from renderer.extras import EXTRA_SIZES, build_broadcast_scene
from renderer.matchdata import MatchData, apply_match
from renderer.raster import raster, to_rgba
from renderer.timing import Timing
from renderer.view import Extra, ExtraType, View, default_view
from tests.support import game

MATCH = MatchData.model_validate(
    {
        "event_title": "Harbour Cup",
        "event_subtitle": "Final",
        "teams": [{"name": "Orde\u00ae Me Up"}, {"name": "Left Bowers"}],
        "players": [{"name": "Ann Lee", "line": "Club champion"}, {}, {}, {}],
        "intro": 0,
    }
)


@pytest.fixture(scope="module")
def steps() -> tuple[GameState, ...]:
    return load_game(json.dumps(game(11, deals=2)), source="t.egn").timeline.steps


def texts(scene_json: str) -> str:
    return json.dumps(json.loads(scene_json)["ops"], ensure_ascii=False)


def with_extras(view: View, *kinds: ExtraType) -> View:
    extras = tuple(Extra(id=k.value, type=k, x=600, y=700 if k is ExtraType.PLAYER_INTRO else 200) for k in kinds)
    return view.model_copy(update={"extras": extras})


def test_display_names_replace_the_files_names_and_nothing_else(steps: tuple[GameState, ...]) -> None:
    st = steps[5]
    shown = apply_match(st, MATCH)
    assert shown.players[0] == "Ann Lee" and shown.players[1:] == st.players[1:]
    assert shown.hands == st.hands and shown.score == st.score
    assert apply_match(st, MatchData()) is st and apply_match(st, None) is st
    assert "ANN LEE" in texts(build_broadcast_scene(st, default_view(), match=MATCH).dumps())


def test_event_title_and_intro_draw_where_placed(steps: tuple[GameState, ...]) -> None:
    st = steps[5]
    view = with_extras(default_view(), ExtraType.EVENT_TITLE, ExtraType.PLAYER_INTRO)
    scene = build_broadcast_scene(st, view, match=MATCH, title="file title")
    ops = texts(scene.dumps())
    for needle in ("HARBOUR CUP", "ORDE\u00ae ME UP", "LEFT BOWERS", "CLUB CHAMPION"):
        assert needle in ops, needle
    boxes = {b["id"]: b for b in scene.elements}
    w, h = EXTRA_SIZES[ExtraType.PLAYER_INTRO]
    assert (boxes["player-intro"]["x"], boxes["player-intro"]["y"], boxes["player-intro"]["w"], boxes["player-intro"]["h"]) == (600, 700, w, h)
    # drawn: the pixels under the intro's box change, those outside the extras do not
    plain = to_rgba(raster(build_broadcast_scene(st, default_view(), match=MATCH, title="file title"), 5.0))
    full = to_rgba(raster(scene, 5.0))
    diff = np.abs(plain.astype(int) - full.astype(int)).max(axis=2) > 0
    assert diff[700 + 20 : 700 + int(h) - 20, 640 : 600 + int(w) - 20].mean() > 0.5
    assert not diff[:, 1700:].any()
    # no intro fired: the lower third is not drawn, the title still is
    quiet = texts(build_broadcast_scene(st, view, match=MATCH.model_copy(update={"intro": None})).dumps())
    assert "CLUB CHAMPION" not in quiet and "HARBOUR CUP" in quiet


def test_views_without_extras_build_exactly_as_before(steps: tuple[GameState, ...]) -> None:
    st = steps[7]
    view = default_view()
    assert build_broadcast_scene(st, view, title="t", size=(1280, 720)).dumps() == build_scene(st, view, title="t", size=(1280, 720)).dumps()
    # build_scene itself ignores extras, so every other caller draws such views unchanged
    assert build_scene(st, with_extras(view, ExtraType.EVENT_TITLE)).dumps() == build_scene(st, view).dumps()


def test_the_deal_wipe_runs_at_the_start_of_a_new_deal(steps: tuple[GameState, ...]) -> None:
    second = next(s for s in steps if s.kind is StepKind.DEAL_START and s.deal == 1)
    first = steps[0]
    wipe = Timing.model_validate({"transition": {"style": "wipe", "run_time": 0.6}})
    assert build_broadcast_scene(first, timing=wipe).dumps() == build_broadcast_scene(first).dumps()
    scene = build_broadcast_scene(second, timing=wipe)
    cut = build_broadcast_scene(second)
    assert scene.dumps() != cut.dumps()
    mid, after = to_rgba(raster(scene, 0.3)), to_rgba(raster(scene, 0.7))
    assert np.array_equal(after, to_rgba(raster(cut, 0.7)))  # gone once its run time is over
    assert not np.array_equal(mid, to_rgba(raster(cut, 0.3)))
