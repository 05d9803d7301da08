"""Text a viewer can read at 720p (issue 10 item 11, issue 24 item 4), judged from the scene.

Every text op is followed through the display list at 1280x720: its size on the canvas (the
op's size times the transforms above it) and what lies under it (every filled shape drawn
before it whose box holds the middle of the text, each with the alpha it was drawn with).  The
stack under the text is laid over black and over white (the overlay sits on a picture we never
see) and the worse contrast counts.

Two sets of pictures are walked: the default view with the file's names (every step of the
demo game and of generated games, the pre-show picture), and the broadcast pictures: every
element type (those the default view hides too), every extra with text (event title, player
intro, the statistics extras, the alternative-line banner and card marks) and the analysis
layer on, with match data that carries long names and an event subtitle.  Every text op, card
art included (rank indices, the RIGHT/LEFT bower tabs, the joker's letters), is >= 13 px and
>= 4.5:1.
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
from engine.state import GameState, StepKind, Timeline
from renderer.altline import AltLine
from renderer.analysis import GameAnalysis, build_analysis_layer, compose, default_extras
from renderer.build import build_scene, element_size
from renderer.contrast import parse_colour, worst_contrast
from renderer.extras import build_broadcast_scene
from renderer.fonts import measure
from renderer.matchdata import MatchData, PlayerData, TeamData
from renderer.preshow import preshow_state
from renderer.scene import Scene, sample
from renderer.statboard import stats_book
from renderer.timing import DEFAULT_TIMING
from renderer.view import ElementType, Extra, ExtraType, View, default_view
from tests.lines import lined_game

#: one worker runs this file under pytest-xdist (--dist loadgroup): its shared set-up is made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("legibility_walk")]


ROOT = Path(__file__).resolve().parents[2]
SIZE = (1280, 720)
MIN_PX = 13.0  # 20 px at 1080p
MIN_CONTRAST = 4.5

Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Seen:
    """One text op as drawn: where, how big on the canvas, and its contrast; ``owner``: the
    element or extra type whose box holds it (the nearest one for text drawn just outside its
    box, as the BEST tab over a hand)."""

    text: str
    px: float
    contrast: float
    in_sprite: bool
    where: tuple[float, float]
    owner: str = ""


def _mul(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2, a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _box(m: Matrix, x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    a, b, c, d, e, f = m
    if b == 0 and c == 0:  # no rotation (most boxes): two corners say it all
        x0, x1 = a * x + e, a * (x + w) + e
        y0, y1 = d * y + f, d * (y + h) + f
        return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
    pts = [_apply(m, px, py) for px, py in ((x, y), (x + w, y), (x, y + h), (x + w, y + h))]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


_NUM = re.compile(r"-?[0-9.]+")


@lru_cache(maxsize=None)
def _path_box(path: str) -> tuple[float, float, float, float]:
    """A path's own box (x, y, w, h) from its numbers (the card art repeats a few paths)."""
    nums = [float(v) for v in _NUM.findall(path)]
    xs, ys = nums[0::2], nums[1::2]
    x0, y0 = min(xs), min(ys)
    return x0, y0, max(xs) - x0, max(ys) - y0


#: where a card's own print can lie (a hand, the trick, the kitty)
_CARD_HOLDERS = {"hand-south", "hand-west", "hand-north", "hand-east", "play-area", "kitty-tracker"}


Boxes = list[tuple[float, float, float, float, float, str]]


def _boxes(scene: Scene) -> Boxes:
    """The scene's element boxes, smallest first: (area, x0, y0, x1, y1, type)."""
    return sorted((e["w"] * e["h"], e["x"], e["y"], e["x"] + e["w"], e["y"] + e["h"], str(e["type"])) for e in scene.elements)


def _owner(boxes: Boxes, x: float, y: float, in_sprite: bool) -> str:
    """The type of the smallest element box holding (x, y), else of the nearest box (a card's
    print: of the elements that hold cards)."""
    near: tuple[float, str] | None = None
    for _, x0, y0, x1, y1, kind in boxes:
        if in_sprite and kind not in _CARD_HOLDERS:
            continue
        if x0 <= x <= x1 and y0 <= y <= y1:
            return kind
        d = math.hypot(max(x0 - x, 0.0, x - x1), max(y0 - y, 0.0, y - y1))
        if near is None or d < near[0]:
            near = (d, kind)
    return near[1] if near is not None else ""


