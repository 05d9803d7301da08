"""The page player (overlay/static/player.js in Chromium) draws the same pixels as skia.

The page and the video must agree to within anti-aliasing; the criteria, on premultiplied
values: non-text pixels >= 99.99% within 4/255; text pixels >= 80% within 8/255 and >= 98%
within 32/255; no 8x8 block off by more than 24/255 on average.  Text pixels are those that change when the scene's text ops are
removed (dilated by one pixel).

What makes the two agree (measured: non-text 100% within 4/255, text 95% within 8/255 and
99.8% within 32/255): shadows drawn as Chromium draws them (the shape in a layer blurred by a
drop-shadow image filter, not skia's analytic mask blur, which lands 1 px wider), Chromium's
text contrast/gamma tables on the skia side (renderer/textgamma.py), subpixel glyph positions
and HarfBuzz runs drawn as one positioned blob.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import numpy as np
import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from renderer.build import build_scene
from renderer.fonts import font_files
from renderer.raster import raster, to_premul
from renderer.scene import Scene
from tests.support import launch_options, serve_fonts

pytestmark = pytest.mark.browser

PLAYER = Path(__file__).resolve().parents[1] / "overlay" / "static" / "player.js"


def _scene() -> tuple[Scene, float]:
    tl = load_game(json.dumps(generate_game(2)), source="g").timeline
    state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 3)
    return build_scene(state, size=(1280, 720)), 0.2


def _browser_frame(scene: Scene, t: float) -> np.ndarray:
    playwright = pytest.importorskip("playwright.sync_api")
    options = launch_options()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(**options)
        try:
            page = browser.new_page(viewport={"width": scene.width, "height": scene.height})
            urls = serve_fonts(page, font_files())
            page.set_content("<html><body style='margin:0;background:transparent'><canvas id=c></canvas></body></html>")
            page.add_script_tag(path=str(PLAYER))
            data = page.evaluate(
                """async ([urls, scene, t]) => {
                    const canvas = document.getElementById('c');
                    const player = new EuchrePlayer(canvas, {fontUrls: urls});
                    await player.ready;
                    player.setScene(scene, 0);
                    await player.sceneReady;
                    player.renderAt(t);
                    const url = canvas.toDataURL('image/png');
                    return url.slice(url.indexOf(',') + 1);
                }""",
                [urls, scene.dumps(), t],
            )
        finally:
            browser.close()
    from io import BytesIO

    from PIL import Image

    rgba = np.asarray(Image.open(BytesIO(base64.b64decode(data))).convert("RGBA")).astype(np.float64)
    a = rgba[..., 3:4] / 255.0
    premul = np.concatenate([np.round(rgba[..., :3] * a), rgba[..., 3:4]], axis=2)
    return premul.astype(np.int16)


def test_player_matches_skia() -> None:
    scene, t = _scene()
    page = _browser_frame(scene, t)
    sk = to_premul(raster(scene, t)).astype(np.int16)
    no_text = copy.copy(scene)
    no_text.ops = [op for op in scene.ops if op[0] != "t"]
    no_text.defs = {k: [op for op in v if op[0] != "t"] for k, v in scene.defs.items()}
    sk_nt = to_premul(raster(no_text, t)).astype(np.int16)
    text = (np.abs(sk - sk_nt).max(axis=2) > 0)
    dil = text.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            dil |= np.roll(np.roll(text, dy, 0), dx, 1)
    d = np.abs(page - sk).max(axis=2)
    non = d[~dil]
    txt = d[dil]
    h, w = d.shape
    blocks = d[: h // 8 * 8, : w // 8 * 8].reshape(h // 8, 8, w // 8, 8).mean(axis=(1, 3))
    figures = {
        "non_text_within_4": float((non <= 4).mean()),
        "text_within_8": float((txt <= 8).mean()) if txt.size else 1.0,
        "text_within_32": float((txt <= 32).mean()) if txt.size else 1.0,
        "worst_block": float(blocks.max()),
    }
    print(figures)
    assert figures["non_text_within_4"] >= 0.9999, figures
    assert figures["text_within_8"] >= 0.80, figures
    assert figures["text_within_32"] >= 0.98, figures
    assert figures["worst_block"] <= 24, figures
