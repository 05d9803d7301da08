"""The scene: a display list that two executors draw (skia here, Canvas2D in the page).

Scene JSON (``Scene.to_json()``)::

    {
      "v": 1,                       # format version (renderer.ops.FORMAT_VERSION)
      "w": 1920, "h": 1080,         # canvas size in pixels
      "bg": null | "#rrggbbaa",     # null = transparent (cleared to 0,0,0,0)
      "dur": 1.2,                   # seconds until the scene is still (run time + hold)
      "fonts": ["bold", ...],       # font keys used; see renderer.fonts.font_files()
      "images": ["<md5>.png", ...], # image ids the "im" ops draw (only when there are any):
                                    # the page loads them from its image base URL, the skia
                                    # executor finds them in its Assets
      "tracks": [track, ...],       # animated values, referenced from ops as {"k": index}
      "defs": {"id": [op, ...]},    # sprites (card faces and backs), drawn by "sp"
      "ops": [op, ...],
      "elements": [box, ...]        # where each view element landed (id, type, x, y, w, h,
                                    # scale in canvas pixels): for tests and the studio;
                                    # executors ignore it
    }

A **track** is a list of keyframes ``[[t0, v0], [t1, v1, easing], ...]`` (times ascending,
seconds, scene-local).  Before ``t0`` the value is ``v0``, after the last keyframe it is the
last value, between two keyframes it is ``a + (b - a) * ease(easing, (t - ta) / (tb - ta))``
(easing names: :data:`renderer.easing.EASINGS`).  Computed in float64 on both sides, so
samples agree exactly.

**Ops** are JSON arrays, first item the name; :data:`renderer.ops.OPS` lists them with their
fields, types and categories, and both executors dispatch from that table.  Colours are
``"#rrggbbaa"`` (straight alpha).  Sprites never nest.  Executors draw ops in order, with
anti-aliasing, ``source-over``.  :class:`Builder` is the one writer of ops: scene elements
and card art alike emit through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

import msgspec

from .easing import ease
from .fonts import FALLBACK, uses_fallback
from .ops import FORMAT_VERSION, SceneError, check_ops

__all__ = ["Scene", "Builder", "Fit", "Anim", "Num", "Op", "Track", "sample", "dumps", "keep", "FORMAT_VERSION"]

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


K = TypeVar("K")
V = TypeVar("V")


def keep(cache: dict[K, V], key: K, value: V, bound: int) -> V:
    """``value`` kept in ``cache`` under ``key``; a cache of ``bound`` entries is emptied first
    (a bound, not an LRU: what a show draws changes seldom, and a full cache refills at once)."""
    if len(cache) >= bound:
        cache.clear()
    cache[key] = value
    return value


#: ops drawn again and again (panels, plates, labels) by their arguments: one list per
#: distinct op, shared by every scene that draws it.  Ops are read, never changed in place,
#: by every executor and transform (a transform that moves one copies it, as
#: :mod:`renderer.take` does); ``tests/renderer/test_scene.py`` checks a build leaves them as made.
_RRECTS: dict[tuple[Any, ...], Op] = {}
_TEXTS: dict[tuple[Any, ...], Op] = {}
#: element boxes (:meth:`Fit.box`), shared the same way
_BOXES: dict[tuple[Any, ...], dict[str, Any]] = {}


#: tracks by the keyframes given to :meth:`Builder.track`: (the track, its dedup key), or the
#: constant it collapses to; shared like the ops above
_TRACKS: dict[tuple[Any, ...], float | tuple[Track, tuple[Any, ...]]] = {}


def _track(keys: list[tuple[float, float] | tuple[float, float, str]]) -> float | tuple[Track, tuple[Any, ...]]:
    values = {k[1] for k in keys}
    if len(values) == 1:
        return round(float(keys[0][1]), 4) + 0.0
    track: Track = []
    for k in keys:
        item: list[Any] = [round(float(k[0]), 4), round(float(k[1]), 4)]  # floats: 0 and 0.0 are one key
        if len(k) > 2 and k[2] != "linear":
            item.append(k[2])
        track.append(item)
    return track, tuple(map(tuple, track))


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
    #: image ids the scene's ``im`` ops draw (sorted)
    images: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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
        if self.images:  # scenes without images keep their text as before
            data["images"] = self.images
        return data

    def dumps(self) -> str:
        """Compact JSON text for the page player (:func:`dumps`)."""
        return dumps(self.to_json())

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str = "scene") -> Scene:
        """A scene from its JSON data, checked against the op table.

        Raises:
            SceneError: another format version, or an op that breaks :data:`renderer.ops.OPS`.
        """
        if data.get("v") != FORMAT_VERSION:
            raise SceneError(f"scene format {data.get('v')!r} is not {FORMAT_VERSION}", source=source, path="/v")
        tracks = len(data.get("tracks", []))
        defs = data.get("defs", {})
        for sid, ops in defs.items():
            check_ops(ops, tracks=tracks, defs=defs, source=source, path=f"/defs/{sid}")
        check_ops(data["ops"], tracks=tracks, defs=defs, source=source)
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
            images=list(data.get("images", [])),
        )


@dataclass(frozen=True)
class Fit:
    """A view's design size fitted into an output size: scaled to fit whole, centred (the
    spare width or height split evenly).  The scene builders and the layers drawn over a
    scene share it, so their element boxes line up."""

    scale: float
    ox: float
    oy: float

    @classmethod
    def of(cls, view_w: float, view_h: float, out_w: float, out_h: float) -> Fit:
        """The fit of a ``view_w`` x ``view_h`` view into ``out_w`` x ``out_h``."""
        s = min(out_w / view_w, out_h / view_h)
        return cls(s, (out_w - view_w * s) / 2, (out_h - view_h * s) / 2)

    def box(self, ident: str, kind: str, x: float, y: float, size: tuple[float, float], scale: float) -> dict[str, Any]:
        """An element's box in canvas pixels (``Scene.elements``): placed at ``x, y`` in view
        pixels, ``size`` unscaled, drawn at ``scale``."""
        key = (self.scale, self.ox, self.oy, ident, kind, x, y, size, scale)
        box = _BOXES.get(key)
        if box is None:
            s = self.scale
            box = keep(_BOXES, key, {"id": ident, "type": kind, "x": round(self.ox + x * s, 2), "y": round(self.oy + y * s, 2),
                                     "w": round(size[0] * scale * s, 2), "h": round(size[1] * scale * s, 2), "scale": scale}, 4096)
        return box


class Builder:
    """Appends ops; small helpers keep element code readable and numbers rounded."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.tracks: list[Track] = []
        self.fonts: set[str] = set()
        self.images: set[str] = set()
        self.defs: dict[str, list[Op]] = {}
        self._track_ids: dict[tuple[Any, ...], int] = {}
        self.duration = 0.0

    def scene(
        self,
        width: int,
        height: int,
        *,
        background: str | None,
        duration: float,
        elements: list[dict[str, Any]],
        under: list[Op] | None = None,
    ) -> Scene:
        """The :class:`Scene` of what this builder holds (``under``: ops of a scene it draws
        over, kept first), ``duration`` rounded to 0.1 ms: the one way a builder ends."""
        return Scene(
            width=width,
            height=height,
            background=background,
            duration=round(duration, 4),
            fonts=sorted(self.fonts),
            tracks=self.tracks,
            defs=self.defs,
            ops=self.ops if under is None else under + self.ops,
            elements=elements,
            images=sorted(self.images),
        )

    # animated values -------------------------------------------------------------------
    def track(self, keys: list[tuple[float, float] | tuple[float, float, str]]) -> Num:
        """A keyframed value; a constant track collapses to a literal number."""
        given = tuple(keys)
        made = _TRACKS.get(given)
        if made is None:
            made = keep(_TRACKS, given, _track(keys), 8192)
        if isinstance(made, float):
            return made  # a constant
        track, key = made
        self.duration = max(self.duration, track[-1][0])
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

    def layer(self, a: Num, blend: str = "over") -> None:
        """Save and begin a layer composited at ``a`` by the matching :meth:`restore` (a
        group's opacity: what it draws does not show through itself); ``blend`` "plus" adds
        it to what is under it (a dissolve, with a layer under it at ``1 - a``)."""
        self.ops.append(["ly", a if isinstance(a, dict) else round(a, 4), blend])

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
        key = (x, y, w, h, r, fill, stroke, lw)
        try:
            op = _RRECTS.get(key)
        except TypeError:  # a paint given as a list (a gradient)
            self.ops.append(["rr", _r(x), _r(y), _r(w), _r(h), _r(r), fill, stroke, _r(lw)])
            return
        if op is None:
            op = keep(_RRECTS, key, ["rr", _r(x), _r(y), _r(w), _r(h), _r(r), fill, stroke, _r(lw)], 16384)
        self.ops.append(op)

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
        key = (font, size, x, y, text, fill, ls)
        op = _TEXTS.get(key)
        if op is None:
            op = keep(_TEXTS, key, ["t", font, _r(size), _r(x), _r(y), text, fill, _r(ls)], 16384)
        self.ops.append(op)

    def sprite(self, sid: str, x: float, y: float, s: float = 1.0) -> None:
        self.ops.append(["sp", sid, _r(x), _r(y), round(s, 4)])

    def image(self, image_id: str, x: float, y: float, w: float, h: float, fit: str = "contain") -> None:
        """The image ``image_id`` (a content id) fitted into the box (see the ``im`` op)."""
        self.images.add(image_id)
        self.ops.append(["im", image_id, _r(x), _r(y), _r(w), _r(h), fit])


_ENCODER = msgspec.json.Encoder()


def dumps(data: Any) -> str:
    """Compact JSON text of plain data, as ``json.dumps(data, separators=(",", ":"),
    ensure_ascii=False)`` writes it for a scene's values (finite numbers, strings, lists,
    dicts with string keys), at about a quarter of its cost: msgspec's encoder.  A scene is
    serialised once per output and step on a live show (a 20 kB text; 0.25 ms with
    ``json.dumps``, 0.07 ms with this)."""
    return _ENCODER.encode(data).decode()


def _n(v: Num) -> Num:
    return v if isinstance(v, dict) else _r(v)
