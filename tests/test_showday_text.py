"""Text a viewer can read at 720p (issue 10, item 11), judged from the scene itself.

Every text op of every element of the default view is followed through the display list at
1280x720: its size on the canvas (the op's size times the transforms above it) and what lies
under it (every filled shape drawn before it whose box holds the middle of the text, each
with the alpha it was drawn with).  The stack under the text is laid over black and over
white (the overlay sits on a picture we never see) and the worse contrast counts.

Text inside card art (sprites: rank indices, the bower tab) is the card's own print, drawn
by ``renderer.cardart``; it is held to the contrast rule but not to the size rule.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import GameState, StepKind
from renderer.build import build_scene
from renderer.contrast import parse_colour, worst_contrast
from renderer.fonts import measure
from renderer.preshow import preshow_state
from renderer.scene import Scene, sample
from renderer.timing import DEFAULT_TIMING

ROOT = Path(__file__).resolve().parents[1]
SIZE = (1280, 720)
MIN_PX = 13.0  # 20 px at 1080p
MIN_CONTRAST = 4.5

Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Seen:
    """One text op as drawn: where, how big on the canvas, and its contrast."""

    text: str
    px: float
    contrast: float
    in_sprite: bool
    where: tuple[float, float]


def _mul(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2, a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _box(m: Matrix, x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    pts = [_apply(m, px, py) for px, py in ((x, y), (x + w, y), (x, y + h), (x + w, y + h))]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


_NUM = re.compile(r"-?[0-9.]+")


def walk(scene: Scene, t: float) -> Iterator[Seen]:
    """Every visible text op of ``scene`` at time ``t``."""
    tracks = scene.tracks

    def val(v: Any) -> float:
        return sample(tracks[v["k"]], t) if isinstance(v, dict) else float(v)

    fills: list[tuple[tuple[float, float, float, float], tuple[float, float, float, float], float]] = []

    def run(ops: list[Any], m: Matrix, alpha: float, in_sprite: bool) -> Iterator[Seen]:
        stack: list[tuple[Matrix, float]] = []
        for op in ops:
            name = op[0]
            if name == "s":
                stack.append((m, alpha))
            elif name == "r":
                m, alpha = stack.pop()
            elif name == "tr":
                m = _mul(m, (1, 0, 0, 1, val(op[1]), val(op[2])))
            elif name == "sc":
                sx = val(op[1])
                sy = val(op[2]) if len(op) > 2 and op[2] is not None else sx
                m = _mul(m, (sx, 0, 0, sy, 0, 0))
            elif name == "ro":
                r = val(op[1])
                m = _mul(m, (math.cos(r), math.sin(r), -math.sin(r), math.cos(r), 0, 0))
            elif name == "a":
                alpha *= max(0.0, min(1.0, val(op[1])))
            elif name == "rr" and isinstance(op[6], str) and alpha > 0:
                fills.append((_box(m, op[1], op[2], op[3], op[4]), parse_colour(op[6]), alpha))
            elif name == "p" and isinstance(op[2], str) and alpha > 0:
                nums = [float(v) for v in _NUM.findall(op[1])]
                xs, ys = nums[0::2], nums[1::2]
                x0, y0 = min(xs), min(ys)
                fills.append((_box(m, x0, y0, max(xs) - x0, max(ys) - y0), parse_colour(op[2]), alpha))
            elif name == "sp":
                inner = _mul(_mul(m, (1, 0, 0, 1, op[2], op[3])), (op[4], 0, 0, op[4], 0, 0))
                yield from run(scene.defs[op[1]], inner, alpha, True)
            elif name == "t" and alpha >= 0.5:
                _, font, size, x, y, text, fill, ls = op[:8]
                w = measure(font, size, text, ls)
                scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))
                cx, cy = _apply(m, x + w / 2, y - size * 0.35)
                under = [(c, a) for (bx0, by0, bx1, by1), c, a in fills if bx0 <= cx <= bx1 and by0 <= cy <= by1]
                yield Seen(text, size * scale, worst_contrast(parse_colour(fill), under, text_alpha=alpha), in_sprite, (round(cx), round(cy)))

    yield from run(scene.ops, (1.0, 0.0, 0.0, 1.0, 0.0, 0.0), 1.0, False)


@lru_cache(maxsize=None)
def states() -> tuple[GameState, ...]:
    """Every step of the demo game (commentary with quality tags, a loner, a euchre, round-two
    calls) and of a few generated games, plus the pre-show picture."""
    out: list[GameState] = []
    demo = load_game((ROOT / "assets" / "demo" / "demo.egn").read_bytes(), source="demo.egn").timeline
    out += demo.steps
    for seed in (1, 2, 3):
        out += load_game(json.dumps(generate_game(seed)), source=f"gen-{seed}").timeline.steps
    out.append(preshow_state(demo.players))
    return tuple(out)


def _times(state: GameState) -> list[float]:
    st = DEFAULT_TIMING.of(state.kind)
    # animations finished; halfway through the hold (fades start at the very end)
    return [st.run_time + 0.02, st.run_time + st.hold / 2]


@lru_cache(maxsize=None)
def seen() -> tuple[Seen, ...]:
    out: list[Seen] = []
    for state in states():
        scene = build_scene(state, title="Regional Finals · Table 1", size=SIZE)
        for t in _times(state):
            out += walk(scene, t)
    return tuple(out)


def test_the_walk_covers_every_kind_of_text() -> None:
    texts = {s.text for s in seen()}
    kinds = {s.kind for s in states()}
    assert kinds == set(StepKind)
    for expected in ("NORTH \u00b7 SOUTH", "KITTY", "TURNED DOWN", "CARDS PLAYED", "TRICKS", "TRUMP", "ANALYSIS", "STARTING SOON"):
        assert expected in texts, expected
    assert any("TAKES IT WITH" in t for t in texts)
    assert any(s.in_sprite for s in seen())


def test_no_text_under_13px_at_720p() -> None:
    small = sorted({(s.text, round(s.px, 2)) for s in seen() if not s.in_sprite and s.px < MIN_PX - 1e-6})
    assert not small, f"text under {MIN_PX} px at 720p: {small[:20]}"


def test_text_contrast_at_least_4_5() -> None:
    low = sorted({(s.text, round(s.contrast, 2), s.where) for s in seen() if s.contrast < MIN_CONTRAST}, key=lambda v: v[1])
    assert not low, f"text under {MIN_CONTRAST}:1 against what lies under it: {low[:20]}"


def test_walker_finds_a_faint_label() -> None:
    """The checks can fail: the old tracker's struck-out grey (#ffffff38) on a panel is caught."""
    from renderer.scene import Builder

    b = Builder()
    b.rrect(0, 0, 200, 60, 8, "#101624e6", None, 0)
    b.text("bold", 14, 10, 40, "9", "#ffffff38", 0)
    scene = Scene(width=200, height=60, background=None, duration=1.0, fonts=["bold"], tracks=b.tracks, defs=b.defs, ops=b.ops)
    (s,) = list(walk(scene, 0.0))
    assert s.px == 14 and s.contrast < 2.0


@pytest.mark.parametrize("view_height", [720])
def test_every_default_element_draws_text_somewhere(view_height: int) -> None:
    """Each visible element type of the default view shows up in the walk with some text
    (so the two checks above really went over every element)."""
    from renderer.build import element_size
    from renderer.view import ElementType, default_view

    k = view_height / 1080
    boxes = []
    for el in default_view().elements:
        if not el.visible or el.type is ElementType.PLAY_AREA:
            continue
        w, h = element_size(el.type)
        boxes.append((el.type, el.x * k, el.y * k, (el.x + w * el.scale) * k, (el.y + h * el.scale) * k))
    hit = {t for t, x0, y0, x1, y1 in boxes for s in seen() if not s.in_sprite and x0 <= s.where[0] <= x1 and y0 <= s.where[1] <= y1}
    assert hit == {b[0] for b in boxes}