@lru_cache(maxsize=None)
def _colour(text: str) -> tuple[float, float, float, float]:
    return parse_colour(text)


@lru_cache(maxsize=65536)
def _contrast(fill: str, under: tuple[tuple[tuple[float, float, float, float], float], ...], alpha: float) -> float:
    return worst_contrast(_colour(fill), list(under), text_alpha=alpha)


def walk(scene: Scene, t: float, *, owners: bool = False) -> Iterator[Seen]:
    """Every visible text op of ``scene`` at time ``t`` (``owners``: with the element or extra
    each lies in, for messages and the coverage check)."""
    tracks = scene.tracks

    def val(v: Any) -> float:
        return sample(tracks[v["k"]], t) if isinstance(v, dict) else float(v)

    fills: list[tuple[tuple[float, float, float, float], tuple[float, float, float, float], float]] = []
    boxes = _boxes(scene) if owners else []

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
                fills.append((_box(m, op[1], op[2], op[3], op[4]), _colour(op[6]), alpha))
            elif name == "p" and isinstance(op[2], str) and alpha > 0:
                fills.append((_box(m, *_path_box(op[1])), _colour(op[2]), alpha))
            elif name == "sp":
                inner = _mul(_mul(m, (1, 0, 0, 1, op[2], op[3])), (op[4], 0, 0, op[4], 0, 0))
                yield from run(scene.defs[op[1]], inner, alpha, True)
            elif name == "t" and alpha >= 0.5:
                _, font, size, x, y, text, fill, ls = op[:8]
                w = measure(font, size, text, ls)
                scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))
                cx, cy = _apply(m, x + w / 2, y - size * 0.35)
                under = tuple((c, a) for (bx0, by0, bx1, by1), c, a in fills if bx0 <= cx <= bx1 and by0 <= cy <= by1)
                owner = _owner(boxes, cx, cy, in_sprite) if owners else ""
                yield Seen(text, size * scale, _contrast(fill, under, alpha), in_sprite, (round(cx), round(cy)), owner)

    yield from run(scene.ops, (1.0, 0.0, 0.0, 1.0, 0.0, 0.0), 1.0, False)


def walks(scene: Scene, times: list[float], *, owners: bool = False) -> list[Seen]:
    """:func:`walk` at each of ``times``, in order.  The walk reads the scene at ``t`` through
    its tracks' values alone, so a time at which every track has the values of an earlier one
    sees what that one saw, and is not walked again (most steps are still by the middle of
    their hold: half the walks)."""
    out: list[Seen] = []
    walked: dict[tuple[float, ...], list[Seen]] = {}
    for t in times:
        values = tuple([sample(track, t) for track in scene.tracks])
        found = walked.get(values)
        if found is None:
            found = walked[values] = list(walk(scene, t, owners=owners))
        out += found
    return out


# the default view, the file's names -----------------------------------------------------------


def _timeline(doc: dict[str, Any], source: str) -> Timeline:
    return load_game(json.dumps(doc), source=source).timeline


@lru_cache(maxsize=None)
def demo() -> Timeline:
    return load_game((ROOT / "assets" / "demo" / "demo.egn").read_bytes(), source="demo.egn").timeline


@lru_cache(maxsize=None)
def generated(seed: int, *, joker: bool = False) -> Timeline:
    return _timeline(generate_game(seed, ruleset={"joker": True} if joker else None), f"gen-{seed}")


@lru_cache(maxsize=None)
def states() -> tuple[GameState, ...]:
    """Every step of the demo game (commentary with quality tags, a loner, a euchre, round-two
    calls), of a few generated games and of a game with a joker, plus the pre-show picture."""
    out: list[GameState] = list(demo().steps)
    for seed in (1, 2, 3):
        out += generated(seed).steps
    out += generated(3, joker=True).steps
    out.append(preshow_state(demo().players))
    return tuple(out)


