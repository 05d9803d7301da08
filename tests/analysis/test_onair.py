"""Analysis on air, drawn (``renderer/analysis.py``, ``renderer/insights.py``): each element
from a real analysis of a generated game, what the clean output may draw, the bar's keyframed
move, the graph's marks; and the page player drawing the analysis layer over a step scene as
the skia executor draws the composed scene, within the design's parity tolerance."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any

import numpy as np
import pytest

from engine.analysis import Analyst, deal_ends
from engine.cards import card_name
from engine.generate import generate_game
from engine.load import load_game
from engine.ruleset import Ruleset
from engine.state import GameState, StepKind
from renderer.analysis import GameAnalysis, analysis_extras, build_analysis_layer, compose, default_extras
from renderer.extras import build_broadcast_scene
from renderer.reading import ANALYSIS_TYPES, AnalysisFrame, Reading
from renderer.scene import Scene
from renderer.timing import Timing
from renderer.view import Extra, ExtraType, Perspective, View, default_view
from tests.parity import assert_parity, figures, player_page, premul

#: one worker runs this file under pytest-xdist (--dist loadgroup): its shared set-up is made once
pytestmark = pytest.mark.xdist_group("onair_page")


#: a generated game with a euchre (deal 2) and a loner (deal 3) among its four deals
SEED, DEALS = 12, 4


@lru_cache(maxsize=1)
def _steps() -> tuple[GameState, ...]:
    return tuple(load_game(json.dumps(generate_game(SEED, deals=DEALS)), source="g12.egn").timeline.steps)


@lru_cache(maxsize=2)
def _analysis(public: bool) -> GameAnalysis:
    return GameAnalysis(_steps(), Ruleset(), public=public)


def _first(pred: Any) -> int:
    return next(i for i, s in enumerate(_steps()) if pred(s))


def _bidding_step() -> int:
    """The first bid with a valued call (the bidding table has something to show)."""
    for i, s in enumerate(_steps()):
        if s.kind in (StepKind.DEAL_START, StepKind.CALL) and s.maker is None and s.to_act is not None:
            calls = _analysis(False).reading(i).get("calls") or []
            if any(c["points"] is not None for c in calls):
                return i
    raise AssertionError("no bidding step with a valued call")


def _lost_card_step() -> int:
    """A card play that gave up a trick or a point against the best card (dd)."""
    for i, s in enumerate(_steps()):
        if s.kind is StepKind.CARD and i > 0 and s.action is not None and s.action.card is not None:
            prev = _analysis(False).reading(i - 1)
            for c in prev.get("cards") or ():
                if c["card"] == card_name(s.action.card) and (c["trickLoss"] or c["pointLoss"]):
                    return i
    raise AssertionError("no losing card in the game")


def _texts(scene: Scene) -> list[str]:
    return [op[5] for op in scene.ops if op[0] == "t"]


def _layer(step: int, *, public: bool = False, view: View | None = None) -> Scene:
    return build_analysis_layer(_steps()[step], view or default_view(), _analysis(public)(step), public=public)


def test_readings_are_the_analyse_json_objects() -> None:
    steps = _steps()
    i = _first(lambda s: s.kind is StepKind.CARD)
    a = Analyst(Ruleset()).analyse(steps[i])
    r = Reading.from_json(a.to_json())
    assert r.step == i and r.to_act == a.to_act and r.best == a.best and r.tricks == a.tricks
    assert a.cards is not None and r.losses == {card_name(c.card): (c.trick_loss, c.point_loss) for c in a.cards}
    assert r.win is not None and a.win_probability is not None and abs(r.win[0] - a.win_probability[0]) < 1e-4


@pytest.mark.parametrize(
    "what, step, expect",
    [
        ("bidding", "bid", ["BIDDING", "WIN PROBABILITY", "WIN PROBABILITY \u00b7 MATCH"]),
        ("card", "lost", ["BEST", "WIN PROBABILITY"]),
    ],
)
def test_each_element_is_drawn_from_a_real_analysis(what: str, step: str, expect: list[str]) -> None:
    i = _bidding_step() if step == "bid" else _lost_card_step()
    layer = _layer(i)
    texts = _texts(layer)
    for word in expect:
        assert any(t.startswith(word) for t in texts), (word, texts)
    assert {e["type"] for e in layer.elements} == {t.value for t in ANALYSIS_TYPES}
    if step == "lost":
        # the badge says what the card just played gave up
        assert any("TRICK" in t or "POINT" in t for t in texts), texts
        best = _analysis(False).reading(i)["best"]
        assert best and any(t == "BEST" for t in texts)  # the mark's tab on the card
    if step == "bid":
        calls = [c for c in _analysis(False).reading(i)["calls"] if c["points"] is not None]
        assert calls and any(t.startswith(("+", "\u2212", "0")) for t in texts)


def test_the_bar_moves_from_the_previous_value_with_the_analysis_timing() -> None:
    i = _lost_card_step()
    frame = _analysis(False)(i)
    assert frame.previous is not None and frame.previous.win is not None and frame.now.win is not None
    timing = Timing(analysis={"run_time": 0.8, "hold": 0.0, "ease": "inout"})
    view = default_view()
    layer = build_analysis_layer(_steps()[i], view, frame, timing=timing, size=(view.width, view.height))
    bar = next(e for e in analysis_extras(view) if e.type is ExtraType.WIN_BAR)
    # the split is a translate whose track runs from the previous value to the new one
    moves = [layer.tracks[op[1]["k"]] for op in layer.ops if op[0] == "tr" and isinstance(op[1], dict)]
    bw = 600 - 32
    before, after = 16 + bw * frame.previous.win[0], 16 + bw * frame.now.win[0]
    if round(before, 2) == round(after, 2):
        pytest.skip("the win probability did not move at this step")
    assert any(abs(tr[0][1] - before) < 0.01 and abs(tr[-1][1] - after) < 0.01 and tr[-1][0] == 0.8 and tr[-1][2:] == ["inout"] for tr in moves), (moves, before, after, bar)


def test_the_graph_marks_the_euchre_and_the_loner() -> None:
    steps = _steps()
    ends = deal_ends(steps)
    assert [e.mark for e in ends if e.mark] == [("euchre", 1), ("loner", 0)]
    last = len(steps) - 1
    graph = _analysis(True)(last).graph
    assert [p.deals for p in graph] == list(range(len(ends) + 1))
    layer = _layer(last, public=True)
    assert sorted(t for t in _texts(layer) if t in ("E", "L")) == ["E", "L"]
    # the points are the public score model's: the same on a full output
    assert graph == _analysis(False)(last).graph


def _hand_texts(state: GameState) -> set[str]:
    """Every card of every hand, as the card's own name (what a leak would print)."""
    return {card_name(c) for hand in state.hands for c in hand if c.known}


