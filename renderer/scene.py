"""The scene: a display list that two executors draw (skia here, Canvas2D in the page).

This module is the one place that defines the op set.  ``overlay/static/player.js`` mirrors
it; change both together.

Scene JSON (``Scene.to_json()``)::

    {
      "v": 1,                       # format version
      "w": 1920, "h": 1080,         # canvas size in pixels
      "bg": null | "#rrggbbaa",     # null = transparent (cleared to 0,0,0,0)
      "dur": 1.2,                   # seconds until the scene is still (run time + hold)
      "fonts": ["bold", ...],       # font keys used; see renderer.fonts.font_files()
      "tracks": [track, ...],       # animated values, referenced from ops as {"k": index}
      "defs": {"id": [op, ...]},    # sprites (card faces and backs), drawn by "sp"
      "ops": [op, ...]
    }

A **track** is a list of keyframes ``[[t0, v0], [t1, v1, easing], ...]`` (times ascending,
seconds, scene-local).  Before ``t0`` the value is ``v0``, after the last keyframe it is the
last value, between two keyframes it is ``a + (b - a) * ease(easing, (t - ta) / (tb - ta))``
(see :mod:`renderer.easing`).  Computed in float64 on both sides, so samples agree exactly.

**Ops** are JSON arrays, first item the name.  A number marked *anim* may be a literal or
``{"k": i}`` (the value of track ``i`` at t).  Colours are ``"#rrggbbaa"`` (straight alpha).
A *paint* is a colour, or a linear gradient ``["lin", x0, y0, x1, y1, [[stop, colour], ...]]``
in the current user space, or null (nothing).

=========================================  =================================================
``["s"]`` / ``["r"]``                      save / restore (transform, alpha, shadow, clip)
``["tr", x*, y*]``                         translate (anim)
``["sc", sx*, sy*]``                       scale (anim)
``["ro", radians*]``                       rotate clockwise (anim)
``["a", alpha*]``                          multiply the global alpha (anim, clamped 0..1)
``["sh", colour, blur, dx, dy]``           shadow for later ``rr``/``p`` fills until restore;
                                           blur and offsets in *device* pixels (Canvas2D
                                           semantics: blur = 2 sigma, untransformed offset,
                                           shadow alpha x fill alpha)
``["rr", x, y, w, h, r, fill, stroke, lw]``  rounded rect (r may be 0); stroke paint + width
``["p", d, fill, stroke, lw]``             path; ``d`` is SVG path data with absolute
                                           ``M L C Q Z`` only (Path2D parses it directly)
``["t", font, size, x, y, text, fill, ls]``  text, left-aligned at the alphabetic baseline;
                                           ``ls`` letter spacing px (added after each char);
                                           characters ``font`` lacks come from the fallback
                                           font ``"cjk"`` (CSS ``"font", "cjk"``)
``["cl", x, y, w, h, r]``                  clip to a rounded rect (intersects)
``["sp", id, x, y, s]``                    draw sprite ``defs[id]`` at x, y scaled by s,
                                           shadows off inside
=========================================  =================================================

Sprites never nest.  Strokes are centred on the outline.  Executors draw ops in order, with
anti-aliasing, ``source-over``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from .easing import ease
from .fonts import FALLBACK, uses_fallback

__all__ = ["Scene", "Builder", "Anim", "Num", "Op", "Track", "sample", "FORMAT_VERSION", "build_scene", "lin"]

FORMAT_VERSION = 1

Op = list[Any]
Track = list[list[Any]]
Anim = dict[str, int]
Num = Union[float, Anim]


_ROUNDED: dict[float, float] = {}


def _r(v: float) -> float:
    """Round to 1/100 px: compact JSON and identical inputs to both executors.

    Memoised: a scene repeats the same few hundred coordinates, and ``round(v, 2)`` is the
    slowest step of a build.
    """
    r = _ROUNDED.get(v)
    if r is None:
        r = round(v, 2) + 0.0
        if len(_ROUNDED) < 65536:
            _ROUNDED[v] = r
    return r


def sample(track: Track, t: float) -> float:
    """Value of ``track`` at scene time ``t`` (the page player does the same)."""
    first = track[0]
    if t <= first[0]:
        return float(first[1])
    prev = first
    for key in track[1:]:
        if t < key[0]:
            span = key[0] - prev[0]
            p = (t - prev[0]) / span if span > 0 else 1.0
            e = key[2] if len(key) > 2 else "linear"
            a = float(prev[1])
            return a + (float(key[1]) - a) * ease(e, p)
        prev = key
    return float(prev[1])


@dataclass
class Scene:
    """A display list with keyframed values; see the module docstring for the format."""

    width: int
    height: int
    background: str | None
    duration: float
    fonts: list[str]
    tracks: list[Track]
    defs: dict[str, list[Op]]
    ops: list[Op]
    #: element boxes in canvas pixels (id, type, x, y, w, h, scale): for tests and the studio
    elements: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "v": FORMAT_VERSION,
            "w": self.width,
            "h": self.height,
            "bg": self.background,
            "dur": self.duration,
            "fonts": self.fonts,
            "tracks": self.tracks,
            "defs": self.defs,
            "ops": self.ops,
            "elements": self.elements,
        }

    def dumps(self) -> str:
        """Compact JSON text for the page player."""
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scene:
        if data.get("v") != FORMAT_VERSION:
            raise ValueError(f"scene format {data.get('v')!r} is not {FORMAT_VERSION}")
        return cls(
            width=int(data["w"]),
            height=int(data["h"]),
            background=data.get("bg"),
            duration=float(data.get("dur", 0.0)),
            fonts=list(data.get("fonts", [])),
            tracks=list(data.get("tracks", [])),
            defs=dict(data.get("defs", {})),
            ops=list(data["ops"]),
            elements=list(data.get("elements", [])),
        )


class Builder:
    """Appends ops; small helpers keep element code readable and numbers rounded."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.tracks: list[Track] = []
        self.fonts: set[str] = set()
        self.defs: dict[str, list[Op]] = {}
        self._track_ids: dict[str, int] = {}
        self.duration = 0.0

    # animated values -------------------------------------------------------------------
    def track(self, keys: list[tuple[float, float] | tuple[float, float, str]]) -> Num:
        """A keyframed value; a constant track collapses to a literal number."""
        values = {k[1] for k in keys}
        if len(values) == 1:
            return round(float(keys[0][1]), 4) + 0.0
        track: Track = []
        for k in keys:
            item: list[Any] = [round(k[0], 4), round(k[1], 4)]
            if len(k) > 2 and k[2] != "linear":
                item.append(k[2])
            track.append(item)
        self.duration = max(self.duration, track[-1][0])
        key = json.dumps(track, separators=(",", ":"))
        idx = self._track_ids.get(key)
        if idx is None:
            idx = len(self.tracks)
            self.tracks.append(track)
            self._track_ids[key] = idx
        return {"k": idx}

    def tween(self, t0: float, t1: float, a: float, b: float, easing: str = "out") -> Num:
        """From ``a`` at ``t0`` to ``b`` at ``t1``."""
        if t1 <= t0:
            return self.track([(t0, b)])
        return self.track([(t0, a), (t1, b, easing)])

    # state ------------------------------------------------------------------------------
    def save(self) -> None:
        self.ops.append(["s"])

    def restore(self) -> None:
        self.ops.append(["r"])

    def translate(self, x: Num, y: Num) -> None:
        if isinstance(x, dict) or isinstance(y, dict) or x or y:
            self.ops.append(["tr", _n(x), _n(y)])

    def scale(self, sx: Num, sy: Num | None = None) -> None:
        sy = sx if sy is None else sy
        if isinstance(sx, dict) or isinstance(sy, dict) or sx != 1 or sy != 1:
            self.ops.append(["sc", _n(sx), _n(sy)])

    def rotate(self, rad: Num) -> None:
        if isinstance(rad, dict) or rad:
            self.ops.append(["ro", rad if isinstance(rad, dict) else round(rad, 5)])

    def alpha(self, a: Num) -> None:
        if isinstance(a, dict) or a != 1:
            self.ops.append(["a", a if isinstance(a, dict) else round(a, 4)])

    def shadow(self, colour: str, blur: float, dx: float = 0.0, dy: float = 0.0) -> None:
        self.ops.append(["sh", colour, _r(blur), _r(dx), _r(dy)])

    def clip(self, x: float, y: float, w: float, h: float, r: float = 0.0) -> None:
        self.ops.append(["cl", _r(x), _r(y), _r(w), _r(h), _r(r)])

    # drawing ----------------------------------------------------------------------------
    def rrect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        r: float,
        fill: Any,
        stroke: Any = None,
        lw: float = 0.0,
    ) -> None:
        self.ops.append(["rr", _r(x), _r(y), _r(w), _r(h), _r(r), fill, stroke, _r(lw)])

    def path(self, d: str, fill: Any, stroke: Any = None, lw: float = 0.0) -> None:
        self.ops.append(["p", d, fill, stroke, _r(lw)])

    def text(
        self, font: str, size: float, x: float, y: float, text: str, fill: str, ls: float = 0.0
    ) -> None:
        if not text:
            return
        self.fonts.add(font)
        if uses_fallback(font, text):
            self.fonts.add(FALLBACK)
        self.ops.append(["t", font, _r(size), _r(x), _r(y), text, fill, _r(ls)])

    def sprite(self, sid: str, x: float, y: float, s: float = 1.0) -> None:
        self.ops.append(["sp", sid, _r(x), _r(y), round(s, 4)])

    def extend(self, ops: list[Op]) -> None:
        self.ops.extend(ops)


def _n(v: Num) -> Num:
    return v if isinstance(v, dict) else _r(v)


def lin(x0: float, y0: float, x1: float, y1: float, stops: list[tuple[float, str]]) -> list[Any]:
    """A linear-gradient paint."""
    return ["lin", _r(x0), _r(y0), _r(x1), _r(y1), [[s, c] for s, c in stops]]


def build_scene(*args: Any, **kwargs: Any) -> Scene:
    """Alias of :func:`renderer.build.build_scene` (imported lazily: build imports this module)."""
    from .build import build_scene as _build

    return _build(*args, **kwargs)