def _times(state: GameState, *, least: float = 0.0) -> list[float]:
    st = DEFAULT_TIMING.of(state.kind)
    # animations finished (the analysis layer's fade-in too, where it is on); halfway through
    # the hold (fades start at the very end)
    return [max(st.run_time, least) + 0.02, max(st.run_time + st.hold / 2, least + 0.02)]


@lru_cache(maxsize=None)
def seen() -> tuple[Seen, ...]:
    out: list[Seen] = []
    for state in states():
        scene = build_scene(state, title="Regional Finals · Table 1", size=SIZE)
        out += walks(scene, _times(state))
    return tuple(out)


# the broadcast pictures: every element and extra, analysis on, long names -----------------------

#: long display names (issue 24 item 5): a plate with the dealer button or the MAKER tag, a
#: win bar with "LLAMA & LEFTYKNAPP" (the fallback team name of seats 1 and 3)
LONG_NAMES = ("Robert Edwardson-MacAllister", "Llama", "Marguerite Okafor-Whitfield", "LeftyKnapp")
MATCH = MatchData(
    event_title="Harbour Open 2026 \u00b7 Final Table",
    event_subtitle="Semi-final \u00b7 Table 2 \u00b7 Harbour Hall",
    players=tuple(PlayerData(name=n, line="Harbour Euchre Club \u00b7 2025 champion") for n in LONG_NAMES),
    intro=0,
    stats="team-1",
)
TEAMS = MATCH.model_copy(update={"teams": (TeamData(name="Harbour Sharks of the North"), TeamData(name="Llama & LeftyKnapp")), "stats": "seat-0"})

_ANALYSIS_TIME = DEFAULT_TIMING.analysis.run_time


def _with(view: View, visible: set[ElementType], extras: tuple[Extra, ...]) -> View:
    elements = tuple(e.model_copy(update={"visible": e.type in visible}) for e in view.elements)
    return view.model_copy(update={"elements": elements, "extras": extras})


def _ex(kind: ExtraType, x: float, y: float) -> Extra:
    return Extra(id=kind.value, type=kind, x=x, y=y)


def broadcast_views() -> tuple[View, ...]:
    """Every element and extra, in views where none covers another: the default elements with
    the analysis extras at their default places; the elements the default view hides (trick
    and trump trackers) with the extras that show text, each in a free place."""
    base = default_view()
    shown = {e.type for e in base.elements if e.visible}
    table = _with(base, shown, default_extras())
    rest = {ElementType.TRICK_TRACKER, ElementType.TRUMP_TRACKER}
    extras = (
        _ex(ExtraType.EVENT_TITLE, 96, 54),
        _ex(ExtraType.MATCH_STATS, 300, 190),
        _ex(ExtraType.DEAL_HISTORY, 96, 680),
        _ex(ExtraType.PLAYER_INTRO, 96, 880),
        _ex(ExtraType.STATS_LOWER_THIRD, 880, 880),
    )
    return table, _with(base, rest, extras)


def _broadcast(timeline: Timeline, match: MatchData, *, every: int = 1, line: AltLine | None = None, steps: tuple[GameState, ...] | None = None) -> list[Seen]:
    out: list[Seen] = []
    shown = steps if steps is not None else timeline.steps
    analysis = GameAnalysis(shown)
    book = stats_book(timeline)
    views = broadcast_views()
    for i in range(0, len(shown), every):
        state = shown[i]
        frame = analysis(i)
        for view in views:
            stats = book.at(state.step) if line is None else None
            scene = build_broadcast_scene(state, view, match=match, size=SIZE, line=line, stats=stats)
            if view is views[0]:
                scene = compose(scene, build_analysis_layer(state, view, frame, match=match, size=SIZE))
            out += walks(scene, _times(state, least=_ANALYSIS_TIME), owners=True)
    return out


@lru_cache(maxsize=None)
def broadcast_seen() -> tuple[Seen, ...]:
    """The broadcast pictures of the demo game (long names, fallback team names), a generated
    game (match team names, every second step), the joker game (every third step) and an
    alternative line on air; with the statistics of the game so far."""
    out: list[Seen] = []
    out += _broadcast(demo(), MATCH)
    out += _broadcast(generated(2), TEAMS, every=2)
    out += _broadcast(generated(3, joker=True), MATCH, every=3)
    lined = _timeline(lined_game(), "lines.egn")
    br = next(b for b in lined.branches if b.deal == 1 and b.line == 0)
    first = br.steps[0]
    assert first.action is not None and first.action.index is not None
    out += _broadcast(lined, MATCH, line=AltLine(deal=1, line=0, first_card=first.action.index), steps=tuple(br.steps))
    return tuple(out)


