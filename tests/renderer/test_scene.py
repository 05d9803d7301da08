"""Scene building, legacy views import, text fitting, annotations, perspective, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cards import Suit, parse_card
from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind, Timeline
from renderer.build import build_scene, element_size
from renderer.cardart import bower_of
from renderer.fonts import fit_text, font_files, measure
from renderer.legacy import css_colour, views_from_legacy
from renderer.panels import parse_quality
from renderer.raster import raster, to_rgba
from renderer.scene import Scene, sample
from renderer.view import ElementType, Perspective, View, default_view

from ..support import SHARED_EGN

LEGACY = SHARED_EGN / "examples" / "conversion_examples" / "test_timingsLayouts.egn"


@pytest.fixture(scope="module")
def tl() -> Timeline:
    return load_game(json.dumps(generate_game(2)), source="gen-2").timeline


def test_legacy_views_place_each_element_where_the_file_says() -> None:
    if not LEGACY.exists():
        pytest.skip(f"legacy example not present at {LEGACY} (../shared sits beside the clone in CI only)")
    raw = json.loads(LEGACY.read_text(encoding="utf-8"))
    (view,) = views_from_legacy(raw["views"])
    assert (view.width, view.height, view.background, view.focus_seat) == (1920, 1080, None, 2)
    assert view.perspective is Perspective.ALL
    elements = raw["views"][0]["layout"]["elements"]
    assert len(view.elements) == len(elements) == 16
    tl = load_game(json.dumps(generate_game(4)), source="g").timeline
    scene = build_scene(tl.steps[10], view)
    boxes = {b["id"]: b for b in scene.elements}
    for e in elements:
        mine = next(el for el in view.elements if el.id == e["id"])
        assert (mine.x, mine.y, mine.scale, mine.visible) == (e["x"], e["y"], e["scale"], e["visible"])
        if e["visible"]:
            box = boxes[e["id"]]
            w, h = element_size(ElementType(e["type"]))
            assert (box["x"], box["y"]) == (e["x"], e["y"])
            assert (box["w"], box["h"]) == (round(w * e["scale"], 2), round(h * e["scale"], 2))
        else:
            assert e["id"] not in boxes
    ann = next(el for el in view.elements if el.id == "annotations")
    assert ann.style.background == "#0a0c12e6" and ann.style.text_colour == "#ffd700ff" and ann.style.font_size == 22


@pytest.mark.parametrize("text, want", [("rgba(0, 0, 0, 0)", "#00000000"), ("rgba(20, 24, 33, 0.85)", "#141821d9"), ("#fff", "#ffffffff"), ("bogus", None)])
def test_css_colour(text: str, want: str | None) -> None:
    assert css_colour(text) == want


def test_default_view_inside_title_safe_area() -> None:
    view = default_view()
    for el in view.elements:
        w, h = element_size(el.type)
        assert 96 <= el.x and el.x + w * el.scale <= 1824, el.id
        assert 54 <= el.y and el.y + h * el.scale <= 1026, el.id


def test_scene_is_pure_and_round_trips(tl: Timeline) -> None:
    state = tl.steps[12]
    a, b = build_scene(state), build_scene(state)
    assert a.dumps() == b.dumps()
    again = Scene.from_json(json.loads(a.dumps()))
    assert again.dumps() == a.dumps()
    x = to_rgba(raster(a, 0.3))
    y = to_rgba(raster(again, 0.3))
    assert (x == y).all()


def test_shared_ops_stay_as_made_and_the_text_as_json_writes_it(tl: Timeline) -> None:
    """The builder shares one list per distinct rounded rectangle and text op between scenes
    (renderer.scene ``_RRECTS``, ``_TEXTS``), still cards' ops (renderer.table ``_STILL``)
    and still panels (``Ctx.still``): every scene of a game, built again after all of
    them were drawn and taken into a take, is the same text; and ``Scene.dumps`` (msgspec)
    writes what ``json.dumps`` writes."""
    import renderer.context as context_module
    import renderer.scene as scene_module
    import renderer.table as table_module
    from renderer.take import take_scene
    from renderer.timing import TakeTransition

    first = [build_scene(s, title="Fête ✓ 日本", size=(1280, 720)) for s in tl.steps]
    texts = [s.dumps() for s in first]
    for scene in first[::9]:
        raster(scene, 0.2)
    take_scene(first[3], first[4], TakeTransition(style="wipe", run_time=0.5), 0.0, accent="#ff0000ff", panel="#000000ff", image=None).dumps()
    assert [s.dumps() for s in first] == texts
    assert [build_scene(s, title="Fête ✓ 日本", size=(1280, 720)).dumps() for s in tl.steps] == texts
    # and the kept pictures are what drawing afresh draws
    for kept in (scene_module._RRECTS, scene_module._TEXTS, scene_module._BOXES, scene_module._TRACKS, table_module._STILL, context_module._STILLS):
        kept.clear()
    assert [build_scene(s, title="Fête ✓ 日本", size=(1280, 720)).dumps() for s in tl.steps] == texts
    for text, scene in zip(texts[::7], first[::7]):
        assert text == json.dumps(scene.to_json(), separators=(",", ":"), ensure_ascii=False)


def _clear_kept() -> None:
    import renderer.context as context_module
    import renderer.scene as scene_module
    import renderer.table as table_module

    for kept in (scene_module._RRECTS, scene_module._TEXTS, scene_module._BOXES, scene_module._TRACKS, table_module._STILL, context_module._STILLS):
        kept.clear()


@pytest.mark.parametrize("seed", [5, 17])
def test_kept_pictures_draw_what_a_fresh_build_draws_under_any_settings(seed: int) -> None:
    """Every step of a game, under settings that change what the kept pictures show (team
    names and photos from match data, a timing with no motion, a theme of other colours, the
    hands face down, another size), one build after another as a live show makes them, is
    the same text as a build with every kept picture forgotten first."""
    from renderer.matchdata import MatchData, PlayerData, TeamData
    from renderer.onair import step_scene
    from renderer.theme import DEFAULT_THEME
    from renderer.timing import DEFAULT_TIMING, StepTiming

    steps = load_game(json.dumps(generate_game(seed, deals=3)), source=f"gen-{seed}").timeline.steps
    photo = "0123456789abcdef0123456789abcdef.png"
    match = MatchData(teams=(TeamData(name="Owls"), TeamData()), players=(PlayerData(name="Ada Quill", photo=photo), PlayerData(), PlayerData(photo=photo), PlayerData()))
    still = StepTiming(run_time=0.0, hold=1.0)
    timing = DEFAULT_TIMING.model_copy(update={k: still for k in ("deal_start", "call", "card", "trick_taken", "deal_scored", "discard", "game_over")})
    theme = DEFAULT_THEME.model_copy(update={"accent": "#33cc99ff", "panel": "#202a44ff"})
    hidden = default_view().model_copy(update={"perspective": Perspective.NONE, "focus_seat": 1})
    settings = [
        (default_view(), DEFAULT_THEME, DEFAULT_TIMING, None, (1920, 1080)),
        (default_view(), theme, timing, match, (1280, 720)),
        (hidden, DEFAULT_THEME, DEFAULT_TIMING, match, (1920, 1080)),
    ]
    for view, th, ti, md, size in settings:
        kept = [step_scene(st, view, th, ti, md, title="Final", size=size).dumps() for st in steps]
        fresh = []
        for st in steps:
            _clear_kept()
            fresh.append(step_scene(st, view, th, ti, md, title="Final", size=size).dumps())
        assert kept == fresh
        # and again in reverse order, each kept picture found from another step
        assert [step_scene(st, view, th, ti, md, title="Final", size=size).dumps() for st in reversed(steps)] == fresh[::-1]


def test_every_step_builds_and_scales(tl: Timeline) -> None:
    for state in tl.steps[:40]:
        for size in ((1920, 1080), (1280, 720), (3840, 2160)):
            scene = build_scene(state, size=size)
            assert (scene.width, scene.height) == size
            assert scene.duration > 0


def test_tracks_sample_with_easing() -> None:
    track = [[0.0, 0.0], [1.0, 10.0, "linear"], [2.0, 0.0, "step"]]
    assert sample(track, -1) == 0.0 and sample(track, 0.5) == 5.0
    assert sample(track, 1.5) == 10.0 and sample(track, 2.0) == 0.0 and sample(track, 9) == 0.0


def test_card_in_flight_moves(tl: Timeline) -> None:
    state = next(s for s in tl.steps if s.kind is StepKind.CARD)
    scene = build_scene(state)
    frames = [to_rgba(raster(scene, t)) for t in (0.0, 0.2, scene.duration)]
    assert (frames[0] != frames[1]).any() and (frames[1] != frames[2]).any()


@pytest.mark.parametrize(
    "text, tag, body",
    [("[!!] Great lead", "!!", "Great lead"), ("[?!]dubious", "?!", "dubious"), ("[?] x", "?", "x"), ("plain [!]", None, "plain [!]")],
)
def test_quality_tags(text: str, tag: str | None, body: str) -> None:
    assert parse_quality(text) == (tag, body)


def test_annotations_on_air(tl: Timeline) -> None:
    from dataclasses import replace

    state = replace(tl.steps[10], annotations=("[??] Should have led trump here, not the off ace.",))
    ops = build_scene(state).ops
    texts = [op[5] for op in ops if op[0] == "t"]
    assert "??  BLUNDER" in texts and not any("[??]" in t for t in texts)


def test_names_shrink_then_ellipsis() -> None:
    text, size = fit_text("bold", 27, "Bartholomew Featherstonehaugh-Wolfeschlegel", 200)
    assert text.endswith("\u2026") and size < 27 and measure("bold", size, text) <= 200
    assert fit_text("bold", 27, "Ann", 200) == ("Ann", 27)


def test_perspective_focus_hides_other_hands(tl: Timeline) -> None:
    state = tl.steps[3]
    view = default_view().model_copy(update={"perspective": Perspective.FOCUS, "focus_seat": 1})
    scene = build_scene(state, view)
    faces = [op[1] for op in scene.ops if op[0] == "sp" and op[1].startswith("f:")]
    backs = [op[1] for op in scene.ops if op[0] == "sp" and op[1].startswith("b")]
    assert len(faces) == 5 + 1  # the focus hand and the up-card, once: on the table (the kitty leaves it out)
    assert len(backs) >= 15


def test_bowers() -> None:
    assert bower_of(parse_card("Jh"), Suit.HEARTS) == "R"
    assert bower_of(parse_card("Jd"), Suit.HEARTS) == "L"
    assert bower_of(parse_card("Jc"), Suit.HEARTS) == ""
    assert bower_of(parse_card("Jh"), None) == ""


def test_fonts_are_pinned_files() -> None:
    files = font_files()
    assert files and all(p.is_file() and p.suffix in (".ttf", ".otf") for p in files.values())


@pytest.mark.parametrize("text", ["王小明", "佐藤 健", "김민준", "Zoë 李"])
def test_cjk_names_use_the_fallback_font(text: str) -> None:
    from renderer.fonts import FALLBACK, shape, uses_fallback

    sh = shape("bold", text)
    assert uses_fallback("bold", text)
    assert 0 not in sh.glyphs  # no empty boxes (.notdef)
    assert FALLBACK in sh.fonts and measure("bold", 20, text) > 0
    if "Zoë" in text:
        assert sh.fonts[0] == "bold"  # Latin stays in Barlow
    assert not uses_fallback("bold", "Zoë Ångström-Nakamura Đặng Thị Ngọc Hân")


def test_cli_frame(tmp_path: Path) -> None:
    from overlay.cli import main

    game = tmp_path / "g.egn"
    game.write_text(json.dumps(generate_game(5)), encoding="utf-8")
    out = tmp_path / "f.png"
    assert main(["frame", str(game), "--step", "9", "--t", "0.1", "--size", "1280x720", "-o", str(out)]) == 0
    from PIL import Image

    assert Image.open(out).size == (1280, 720)
    assert main(["frame", str(game), "--step", "99999", "-o", str(out)]) == 2


def test_bench_render_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The figures, at a small size (the bench's own is 1080p); the bench holds its process
    to one core while it times and gives it back its cores after (a test worker, and all it
    starts later, were left on one core)."""
    import os

    from overlay.cli import main

    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    assert main(["bench", "render", "--json", "--repeat", "5", "--size", "640x360"]) == 0
    assert cores is None or os.sched_getaffinity(0) == cores
    figures = json.loads(capsys.readouterr().out)
    assert figures["size"] == "640x360"
    assert {"build_ms", "raster_ms_sprite_cache", "raster_ms_no_cache", "raster_ms_sequence"} <= set(figures)
    assert figures["sequence_frames"] > 0 and figures["raster_ms_sequence"] > 0


