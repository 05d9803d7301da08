"""What the parity tests share: the player page in a real Chromium, and the design's
parity figures of a frame drawn by both executors (the page player and skia).

The criteria (the design's decision 1), on premultiplied values: non-text pixels >= 99.99%
within 4/255; text pixels >= 80% within 8/255 and >= 98% within 32/255; no 8x8 block off
by more than 24/255 on average.  Text pixels are those that change when the scene's text ops
are removed (dilated by one pixel).
"""

from __future__ import annotations

import base64
import contextlib
import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from io import BytesIO
from typing import Any

import numpy as np

from renderer.fonts import font_files
from renderer.raster import raster, to_premul
from renderer.scene import Scene
from tests.support import PLAYER_MODULE, PLAYER_ORIGIN, serve_player_page

__all__ = ["PAGE", "player_page", "premul", "without_text", "figures", "assert_parity"]

#: the page the player runs in: a transparent canvas (the player module is imported by URL)
PAGE = """<!doctype html><html><body style='margin:0;background:transparent'>
<canvas id=c></canvas></body></html>"""


@contextlib.asynccontextmanager
async def player_page(chromium: Any, *, routes: Callable[[Any], Awaitable[Any]] | None = None) -> AsyncIterator[Any]:
    """A page in the worker's Chromium (``chromium``, the session fixture; a context of its own,
    closed at the end) with :data:`PAGE` loaded as the overlay serves it, the player module
    imported by URL as ``window.playerModule`` (its fonts served) and ``window.player`` made;
    ``await routes(pg)`` adds routes first.  (Without Chromium the ``chromium`` fixture skips,
    saying why.)"""
    ctx = await chromium.new_context()
    try:
        pg = await ctx.new_page()
        urls = await serve_player_page(pg, PAGE, font_files())
        if routes is not None:
            await routes(pg)
        await pg.goto(f"{PLAYER_ORIGIN}/")
        await pg.evaluate(
            """async ([module, urls]) => {
                window.playerModule = await import(module);
                window.player = new window.playerModule.EuchrePlayer(document.getElementById('c'), {fontUrls: urls});
                await window.player.ready;
            }""",
            [PLAYER_MODULE, urls],
        )
        yield pg
    finally:
        await ctx.close()


def premul(png: str) -> np.ndarray:
    """A base64 PNG from the page as premultiplied RGBA (int16, for differences)."""
    from PIL import Image

    rgba = np.asarray(Image.open(BytesIO(base64.b64decode(png))).convert("RGBA")).astype(np.float64)
    a = rgba[..., 3:4] / 255.0
    return np.concatenate([np.round(rgba[..., :3] * a), rgba[..., 3:4]], axis=2).astype(np.int16)


def without_text(scene: Scene) -> Scene:
    """``scene`` with its text ops removed (in defs too): what tells text pixels apart."""
    bare = copy.copy(scene)
    bare.ops = [op for op in scene.ops if op[0] != "t"]
    bare.defs = {k: [op for op in v if op[0] != "t"] for k, v in scene.defs.items()}
    return bare


def figures(scene: Scene, t: float, page_px: np.ndarray) -> dict[str, float]:
    """The design's parity figures of one frame (page against skia)."""
    sk = to_premul(raster(scene, t)).astype(np.int16)
    sk_nt = to_premul(raster(without_text(scene), t)).astype(np.int16)
    text = np.abs(sk - sk_nt).max(axis=2) > 0
    dil = text.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            dil |= np.roll(np.roll(text, dy, 0), dx, 1)
    d = np.abs(page_px - sk).max(axis=2)
    non, txt = d[~dil], d[dil]
    h, w = d.shape
    blocks = d[: h // 8 * 8, : w // 8 * 8].reshape(h // 8, 8, w // 8, 8).mean(axis=(1, 3))
    return {
        "drawn": float((sk[..., 3] > 0).mean()),
        "non_text_within_4": float((non <= 4).mean()) if non.size else 1.0,
        "text_within_8": float((txt <= 8).mean()) if txt.size else 1.0,
        "text_within_32": float((txt <= 32).mean()) if txt.size else 1.0,
        "worst_block": float(blocks.max()) if blocks.size else 0.0,
    }


def assert_parity(name: str, f: dict[str, float]) -> None:
    """The criteria on :func:`figures`; the frame must have drawn something."""
    assert f["drawn"] > 0.01, (name, f)  # the case drew something
    assert f["non_text_within_4"] >= 0.9999, (name, f)
    assert f["text_within_8"] >= 0.80, (name, f)
    assert f["text_within_32"] >= 0.98, (name, f)
    assert f["worst_block"] <= 24, (name, f)
