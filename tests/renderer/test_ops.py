"""The op table (renderer/ops.py) is the one definition of the scene's ops, paints and easings.

The page's copy (overlay/static/ops.json) is generated from it; the skia executor's dispatch
and the Builder cover it exactly; every scene the renderer builds follows it; a scene that
breaks it is refused with the JSON path of the bad value.  (The page player's side, and both
executors drawing every op alike, are tested in test_render_parity.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.generate import generate_game
from engine.load import load_game
from renderer import raster as raster_module
from renderer.build import build_scene
from renderer.easing import EASINGS
from renderer.ops import OP, OPS, PAINTS, Category, SceneError, check_ops, names_in, require_handlers, table, table_json
from renderer.take import take_scene
from renderer.timing import TakeTransition
from renderer.scene import Builder, Scene
from renderer.view import Perspective, default_view

OPS_JSON = Path(__file__).resolve().parents[2] / "overlay" / "static" / "ops.json"


def test_ops_json_is_the_generated_table(request: pytest.FixtureRequest) -> None:
    """The page reads the table from ops.json: it must be renderer.ops's, byte for byte."""
    text = table_json()
    if request.config.getoption("--update-golden"):
        OPS_JSON.write_text(text, encoding="utf-8")
    assert OPS_JSON.read_text(encoding="utf-8") == text, (
        "overlay/static/ops.json is stale: rewrite it with  pytest tests/renderer/test_ops.py --update-golden"
    )
    assert json.loads(text) == table()


def test_table_lists_each_name_once_with_a_category_and_doc() -> None:
    data = table()
    for group in ("ops", "paints", "easings"):
        names = [item["name"] for item in data[group]]
        assert len(names) == len(set(names)), group
        assert all(item["doc"] for item in data[group]), group
    assert {o["category"] for o in data["ops"]} == {c.value for c in Category}
    assert [e["name"] for e in data["easings"]] == list(EASINGS)


def test_skia_executor_dispatches_from_the_table() -> None:
    assert names_in(raster_module._Exec, "op_") == set(OP)
    assert set(raster_module._RUN) == set(OP)
    assert set(raster_module._PAINT) == {p.name for p in PAINTS}


@pytest.mark.parametrize(
    "listed, handled, missing, extra",
    [
        ([*OP, "ell"], list(OP), "ell", None),  # added to the table only
        (list(OP), [*OP, "ell"], None, "ell"),  # added to the executor only
    ],
    ids=["op-only-in-table", "op-only-in-executor"],
)
def test_an_executor_that_differs_from_the_table_is_refused(
    listed: list[str], handled: list[str], missing: str | None, extra: str | None
) -> None:
    with pytest.raises(SceneError) as err:
        require_handlers("op", listed, handled, "an executor")
    text = str(err.value)
    assert (f"lacks ['{missing}']" in text) if missing else ("lacks []" in text)
    assert (f"unlisted ['{extra}']" in text) if extra else ("unlisted []" in text)


#: an image id (content ids need no file to be valid scene data)
PHOTO = "0123456789abcdef0123456789abcdef.png"


def _every_builder_method(b: Builder) -> None:
    k = b.tween(0, 1, 0.0, 1.0, "back")
    b.save()
    b.translate(k, 2)
    b.scale(k, 0.5)
    b.rotate(k)
    b.alpha(k)
    b.shadow("#00000080", 8, 1, 2)
    b.clip(0, 0, 10, 10, 2)
    b.rrect(0, 0, 10, 10, 2, ["lin", 0, 0, 10, 0, [[0, "#000000ff"], [1, "#ffffffff"]]], "#ffffffff", 1)
    b.path("M0 0L10 0L5 8Z", "#ff0000ff", None, 0)
    b.text("bold", 12, 0, 10, "Jd", "#ffffffff", 0.5)
    b.defs["x"] = [["rr", 0, 0, 100, 140, 7, "#ffffffff", None, 0]]
    b.sprite("x", 0, 0, 0.5)
    b.image(PHOTO, 0, 0, 20, 10, "cover")
    b.layer(k, "plus")
    b.rrect(0, 0, 10, 10, 2, "#ffffffff")
    b.restore()
    b.restore()


def test_the_builder_writes_every_op_and_only_valid_ones() -> None:
    b = Builder()
    _every_builder_method(b)
    assert {op[0] for op in b.ops} == set(OP)
    check_ops(b.ops, tracks=len(b.tracks), defs=b.defs)


