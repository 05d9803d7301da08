"""Both executors of a scene agree: the page player (overlay/static/player.js in the real
Chromium) and the skia executor (renderer/raster.py).

* Every op, paint and easing of the op table (renderer/ops.py, the page's ops.json) is drawn
  alone and in combination by both, and a game frame too, and compared by the parity criteria
  of the project's design, on premultiplied values: non-text pixels >= 99.99% within 4/255;
  text pixels >= 80% within 8/255 and >= 98% within 32/255; no 8x8 block off by more than
  24/255 on average.  Text pixels are those that change when the scene's text ops are removed
  (dilated by one pixel).  The cases must cover the whole table: an op added to the table
  without a case here fails.
* The player's exported ``ease``, ``sample`` and ``plan`` equal the Python ones (exactly, on a
  grid of t; plans on real scenes).
* The player builds its dispatch from ops.json and refuses a table naming an op, paint or
  easing it lacks, or lacking one it has: an op added to one side only fails here.

The page imports the player module by URL as production pages do; it fetches ``ops.json`` beside itself.

What makes the two agree (measured on the game frame: non-text 100% within 4/255, text 95%
within 8/255 and 99.8% within 32/255): shadows drawn as Chromium draws them (the shape in a
layer blurred by a drop-shadow image filter, not skia's analytic mask blur, which lands 1 px
wider), Chromium's text contrast/gamma tables on the skia side (renderer/textgamma.py),
subpixel glyph positions and HarfBuzz runs drawn as one positioned blob.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from io import BytesIO
from typing import Any

import numpy as np
import pytest

from engine.cards import Suit
from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from renderer.build import build_scene
from renderer.cardart import suit_path
from renderer.easing import EASINGS, ease
from renderer.layers import plan
from renderer.ops import OPS, PAINTS, table
from renderer.raster import default_assets
from renderer.scene import Builder, Scene, sample
from tests.parity import assert_parity, figures, player_page, premul
from tests.support import PLAYER_ORIGIN

#: one worker runs this file under pytest-xdist (--dist loadgroup): its shared set-up is made once
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("parity_page")]

ORIGIN = PLAYER_ORIGIN

#: in the page: draw scene `text` at each t; PNG data of each frame
DRAW = """async ([text, ts]) => {
    const player = window.player;
    player.setScene(text, 0);
    await player.sceneReady;
    const out = [];
    for (const t of ts) {
        player.renderAt(t);
        const url = player.canvas.toDataURL('image/png');
        out.push(url.slice(url.indexOf(',') + 1));
    }
    return out;
}"""


@pytest.fixture(scope="module")
async def page(chromium: Any) -> AsyncIterator[Any]:
    """One page in the worker's Chromium with the player loaded by URL and its fonts served,
    as in the overlay."""
    # the page loads images from its image base, /media/ by default, as the overlay serves
    # them; the skia executor has them in its Assets
    for image_id, data in IMAGES.items():
        default_assets().add_image(image_id, data)
    async with player_page(chromium, routes=lambda p: p.route(f"{ORIGIN}/media/*", _serve_image)) as pg:
        yield pg


def _serve_image(route: Any) -> Any:
    data = IMAGES.get(route.request.url.rsplit("/", 1)[1])
    if data is None:
        return route.fulfill(status=404, body="no such image")
    return route.fulfill(body=data, content_type="image/png")


# ---- the cases: every op, paint and easing alone, then together ------------------------------

W, H = 240, 160
GRAD = ["lin", 10, 0, 110, 0, [[0, "#2f8cffff"], [0.5, "#ffffff80"], [1, "#ff7a1aff"]]]
HEART = "M60 94C32 70 12 52 12 30C12 13 24 3 38 3C49 3 56 10 60 19C64 10 71 3 82 3C96 3 108 13 108 30C108 52 88 70 60 94Z"
WAVE = "M10 120Q60 60 110 120L110 150L10 150Z"


@dataclass
class Case:
    """A small scene drawn at a few times; ``uses`` lists what of the table it exercises."""

    name: str
    draw: Callable[[Builder], None]
    ts: tuple[float, ...] = (0.0,)
    uses: set[str] = field(default_factory=set)
    sprites: dict[str, Callable[[Builder], None]] = field(default_factory=dict)

    def scene(self) -> Scene:
        b = Builder()
        for sid, make in self.sprites.items():
            sb = Builder()
            make(sb)
            b.defs[sid] = sb.ops
            b.fonts |= sb.fonts
        self.draw(b)
        return Scene(W, H, None, max(b.duration, 1.0), sorted(b.fonts), b.tracks, b.defs, b.ops, images=sorted(b.images))


def _card(b: Builder) -> None:
    """A sprite: a card-like face with a clip, a shadow op (off inside sprites) and text,
    inside the card box as the op table asks."""
    b.shadow("#000000ff", 12, 6, 6)
    b.rrect(0, 0, 100, 140, 7.5, "#fbfaf6ff", "#c9ccd3ff", 1.5)
    b.save()
    b.clip(8, 8, 84, 124, 4)
    b.path("M0 0L140 140M40 0L180 140M-40 0L100 140", None, "#c9a22755", 6)
    b.restore()
    b.path(suit_path(Suit.HEARTS, 40, 60, 50), "#d3122cff")
    b.text("bold", 44, 8, 44, "K", "#16181dff")


def _save_restore(b: Builder) -> None:
    b.save()
    b.alpha(0.4)
    b.translate(60, 40)
    b.rrect(0, 0, 80, 50, 6, "#2f8cffff")
    b.restore()
    b.rrect(10, 90, 80, 50, 6, "#2f8cffff")  # full alpha, not moved


def _translate(b: Builder) -> None:
    b.save()
    b.translate(b.tween(0, 1, 10.3, 120.7, "linear"), 30.45)
    b.rrect(0, 0, 90, 60, 8, "#ff7a1aff")
    b.restore()


def _scale(b: Builder) -> None:
    b.save()
    b.translate(20, 20)
    b.scale(b.tween(0, 1, 0.5, 1.7, "linear"), 1.3)
    b.rrect(0, 0, 80, 60, 10, "#22c55eff", "#ffffffff", 2)
    b.restore()


def _rotate(b: Builder) -> None:
    b.save()
    b.translate(120, 80)
    b.rotate(b.tween(0, 1, -0.6, 0.9, "linear"))
    b.rrect(-50, -30, 100, 60, 6, "#ef4444ff", "#ffffffff", 1.5)
    b.restore()


def _alpha(b: Builder) -> None:
    b.save()
    b.alpha(b.tween(0, 1, 0.0, 1.0, "linear"))
    b.rrect(10, 10, 100, 100, 12, "#2f8cffff")
    b.save()
    b.alpha(0.5)  # multiplies
    b.rrect(60, 50, 120, 90, 12, "#ffffffff", "#000000ff", 3)
    b.restore()
    b.restore()
    b.save()
    b.alpha(1.8)  # clamped to 1
    b.rrect(150, 10, 60, 40, 4, "#f2c230aa")
    b.restore()


def _layer(b: Builder) -> None:
    """A group's opacity: two overlapping shapes, a shadowed one and a card, faded as one
    (the overlap does not show through), nested in a layer at a fixed alpha and under a
    global alpha and a clip (the parent's clip holds when the layer lands)."""
    b.save()
    b.clip(0, 0, 200, 150, 10)
    b.alpha(0.8)
    b.layer(b.tween(0, 1, 0.0, 1.0, "linear"))
    b.rrect(10, 10, 120, 100, 12, "#2f8cffff")
    b.shadow("#00000099", 8, 3, 4)
    b.rrect(60, 50, 150, 90, 12, "#ffffffff", "#000000ff", 3)
    b.restore()
    b.layer(0.5, "plus")
    b.sprite("card", 140, 10, 0.8)
    b.rrect(120, 40, 80, 60, 6, "#ff7a1aff")
    b.restore()
    b.restore()


def _shadow(b: Builder) -> None:
    b.save()
    b.shadow("#00000099", 14, 0, 4)
    b.rrect(20, 20, 90, 60, 10, "#101624e6", "#ffffff24", 1)
    b.rrect(130, 20, 90, 60, 0, "#ff7a1a80")  # translucent fill: fainter shadow
    b.save()
    b.scale(0.5)  # blur and offset stay in device pixels
    b.path(HEART, "#d3122cff")
    b.restore()
    b.shadow("#2f8cffcc", 6, -3, 3)
    b.path(WAVE, "#fbfaf6ff")
    b.path("M150 100L230 100L190 150Z", GRAD)  # the shadow follows the gradient's alpha
    b.rrect(140, 95, 95, 8, 4, GRAD)
    b.restore()


def _clip(b: Builder) -> None:
    b.save()
    b.clip(20, 20, 160, 110, 18)
    b.rrect(0, 0, 240, 160, 0, "#2f8cffff")
    b.clip(60, 0, 200, 90, 0)  # intersects
    b.path(WAVE, "#ffffffff", "#000000ff", 4)
    b.rrect(100, 30, 130, 130, 30, "#f2c230ff")
    b.restore()
    b.rrect(190, 120, 40, 30, 6, "#22c55eff")  # clip gone


def _rounded_rect(b: Builder) -> None:
    b.rrect(5.5, 5.5, 100, 60, 14, "#fbfaf6ff", "#16181dff", 3)
    b.rrect(120, 10, 110, 50, 0, GRAD)
    b.rrect(10, 80, 60, 60, 60, "#ef4444ff")  # radius clamped: a circle
    b.rrect(90, 80, 140, 60, 10, None, GRAD, 5)
    b.rrect(20, 150, 1, 1, 0, "#ffffffff")


def _path(b: Builder) -> None:
    b.path(HEART, "#d3122cff", "#16181dff", 2)
    b.path(WAVE, GRAD)
    b.path("M130 20L220 20L175 100Z", None, "#f2c230ff", 3)
    b.path("M130 150C150 100 200 160 225 110", None, GRAD, 2.5)


def _text(b: Builder) -> None:
    b.text("extrabold", 40, 8, 44, "SCORE 10", "#ffffffff")
    b.text("bold", 24, 10, 80, "Zoë Ångström", "#16181dff")
    b.rrect(0, 90, 240, 70, 0, "#0b3d2eff")
    b.text("semibold", 18, 10, 116, "MARCH", "#f2c230ff", 3)
    b.text("medium", 20, 120, 116, "loner", "#aab3c5ff")
    b.text("bold", 26, 10, 150, "王小明 Kim", "#ffffffff")  # the fallback font


def _sprite(b: Builder) -> None:
    b.save()
    b.shadow("#000000ff", 10, 4, 4)  # off inside the sprite
    b.sprite("card", 10, 8)
    b.alpha(0.6)
    b.sprite("card", 130, 20, 0.75)
    b.restore()


def _test_png(w: int, h: int, seed: int) -> bytes:
    """A small PNG with hard and soft edges, colour ramps and translucent pixels."""
    from PIL import Image

    y, x = np.mgrid[0:h, 0:w]
    rgba = np.zeros((h, w, 4), dtype=np.uint8)
    rgba[..., 0] = (x * 255 // max(w - 1, 1)).astype(np.uint8)
    rgba[..., 1] = (y * 255 // max(h - 1, 1)).astype(np.uint8)
    rgba[..., 2] = np.where((x // 6 + y // 6 + seed) % 2 == 0, 230, 40).astype(np.uint8)
    rgba[..., 3] = np.where(x < w // 5, 128, 255).astype(np.uint8)
    buf = BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, format="PNG")
    return buf.getvalue()


def _image_id(data: bytes) -> str:
    import hashlib

    return hashlib.md5(data).hexdigest() + ".png"


_PNGS = [_test_png(48, 32, 0), _test_png(30, 60, 1)]
IMAGES = {_image_id(d): d for d in _PNGS}
WIDE, TALL = list(IMAGES)
PORTRAIT = _test_png(40, 52, 2)  # a player's photo
IMAGES[_image_id(PORTRAIT)] = PORTRAIT


def _image(b: Builder) -> None:
    b.image(WIDE, 4, 4, 48, 32)  # 1:1
    b.image(WIDE, 60, 4, 110, 40, "contain")  # scaled up, letterboxed sideways
    b.image(TALL, 180, 4, 50, 60, "cover")  # cropped top and bottom
    b.save()
    b.clip(10, 60, 70, 70, 35)  # a round badge, as on the name plates (on the team colour)
    b.rrect(10, 60, 70, 70, 0, "#2f8cffff")
    b.image(TALL, 10, 60, 70, 70, "cover")
    b.restore()
    b.save()
    b.alpha(b.tween(0, 1, 0.2, 1.0, "linear"))
    b.translate(100, 70)
    b.scale(0.75)
    b.image(WIDE, 0, 0, 160, 100, "contain")  # global alpha, scaled down
    b.restore()
    b.image("f" * 32 + ".png", 0, 0, 240, 160, "cover")  # never loaded: draws nothing


def _image_rotated(b: Builder) -> None:
    b.save()
    b.translate(120, 80)
    b.rotate(b.tween(0, 1, -0.3, 0.5, "linear"))  # anti-aliased edges (Chromium's rule)
    b.image(WIDE, -60, -40, 120, 80, "contain")
    b.restore()


def _together(b: Builder) -> None:
    b.save()
    b.translate(b.tween(0, 1, -20, 30, "inout"), 8)
    b.rotate(b.tween(0, 1, -0.1, 0.15, "back"))
    b.scale(b.tween(0, 1, 0.8, 1.1, "out"), 0.9)
    b.save()
    b.shadow("#00000099", 10, 3, 5)
    b.alpha(b.tween(0, 1, 0.4, 1.0, "in"))
    b.rrect(10, 10, 120, 70, 12, GRAD, "#ffffff80", 2)
    b.path(WAVE, "#22c55ecc", "#ffffffff", 1.5)
    b.restore()
    b.save()
    b.clip(120, 20, 90, 110, 14)
    b.sprite("card", 110, 10, 0.9)
    b.restore()
    b.text("semibold", 22, 14, 120, "Trump: HEARTS", "#f2c230ff", 1.0)
    b.restore()


def _eased(name: str) -> Callable[[Builder], None]:
    def draw(b: Builder) -> None:
        b.save()
        b.translate(b.tween(0, 1, 10, 140, name), b.tween(0, 1, 10, 60, name))
        b.rrect(0, 0, 80, 80, 0, "#ffffffff", "#2f8cffff", 4)
        b.restore()

    return draw


CARD = {"card": _card}
CASES: list[Case] = [
    Case("save-restore", _save_restore, uses={"s", "r", "a", "tr", "rr"}),
    Case("translate", _translate, ts=(0.0, 0.37, 1.0), uses={"tr"}),
    Case("scale", _scale, ts=(0.0, 0.5, 1.0), uses={"sc"}),
    Case("rotate", _rotate, ts=(0.0, 0.42, 1.0), uses={"ro"}),
    Case("alpha", _alpha, ts=(0.0, 0.3, 1.0), uses={"a", "s", "r", "rr"}),
    Case("layer", _layer, ts=(0.0, 0.4, 1.0), uses={"ly", "cl", "a", "sh", "sp", "rr"}, sprites={"card": _card}),
    Case("shadow", _shadow, uses={"sh", "rr", "p", "lin"}),
    Case("clip", _clip, uses={"cl", "rr", "p"}),
    Case("rounded-rect", _rounded_rect, uses={"rr", "lin"}),
    Case("path", _path, uses={"p", "lin"}),
    Case("text", _text, uses={"t", "rr"}),
    Case("sprite", _sprite, uses={"sp", "sh", "a", "cl", "p", "t"}, sprites=CARD),
    Case("image", _image, ts=(0.0, 0.5, 1.0), uses={"im", "cl", "a", "tr", "sc"}),
    Case("image-rotated", _image_rotated, ts=(0.0, 1.0), uses={"im", "ro"}),
    Case("together", _together, ts=(0.0, 0.25, 0.5, 0.75, 1.0), sprites=CARD),
] + [Case(f"ease-{n}", _eased(n), ts=(0.0, 0.13, 0.37, 0.5, 0.61, 0.88, 1.0), uses={f"ease:{n}"}) for n in EASINGS]


def test_cases_cover_the_whole_table() -> None:
    """An op, paint or easing added to the table needs a case here (and both executors)."""
    used: set[str] = set().union(*(c.uses for c in CASES))
    want = {s.name for s in OPS} | {p.name for p in PAINTS} | {f"ease:{n}" for n in EASINGS}
    assert want - used == set(), f"no parity case draws {sorted(want - used)}"
    # and the cases really use what they say
    for c in CASES:
        s = c.scene()
        found = {op[0] for ops in [s.ops, *s.defs.values()] for op in ops}
        found |= {v[0] for ops in [s.ops, *s.defs.values()] for op in ops for v in op[1:] if isinstance(v, list)}
        found |= {f"ease:{k[2] if len(k) > 2 else 'linear'}" for tr in s.tracks for k in tr[1:]}
        assert c.uses <= found, (c.name, c.uses - found)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_every_op_and_easing_draws_alike(page: Any, case: Case) -> None:
    scene = case.scene()
    frames = await page.evaluate(DRAW, [scene.dumps(), list(case.ts)])
    for t, png in zip(case.ts, frames):
        f = figures(scene, t, premul(png))
        print(case.name, t, f)
        assert_parity(f"{case.name} at t={t}", f)


def _game_scene() -> Scene:
    tl = load_game(json.dumps(generate_game(2)), source="g").timeline
    state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 3)
    return build_scene(state, size=(1280, 720))


async def test_player_matches_skia_on_a_game_frame(page: Any) -> None:
    scene, ts = _game_scene(), [0.2, 0.2]  # the second frame comes from the layer cache
    for t, png in zip(ts, await page.evaluate(DRAW, [scene.dumps(), ts])):
        f = figures(scene, t, premul(png))
        print(t, f)
        assert_parity(f"game frame at t={t}", f)


@pytest.mark.parametrize("what", ["photos-and-logo", "stinger-half-time"])
async def test_player_matches_skia_on_broadcast_images(page: Any, what: str) -> None:
    """Name-plate photos, a logo slot and the stinger (entering, then at half time) in a
    game frame: the page player and the skia executor agree."""
    from renderer.extras import build_broadcast_scene
    from renderer.matchdata import MatchData
    from renderer.timing import Timing
    from renderer.view import Extra, ExtraType, default_view

    tl = load_game(json.dumps(generate_game(2, deals=2)), source="g").timeline
    photo = _image_id(PORTRAIT)
    match = MatchData.model_validate({"teams": [{"name": "Orde\u00ae Me Up"}, {"name": "Left Bowers"}], "players": [{"photo": photo}, {"photo": TALL}, {}, {"photo": WIDE}]})
    view = default_view().model_copy(update={"extras": (Extra(id="logo", type=ExtraType.LOGO, x=1480, y=860, image=WIDE),)})
    if what == "stinger-half-time":
        state = next(s for s in tl.steps if s.kind is StepKind.DEAL_START and s.deal == 1)
        timing = Timing.model_validate({"transition": {"style": "stinger", "run_time": 0.8, "image": TALL}})
        ts = [0.2, 0.4]
    else:
        state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 2)
        timing, ts = Timing(), [0.2, 0.2]
    scene = build_broadcast_scene(state, view, timing=timing, match=match, size=(1280, 720))
    assert scene.images
    for t, png in zip(ts, await page.evaluate(DRAW, [scene.dumps(), ts])):
        f = figures(scene, t, premul(png))
        print(what, t, f)
        assert_parity(f"{what} at t={t}", f)


@pytest.mark.parametrize("what", ["statistics-extras", "alternative-line"])
async def test_player_matches_skia_on_statistics_and_lines(page: Any, what: str) -> None:
    """The statistics extras (match panel, lower third, deal-history strip) and an
    alternative line on air (banner, marked cards, one in flight): page and skia agree."""
    from renderer.altline import AltLine
    from renderer.extras import build_broadcast_scene
    from renderer.matchdata import MatchData
    from renderer.statboard import stats_book
    from renderer.view import Extra, ExtraType, default_view
    from tests.lines import lined_game

    tl = load_game(json.dumps(lined_game()), source="g").timeline
    if what == "statistics-extras":
        state = tl.steps[tl.deals[2].first_step + 8]
        extras = (
            Extra(id="stats", type=ExtraType.MATCH_STATS, x=410, y=250),
            Extra(id="third", type=ExtraType.STATS_LOWER_THIRD, x=460, y=880),
            Extra(id="deals", type=ExtraType.DEAL_HISTORY, x=340, y=700),
        )
        scene = build_broadcast_scene(
            state, default_view().model_copy(update={"extras": extras}), match=MatchData(stats="team-1"),
            size=(1280, 720), stats=stats_book(tl).at(state.step),
        )
        ts = [0.2, 5.0]
    else:
        line = next(b for b in tl.branches if b.deal == 1)
        assert line.steps[0].action is not None and line.steps[0].action.index is not None
        mark = AltLine(deal=1, line=0, first_card=line.steps[0].action.index)
        scene = build_broadcast_scene(line.steps[2], line=mark, size=(1280, 720))
        ts = [0.3, 5.0]
    for t, png in zip(ts, await page.evaluate(DRAW, [scene.dumps(), ts])):
        f = figures(scene, t, premul(png))
        print(what, t, f)
        assert_parity(f"{what} at t={t}", f)


# ---- the player module's exported functions equal the Python ones -----------------------------------

GRID = [i / 1000 for i in range(-50, 1051)]


async def test_ease_equals_python_on_a_grid(page: Any) -> None:
    got = await page.evaluate("([names, ps]) => names.map((n) => ps.map((p) => playerModule.ease(n, p)))", [list(EASINGS), GRID])
    for name, row in zip(EASINGS, got):
        want = [ease(name, p) for p in GRID]
        bad = [(p, a, b) for p, a, b in zip(GRID, row, want) if a != b]
        assert not bad, (name, bad[:5])


async def test_sample_equals_python_on_a_grid(page: Any) -> None:
    tracks = [[[0.0, 0.0], [1.0, 10.0, name]] for name in EASINGS]
    tracks += [
        [[0.1, -3.5], [0.4, 7.25, "out"], [0.4, 2.0, "in"], [1.2, 12.0, "back"], [1.5, 0.0, "step"]],
        [[0.25, 1.0]],
        [[0.0, 1.0], [0.5, 0.0], [0.9, 1.0, "inout"]],
    ]
    ts = [i / 200 - 0.1 for i in range(0, 361)]
    got = await page.evaluate("([tracks, ts]) => tracks.map((tr) => ts.map((t) => playerModule.sample(tr, t)))", [tracks, ts])
    for track, row in zip(tracks, got):
        want = [sample(track, t) for t in ts]
        bad = [(t, a, b) for t, a, b in zip(ts, row, want) if a != b]
        assert not bad, (track, bad[:5])


async def test_plan_equals_python_on_real_scenes(page: Any) -> None:
    tl = load_game(json.dumps(generate_game(7)), source="g").timeline
    steps = [tl.steps[i] for i in range(0, min(len(tl.steps), 60), 6)]
    for k, state in enumerate(steps):
        scene = build_scene(state, size=(1280, 720))
        js = await page.evaluate(
            """(s) => { const g = playerModule.plan(s.ops, s.defs, 2);
                        return Array.from(g.entries()).map(([k, v]) => [k, v[0], v[1]]); }""",
            scene.to_json(),
        )
        py = plan(scene.ops, scene.defs)
        assert [(a, b) for a, b, _ in js] == sorted((a, b) for a, (b, _) in py.groups.items()), (k, state.kind)
        # the same groups share a content key on both sides
        keys_js = [key for _, _, key in js]
        keys_py = [py.groups[a][1] for a, _, _ in js]
        assert [keys_js.index(x) for x in keys_js] == [keys_py.index(x) for x in keys_py]
        assert py.groups, "the scene has static groups"


# ---- one table, both sides -------------------------------------------------------------------


async def test_player_dispatches_from_ops_json(page: Any) -> None:
    got = await page.evaluate("() => ({table: playerModule.table(), handled: playerModule.handled()})")
    assert got["table"] == table()  # what the page fetched is what the renderer defines
    handled = got["handled"]
    assert sorted(handled["ops"]) == sorted(s.name for s in OPS)
    assert sorted(handled["paints"]) == sorted(p.name for p in PAINTS)
    assert sorted(handled["easings"]) == sorted(EASINGS)


def _tampered() -> list[tuple[str, dict[str, Any]]]:
    """Tables that differ from the player by one op, paint or easing."""
    out = []
    extra = table()
    extra["ops"].append({"name": "ell", "category": "draw", "fields": [["x", "num"]], "doc": "ellipse"})
    out.append(("op only in the table", extra))
    fewer = table()
    fewer["ops"] = [o for o in fewer["ops"] if o["name"] != "cl"]
    out.append(("op only in the player", fewer))
    paint = table()
    paint["paints"].append({"name": "rad", "fields": [], "doc": "radial"})
    out.append(("paint only in the table", paint))
    easing = table()
    easing["easings"].append({"name": "elastic", "doc": "wobbly"})
    out.append(("easing only in the table", easing))
    cat = table()
    next(o for o in cat["ops"] if o["name"] == "sh")["category"] = "draw"
    out.append(("draw op without bounds", cat))
    return out


@pytest.mark.parametrize("why, tampered", _tampered(), ids=[w for w, _ in _tampered()])
async def test_player_refuses_a_table_that_differs(page: Any, why: str, tampered: dict[str, Any]) -> None:
    message = await page.evaluate(
        """(t) => { try { playerModule.install(t); return null; } catch (e) { return String(e.message); } }""", tampered
    )
    assert message is not None and message.startswith("player.js"), (why, message)
    # the refusal changed nothing: the real table is still in force
    assert await page.evaluate("() => playerModule.table()") == table()
    assert math.isfinite(await page.evaluate("() => playerModule.ease('back', 0.5)"))


async def test_player_refuses_an_unknown_op(page: Any) -> None:
    scene = {"v": 1, "w": 20, "h": 20, "bg": None, "dur": 0, "fonts": [], "tracks": [], "defs": {},
             "ops": [["s"], ["ell", 1, 2, 3], ["r"]]}
    message = await page.evaluate(
        """(s) => { const p = new playerModule.EuchrePlayer(document.createElement('canvas'), {});
                    p.setScene(s, 0);
                    try { p.renderAt(0); return null; } catch (e) { return String(e.message); } }""",
        scene,
    )
    assert message == "unknown scene op ell"


@pytest.mark.parametrize("style", ["mix", "wipe", "stinger"])
async def test_player_matches_skia_on_a_take(page: Any, style: str) -> None:
    """A TAKE under way (renderer/take.py): two layouts of one game frame, mixed or wiped,
    drawn by both executors mid-way (the wipe's moving clip included)."""
    from renderer.take import take_scene
    from renderer.timing import TakeTransition
    from renderer.view import default_view

    tl = load_game(json.dumps(generate_game(2)), source="g").timeline
    state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 2)
    view = default_view()
    moved = tuple(e.model_copy(update={"x": e.x + 600}) if e.type.value in ("ns-score", "ew-score") else e for e in view.elements)
    old = build_scene(state, view, size=(1280, 720))
    new = build_scene(state, view.model_copy(update={"elements": moved}), size=(1280, 720))
    scene = take_scene(old, new, TakeTransition(style=style, run_time=0.6), 0.1)
    ts = [0.3, 0.45]
    for t, png in zip(ts, await page.evaluate(DRAW, [scene.dumps(), ts])):
        f = figures(scene, t, premul(png))
        print(style, t, f)
        assert_parity(f"take {style} at t={t}", f)
