"""The page player's static-layer cache (overlay/static/player.js) changes speed, not pixels.

One page in the worker's browser, two players on two canvases: one caches static groups, one
draws op by op.  Their frames agree within 2/255 (premultiplied) at several t, across
consecutive scenes (the second scene reuses the first one's unchanged panels), at a sub-pixel
canvas offset, and a group whose content changes between scenes is drawn anew.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from renderer.build import build_scene
from renderer.fonts import font_files
from tests.parity import premul
from tests.support import PLAYER_MODULE, PLAYER_ORIGIN, serve_player_page

#: one worker runs this file under pytest-xdist (--dist loadgroup): its shared set-up is made once
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("player_page")]

ORIGIN = PLAYER_ORIGIN
PAGE = """<html><body style='margin:0'><canvas id=a></canvas><canvas id=b></canvas></body></html>"""

#: in the page: draw scene `text` at each t with both players; premultiplied differences
COMPARE = """async ([text, ts]) => {
    const out = [];
    for (const p of [window.cached, window.plain]) { p.setScene(text, 0); await p.sceneReady; }
    const premul = (d) => {
        const o = new Uint8ClampedArray(d.length);
        for (let i = 0; i < d.length; i += 4) {
            const a = d[i + 3];
            o[i] = Math.round(d[i] * a / 255); o[i + 1] = Math.round(d[i + 1] * a / 255);
            o[i + 2] = Math.round(d[i + 2] * a / 255); o[i + 3] = a;
        }
        return o;
    };
    for (const t of ts) {
        const before = {...window.cached.layerStats};
        window.cached.renderAt(t);
        window.plain.renderAt(t);
        const w = window.cached.canvas.width, h = window.cached.canvas.height;
        const a = premul(window.cached.ctx.getImageData(0, 0, w, h).data);
        const b = premul(window.plain.ctx.getImageData(0, 0, w, h).data);
        let max = 0, over = 0, drawn = 0;
        const bw = w >> 3, bh = h >> 3, blocks = new Float64Array(bw * bh);
        for (let i = 0; i < a.length; i += 4) {
            let d = 0;
            for (let k = 0; k < 4; k++) d = Math.max(d, Math.abs(a[i + k] - b[i + k]));
            if (d > max) max = d;
            if (d > 2) over++;
            if (b[i + 3] > 0) drawn++;
            const x = (i >> 2) % w, y = Math.floor((i >> 2) / w);
            if (x < bw * 8 && y < bh * 8) blocks[(y >> 3) * bw + (x >> 3)] += d / 64;
        }
        let block = 0;
        for (const v of blocks) block = Math.max(block, v);
        out.push({t, max, over, block, drawn, hits: window.cached.layerStats.hits - before.hits,
                  misses: window.cached.layerStats.misses - before.misses});
    }
    return out;
}"""


def _scenes(size: tuple[int, int]) -> list[str]:
    tl = load_game(json.dumps(generate_game(2)), source="g").timeline
    i = next(
        k for k, s in enumerate(tl.steps) if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 2
    )
    return [build_scene(tl.steps[k], size=size).dumps() for k in (i, i + 1, i + 2)]


@pytest.fixture(scope="module")
async def page(chromium: Any) -> AsyncIterator[Any]:
    """One page in the worker's Chromium with the player module imported by URL (it fetches
    ops.json beside it)."""
    ctx = await chromium.new_context(viewport={"width": 1300, "height": 740})
    try:
        pg = await ctx.new_page()
        urls = await serve_player_page(pg, PAGE, font_files())
        await pg.goto(f"{ORIGIN}/")
        await pg.evaluate(
            """async ([module, urls]) => {
                const { EuchrePlayer } = await import(module);
                window.cached = new EuchrePlayer(document.getElementById('a'), {fontUrls: urls});
                window.plain = new EuchrePlayer(document.getElementById('b'), {fontUrls: urls, layers: false});
                await Promise.all([window.cached.ready, window.plain.ready]);
            }""",
            [PLAYER_MODULE, urls],
        )
        yield pg
    finally:
        await ctx.close()


@pytest.mark.parametrize("size", [(1280, 720), (1283, 721)], ids=["integer", "sub-pixel-offset"])
async def test_cached_frames_equal_uncached_frames(page: Any, size: tuple[int, int]) -> None:
    await page.evaluate("window.cached.clearLayers()")
    results = []
    for n, text in enumerate(_scenes(size)):
        dur = json.loads(text)["dur"]
        rows = await page.evaluate(COMPARE, [text, [0.0, 0.1, 0.23, 0.3, dur + 0.5]])
        for r in rows:
            assert r["drawn"] > 10_000, r  # the scene drew something
            assert r["max"] <= 2 and r["block"] <= 1, (size, n, r)
        results.append(rows)
    # the first frame of a scene blits what the cache has and draws the rest op by op; the
    # second caches the rest; later frames only blit
    first = results[0]
    assert first[0]["hits"] == 0 and first[1]["misses"] >= 5 and first[2]["hits"] >= 5 and first[2]["misses"] == 0
    # the next scenes reuse the unchanged panels at once and cache the changed ones
    for rows in results[1:]:
        assert rows[0]["hits"] >= 5 and rows[0]["misses"] == 0, rows[0]
        assert rows[1]["misses"] >= 1 and rows[2]["misses"] == 0, rows


async def test_a_group_whose_content_changes_is_redrawn(page: Any) -> None:
    def scene(fill: str, label: str) -> str:
        group = [
            ["s"],
            ["tr", 40.5, 30.25],
            ["sh", "#00000080", 12, 0, 4],
            ["rr", 0, 0, 300, 120, 16, fill, "#ffffffff", 2],
            ["t", "bold", 40, 20, 70, label, "#ffffffff", 0],
            ["r"],
        ]
        return json.dumps(
            {"v": 1, "w": 400, "h": 200, "bg": None, "dur": 0, "fonts": ["bold"], "tracks": [], "defs": {}, "ops": group}
        )

    await page.evaluate("window.cached.clearLayers()")
    first = await page.evaluate(COMPARE, [scene("#204080ff", "NORTH"), [0.0, 1.0, 2.0]])
    assert [(r["hits"], r["misses"]) for r in first] == [(0, 0), (1, 1), (1, 0)], first
    second = await page.evaluate(COMPARE, [scene("#802040ff", "SOUTH"), [0.0, 1.0, 2.0]])
    assert [(r["hits"], r["misses"]) for r in second] == [(0, 0), (1, 1), (1, 0)], second
    assert all(r["max"] <= 2 for r in first + second), (first, second)
    # the new content took the old one's place in its plane: going back draws it anew
    again = await page.evaluate(COMPARE, [scene("#204080ff", "NORTH"), [0.0, 1.0]])
    assert [(r["hits"], r["misses"]) for r in again] == [(0, 0), (1, 1)], again
    assert all(r["max"] <= 2 for r in again), again


#: in the page: the cached player's frame at scene time t at scale 1 and at scale k, each as
#: its canvas's size and PNG (the studio's monitors draw at the size they are shown)
AT_SCALES = """async ([text, t, k]) => {
    const p = window.cached, out = [];
    p.setScene(text, 0);
    await p.sceneReady;
    for (const s of [1, k]) {
        p.setScale(s);
        for (let i = 0; i < 3; i++) p.renderAt(t);  // op by op, then cached, then from the cache
        out.push({w: p.canvas.width, h: p.canvas.height, png: p.canvas.toDataURL("image/png").split(",")[1]});
    }
    p.setScale(1);
    return out;
}"""


def _premul_rows(frame: dict[str, Any]) -> Any:
    px = premul(frame["png"]).astype(float)
    assert px.shape == (frame["h"], frame["w"], 4)
    return px


def _shrunk(full: dict[str, Any], small: dict[str, Any]) -> tuple[Any, Any]:
    """Per pixel, the largest channel difference between the full-size frame box-filtered to
    the small one's size and the small one; and its 8x8 block means."""
    n = full["w"] // small["w"]
    a = _premul_rows(full).reshape(small["h"], n, small["w"], n, 4).mean(axis=(1, 3))
    d = abs(a - _premul_rows(small)).max(axis=2)
    h, w = d.shape
    return d, d[: h // 8 * 8, : w // 8 * 8].reshape(h // 8, 8, w // 8, 8).mean(axis=(1, 3))


@pytest.mark.parametrize("k", [0.5, 0.25])
async def test_a_scaled_player_draws_the_scene_shrunk(page: Any, k: float) -> None:
    """At scale k the canvas is the scene's size times k and shows the full-size picture
    shrunk: panels, cards and text where they were, each k times as big.  Edges fall on other
    sub-pixels (single pixels differ, areas agree); text is hinted at its drawn size."""
    doc = json.loads(_scenes((1280, 720))[0])
    bare = {**doc, "ops": [op for op in doc["ops"] if op[0] != "t"], "defs": {i: [op for op in ops if op[0] != "t"] for i, ops in doc["defs"].items()}}
    full, small = await page.evaluate(AT_SCALES, [json.dumps(bare), 0.3, k])
    assert (full["w"], full["h"]) == (1280, 720) and (small["w"], small["h"]) == (1280 * k, 720 * k)
    d, blocks = _shrunk(full, small)
    assert (_premul_rows(small)[..., 3] > 8).mean() > 0.05  # the scene drew something
    assert (d <= 24).mean() >= 0.985 and blocks.max() <= 24, ((d > 24).mean(), blocks.max())
    # with its text: the same picture on average, no area far off
    d, blocks = _shrunk(*(await page.evaluate(AT_SCALES, [json.dumps(doc), 0.3, k])))
    assert d.mean() <= 3 and blocks.max() <= 96, (d.mean(), blocks.max())


async def test_a_shadow_scales_with_the_picture(page: Any) -> None:
    """A canvas shadow is in canvas pixels whatever the transform: at scale 1/2 its blur and
    offset are halved with everything else (the shadow band stays where the picture has it)."""
    group = [["s"], ["sh", "#000000ff", 16, 0, 24], ["rr", 100, 40, 200, 80, 8, "#ffffffff", None, 0], ["r"]]
    text = json.dumps({"v": 1, "w": 400, "h": 200, "bg": None, "dur": 0, "fonts": [], "tracks": [], "defs": {}, "ops": group})
    full, small = await page.evaluate(AT_SCALES, [text, 0.0, 0.5])
    a = _premul_rows(full).reshape(100, 2, 200, 2, 4).mean(axis=(1, 3))
    b = _premul_rows(small)
    col = 100  # a column through the panel: the shadow shows below it, down to y = 40 + 80 + 24 + blur
    below_a, below_b = a[60:95, col, 3], b[60:95, col, 3]
    assert below_a.max() > 40, below_a  # there is a shadow band under the panel
    assert abs(below_a - below_b).max() <= 16, (below_a.round(), below_b.round())