def test_view_models_document_every_field() -> None:
    from renderer.theme import Theme
    from renderer.timing import Timing

    for model in (View, Theme, Timing):
        schema = model.model_json_schema()
        for name, prop in schema["properties"].items():
            # pydantic keeps a field's title out of the schema when the type is a $ref
            assert prop.get("description") and (prop.get("title") or "$ref" in prop or "allOf" in prop), f"{model.__name__}.{name}"


def test_renderer_modules_import_without_a_cycle_and_only_downwards() -> None:
    """renderer/ imports engine and itself (never overlay or studio), and no module of it
    imports itself back through others (a cycle makes import order matter)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "renderer"
    graph: dict[str, set[str]] = {}
    for path in sorted(root.glob("*.py")):
        name = path.stem
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    graph[name].add(node.module.split(".")[0])
                else:
                    graph[name] |= {a.name for a in node.names}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for mod in mods:
                    top = mod.split(".")[0]
                    assert top not in ("overlay", "studio", "tests"), f"renderer/{path.name} imports {mod}"
                    if top == "renderer":
                        graph[name].add(mod.split(".")[1] if "." in mod else "__init__")
    graph.pop("__init__", None)  # the package re-exports; its modules never import it
    for deps in graph.values():
        deps.discard("__init__")
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            assert state.get(dep) != 1, "import cycle: " + " -> ".join([*trail, node, dep])
            if dep not in state:
                visit(dep, [*trail, node])
        state[node] = 2

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [])


def test_theme_card_font_draws_the_card_indices(tl: Timeline) -> None:
    from renderer.theme import Theme

    state = tl.steps[3]
    plain = build_scene(state)
    bold = build_scene(state, theme=Theme(font_card="extrabold"))
    fonts = {op[1] for ops in bold.defs.values() for op in ops if op[0] == "t"}
    assert fonts == {"extrabold"} and "extrabold" in bold.fonts
    assert {op[1] for ops in plain.defs.values() for op in ops if op[0] == "t"} == {"bold"}
    # a sprite id names one drawing: the other font gives other ids
    assert not set(bold.defs) & {k for k in plain.defs if k.startswith("f:")}