def _small(found: tuple[Seen, ...]) -> list[tuple[str, str, float]]:
    return sorted({(s.owner, s.text, round(s.px, 2)) for s in found if s.px < MIN_PX - 1e-6}, key=lambda v: v[2])


def _faint(found: tuple[Seen, ...]) -> list[tuple[str, str, float, tuple[float, float]]]:
    return sorted({(s.owner, s.text, round(s.contrast, 2), s.where) for s in found if s.contrast < MIN_CONTRAST}, key=lambda v: v[2])


def summary(found: tuple[Seen, ...]) -> dict[str, tuple[float, str, float, str]]:
    """Per owner: the smallest size on the canvas and its text, the lowest contrast and its text."""
    out: dict[str, tuple[float, str, float, str]] = {}
    for s in found:
        px, pt, c, ct = out.get(s.owner, (1e9, "", 1e9, ""))
        if s.px < px:
            px, pt = s.px, s.text
        if s.contrast < c:
            c, ct = s.contrast, s.text
        out[s.owner] = (px, pt, c, ct)
    return out


def test_the_walk_covers_every_kind_of_text() -> None:
    texts = {s.text for s in seen()}
    kinds = {s.kind for s in states()}
    assert kinds == set(StepKind)
    for expected in ("NORTH \u00b7 SOUTH", "KITTY", "TURNED DOWN", "CARDS PLAYED", "TRICKS", "TRUMP", "ANALYSIS", "STARTING SOON", "RIGHT", "LEFT"):
        assert expected in texts, expected
    assert any("TAKES IT WITH" in t for t in texts)
    assert any(s.in_sprite for s in seen())


@pytest.mark.parametrize("which", ["default", "broadcast"])
def test_no_text_under_13px_at_720p(which: str) -> None:
    small = _small(seen() if which == "default" else broadcast_seen())
    assert not small, f"text under {MIN_PX} px at 720p: {small[:20]}"


@pytest.mark.parametrize("which", ["default", "broadcast"])
def test_text_contrast_at_least_4_5(which: str) -> None:
    low = _faint(seen() if which == "default" else broadcast_seen())
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


def test_every_default_element_draws_text_somewhere() -> None:
    """Each visible element type of the default view shows up in the walk with some text
    (so the two checks above really went over every element)."""
    k = SIZE[1] / 1080
    boxes = []
    for el in default_view().elements:
        if not el.visible or el.type is ElementType.PLAY_AREA:
            continue
        w, h = element_size(el.type)
        boxes.append((el.type, el.x * k, el.y * k, (el.x + w * el.scale) * k, (el.y + h * el.scale) * k))
    hit = {t for t, x0, y0, x1, y1 in boxes for s in seen() if not s.in_sprite and x0 <= s.where[0] <= x1 and y0 <= s.where[1] <= y1}
    assert hit == {b[0] for b in boxes}


def test_the_broadcast_walk_covers_every_element_extra_and_analysis_text() -> None:
    """Every element type and every extra that shows text has text in the broadcast walk, and
    so do the analysis marks, the bower tabs and the alternative line's banner and marks."""
    owners = {s.owner for s in broadcast_seen()}
    elements = {t.value for t in ElementType} - {ElementType.PLAY_AREA.value}
    extras = {t.value for t in ExtraType} - {ExtraType.LOGO.value}
    assert elements | extras <= owners, sorted((elements | extras) - owners)
    texts = {s.text for s in broadcast_seen()}
    for expected in ("BEST", "E", "RIGHT", "LEFT", "ALT", "ALTERNATIVE LINE", "WIN PROBABILITY", "PLAY", "ALONE", "MATCH STATISTICS"):
        assert expected in texts, expected
    assert "SEMI-FINAL \u00b7 TABLE 2 \u00b7 HARBOUR HALL" in texts