@pytest.mark.parametrize("step", ["bid", "lost"])
def test_the_clean_output_draws_nothing_derived_from_hidden_cards(step: str) -> None:
    i = _bidding_step() if step == "bid" else _lost_card_step()
    layer = _layer(i, public=True)
    texts = _texts(layer)
    assert {e["type"] for e in layer.elements} == {"win-bar", "win-graph"}
    assert any("EST." in t for t in texts)
    assert not any(t in ("BEST", "BEST PLAY") or t.startswith(("BIDDING", "+", "\u2212")) for t in texts), texts
    assert not (_hand_texts(_steps()[i]) & set(texts))
    # even a full frame drawn for a public output shows only the estimate's elements
    full = build_analysis_layer(_steps()[i], default_view(), _analysis(False)(i), public=True)
    assert {e["type"] for e in full.elements} == {"win-bar", "win-graph"}
    assert not any(t == "BEST" or t.startswith("BIDDING") for t in _texts(full))


def test_best_cards_are_marked_only_on_a_hand_drawn_face_up() -> None:
    i = _lost_card_step() - 1  # the player to act here played a card worse than the best
    state = _steps()[i]
    assert state.to_act is not None
    up = default_view().model_copy(update={"perspective": Perspective.FOCUS, "focus_seat": state.to_act})
    down = up.model_copy(update={"focus_seat": (state.to_act + 1) % 4})
    assert "BEST" in _texts(_layer(i, view=up))
    assert "BEST" not in _texts(_layer(i, view=down))