def test_every_scene_the_renderer_builds_follows_the_table() -> None:
    tl = load_game(json.dumps(generate_game(2)), source="g").timeline
    focus = default_view().model_copy(update={"perspective": Perspective.FOCUS, "focus_seat": 3})
    seen: set[str] = set()
    for state in tl.steps:
        for view in [None, focus] if state.step % 4 == 0 else [None]:
            photos = (PHOTO, None, None, PHOTO) if state.step % 3 == 0 else ()  # match data's photos
            scene = build_scene(state, view, size=(1280, 720), photos=photos)
            assert scene.images == ([PHOTO] if photos else [])
            again = Scene.from_json(json.loads(scene.dumps()), source=f"step {state.step}")  # checks every op
            assert again.dumps() == scene.dumps()
            seen |= {op[0] for ops in [scene.ops, *scene.defs.values()] for op in ops}
            if state.step % 4 == 0 and view is not None:  # a TAKE from the default view to this one
                plain = build_scene(state, None, size=(1280, 720), photos=photos)
                taken = take_scene(plain, scene, TakeTransition(style="mix"), 0.2)
                Scene.from_json(json.loads(taken.dumps()), source=f"take at step {state.step}")
                seen |= {op[0] for op in taken.ops}
    assert seen == set(OP), set(OP) - seen  # real scenes use the whole op set


BAD: list[tuple[str, Any, str]] = [
    ("unknown op", ["zz", 1], "/ops/1"),
    ("arity", ["tr", 1], "/ops/1"),
    ("track out of range", ["a", {"k": 5}], "/ops/1/1"),
    ("anim not a number", ["tr", "1", 2], "/ops/1/1"),
    ("bad colour", ["rr", 0, 0, 1, 1, 0, "red", None, 0], "/ops/1/6"),
    ("bad paint", ["rr", 0, 0, 1, 1, 0, ["rad", 0, 0, 1], None, 0], "/ops/1/6"),
    ("bad stops", ["p", "M0 0L1 1Z", ["lin", 0, 0, 1, 0, [[0, "#fff"], "x"]], None, 0], "/ops/1/2"),
    ("bad path", ["p", "M0 0 A 1 1 0 0 1 2 2", "#ffffff", None, 0], "/ops/1/1"),
    ("unknown sprite", ["sp", "nope", 0, 0, 1], "/ops/1/1"),
    ("text fill is a colour", ["t", "bold", 10, 0, 0, "x", None, 0], "/ops/1/6"),
    ("image id is a content id", ["im", "../overlay.sqlite3", 0, 0, 1, 1, "contain"], "/ops/1/1"),
    ("image fit", ["im", "0" * 32 + ".png", 0, 0, 1, 1, "stretch"], "/ops/1/6"),
    ("layer blend", ["ly", 1, "multiply"], "/ops/1/2"),
]


@pytest.mark.parametrize("why, op, path", BAD, ids=[b[0] for b in BAD])
def test_a_scene_that_breaks_the_table_is_refused_with_its_path(why: str, op: Any, path: str) -> None:
    data = {"v": 1, "w": 10, "h": 10, "bg": None, "dur": 0, "fonts": [], "tracks": [[[0, 0], [1, 1]]], "defs": {}, "ops": [["s"], op, ["r"]]}
    with pytest.raises(SceneError) as err:
        Scene.from_json(data, source="feed.json")
    assert err.value.path == path and str(err.value).startswith(f"feed.json: {path}: "), (why, str(err.value))


@pytest.mark.parametrize(
    "ops, defs, message",
    [
        ([["s"]], {}, r"1 save\(s\) without a restore"),
        ([["r"]], {}, "restore without a save"),
        ([["sp", "a", 0, 0, 1]], {"a": [["sp", "a", 0, 0, 1]]}, "sprites never nest"),
    ],
)
def test_structure_is_checked(ops: list[Any], defs: dict[str, Any], message: str) -> None:
    data = {"v": 1, "w": 10, "h": 10, "bg": None, "dur": 0, "fonts": [], "tracks": [], "defs": defs, "ops": ops}
    with pytest.raises(SceneError, match=message):
        Scene.from_json(data)


def test_another_format_version_is_refused() -> None:
    with pytest.raises(SceneError, match="scene format 2 is not 1"):
        Scene.from_json({"v": 2, "w": 1, "h": 1, "ops": []})


def test_layers_read_categories_from_the_table() -> None:
    from renderer import layers

    assert layers._DRAW == {s.name for s in OPS if s.category is Category.DRAW}
    assert layers._MOVE == {s.name for s in OPS if s.category is Category.MOVE}


def test_the_skia_executor_refuses_an_unknown_op() -> None:
    from renderer.raster import raster

    scene = Scene(20, 20, None, 0.0, [], [], {}, [["s"], ["ell", 1, 2, 3], ["r"]])
    with pytest.raises(SceneError, match="unknown scene op 'ell'"):
        raster(scene, 0.0)