def test_a_view_places_and_hides_its_own_analysis_extras() -> None:
    own = default_view().model_copy(update={"extras": (Extra(id="bar", type=ExtraType.WIN_BAR, x=300, y=900, scale=1.5), Extra(id="g", type=ExtraType.WIN_GRAPH, visible=False))})
    placed = analysis_extras(own)
    assert [(e.id, e.x, e.y) for e in placed] == [("bar", 300, 900)]
    i = _lost_card_step()
    layer = _layer(i, view=own)
    assert [(e["type"], e["x"], e["y"], e["w"]) for e in layer.elements] == [("win-bar", 300, 900, 900)]
    # none placed: the defaults, inside the 90% title-safe area of the default view
    for e in default_extras():
        from renderer.reading import ANALYSIS_SIZES

        w, h = ANALYSIS_SIZES[e.type]
        assert 96 <= e.x and e.x + w <= 1824 and 54 <= e.y and e.y + h <= 1026, e


def test_views_without_analysis_build_exactly_as_before() -> None:
    """Extras of the analysis kinds draw nothing in the step scene itself (only in the layer)."""
    i = _lost_card_step()
    view = default_view()
    with_extras = view.model_copy(update={"extras": default_extras()})
    a = build_broadcast_scene(_steps()[i], view).to_json()
    b = build_broadcast_scene(_steps()[i], with_extras).to_json()
    assert a["ops"] == b["ops"] and a["tracks"] == b["tracks"]


def test_compose_renumbers_the_layers_tracks() -> None:
    i = _lost_card_step()
    scene = build_broadcast_scene(_steps()[i], default_view())
    layer = _layer(i)
    both = compose(scene, layer)
    n = len(scene.tracks)
    assert both.ops[: len(scene.ops)] == scene.ops and both.tracks == scene.tracks + layer.tracks
    shifted = [v["k"] for op in both.ops[len(scene.ops) :] for v in op if isinstance(v, dict)]
    assert shifted and min(shifted) >= n and max(shifted) < len(both.tracks)
    assert compose(scene, Scene(scene.width, scene.height, None, 0.0, [], [], {}, [])) is scene
    Scene.from_json(json.loads(both.dumps()))  # the composed scene passes the op table's checks


def test_frames_are_a_function_of_their_inputs() -> None:
    i = _bidding_step()
    a, b = _layer(i).dumps(), build_analysis_layer(_steps()[i], default_view(), GameAnalysis(_steps(), Ruleset())(i)).dumps()
    assert a == b


def test_live_message_parts_make_the_same_frame() -> None:
    i = _lost_card_step()
    ga = _analysis(False)
    frame = AnalysisFrame.from_json(ga.reading(i), ga.reading(i - 1), [p.to_json() for p in ga(i).graph])
    assert frame == ga(i)


# ---- the page player draws the layer over the step scene as skia draws the composed scene ------

DRAW = """async ([scene, layer, ts]) => {
    const player = window.player;
    player.setScene(scene, 0);
    player.setLayer(layer, 0);
    await player.sceneReady;
    await Promise.all((JSON.parse(layer).fonts || []).map((k) => player._load(k)));
    const out = [];
    for (const t of ts) {
        player.renderAt(t);
        const url = player.canvas.toDataURL('image/png');
        out.push(url.slice(url.indexOf(',') + 1));
    }
    player.setLayer(null);
    return out;
}"""


@pytest.fixture(scope="module")
async def page(chromium: Any) -> AsyncIterator[Any]:
    async with player_page(chromium) as pg:
        yield pg


SIZE = (960, 540)


@pytest.mark.browser
@pytest.mark.parametrize(
    "kind, step, ts",
    [
        (ExtraType.WIN_BAR, "lost", (0.25, 2.0)),
        (ExtraType.WIN_GRAPH, "end", (2.0,)),
        (ExtraType.BEST_PLAY, "before-lost", (0.2, 2.0)),
        (ExtraType.PLAY_QUALITY, "lost", (0.15, 2.0)),
        (ExtraType.BIDDING_TABLE, "bid", (2.0,)),
    ],
)
async def test_each_element_draws_alike_in_the_page_and_in_skia(page: Any, kind: ExtraType, step: str, ts: tuple[float, ...]) -> None:
    i = {"lost": _lost_card_step, "before-lost": lambda: _lost_card_step() - 1, "bid": _bidding_step, "end": lambda: len(_steps()) - 1}[step]()
    state = _steps()[i]
    # only this element (and the hands, for the marks), so the comparison is about it
    keep = {"hand-south", "hand-west", "hand-north", "hand-east"} if kind is ExtraType.BEST_PLAY else set()
    base = default_view()
    view = base.model_copy(update={"elements": tuple(e for e in base.elements if e.type.value in keep), "extras": (Extra(id="x", type=kind, x=700, y=420),)})
    scene = build_broadcast_scene(state, view, size=SIZE)
    layer = build_analysis_layer(state, view, _analysis(False)(i), size=SIZE)
    assert layer.ops, f"{kind.value} drew nothing at step {i}"
    pngs = await page.evaluate(DRAW, [scene.dumps(), layer.dumps(), list(ts)])
    both = compose(scene, layer)
    for t, png in zip(ts, pngs):
        f = figures(both, t, premul(png))
        assert_parity(f"{kind.value}@{t}", f)
    assert np.any(premul(pngs[-1])[..., 3] > 0)


# ---- video: render and frame draw the same layer --------------------------------------------


def _cli(*args: str) -> None:
    """The command's own entry point, in this process (its imports are this process's already)."""
    from overlay.cli import main

    assert main(list(args)) == 0


def test_frame_with_analysis_draws_the_composed_scene(tmp_path: Any) -> None:
    from PIL import Image

    from renderer.build import build_scene
    from renderer.raster import raster, to_rgba

    game = tmp_path / "g.egn"
    game.write_text(json.dumps(generate_game(SEED, deals=DEALS)), encoding="utf-8")
    i = _lost_card_step()
    _cli("frame", str(game), "--step", str(i), "--size", "960x540", "--analysis", "-o", str(tmp_path / "a.png"))
    got = np.asarray(Image.open(tmp_path / "a.png").convert("RGBA")).astype(int)
    state = _steps()[i]
    scene = compose(build_scene(state, title=load_game(game.read_bytes(), source="g.egn").timeline.title, size=(960, 540)), build_analysis_layer(state, default_view(), _analysis(False)(i), size=(960, 540)))
    want = to_rgba(raster(scene, scene.duration)).astype(int)
    d = np.abs(got - want)
    assert d.max() <= 8 and (d > 0).mean() < 0.005, (d.max(), (d > 0).mean())


def test_render_with_analysis_adds_the_layer_and_public_hides_the_rest(tmp_path: Any) -> None:
    from PIL import Image

    game = tmp_path / "g.egn"
    game.write_text(json.dumps(generate_game(SEED, deals=DEALS)), encoding="utf-8")
    runs = {}
    for name, extra in (("plain", ()), ("full", ("--analysis",)), ("public", ("--analysis", "public"))):
        out = tmp_path / name
        _cli("render", str(game), "-o", str(out), "--codec", "png", "--size", "480x270", "--fps", "1", "--deals", "1", *extra)
        runs[name] = [np.asarray(Image.open(p).convert("RGBA")).astype(int) for p in sorted(out.glob("*.png"))]
    assert len(runs["plain"]) == len(runs["full"]) == len(runs["public"]) > 5
    # the default places at 480x270 (a quarter): the win bar at (24, 61), the bidding table at (24, 160)
    bar = (slice(61, 80), slice(24, 174))
    table = (slice(160, 211), slice(24, 129))
    cover = {name: [float((f[bar][..., 3] > 0).mean()) for f in frames] for name, frames in runs.items()}
    assert max(cover["plain"]) < 0.2 and min(cover["full"]) > 0.8 and min(cover["public"]) > 0.8, cover
    assert sum(np.abs(f[table] - p[table]).max() > 32 for f, p in zip(runs["full"], runs["plain"])) >= 1  # the bidding table
    assert all(np.abs(f[table] - p[table]).max() <= 8 for f, p in zip(runs["public"], runs["plain"]))  # never on the clean output
