"""The scene's op set, paints and easings as data: the one definition both executors follow.

A scene (:mod:`renderer.scene`) is a display list of ops, JSON arrays whose first item is the
op's name.  :data:`OPS` lists every op with its fields (name and type, by position) and its
category:

* ``state``: save/restore, shadow and clip: change what later draws inherit;
* ``move``: transform and global alpha: a track here moves or fades everything after it in
  the group (the static-layer planner, :mod:`renderer.layers`, reads this category);
* ``draw``: put pixels on the canvas.

The skia executor (:mod:`renderer.raster`) and the page player (``overlay/static/player.js``)
each build their dispatch from this table and refuse to start when it names an op, paint or
easing they lack, or they have one it does not name.  The page reads the table as
``overlay/static/ops.json``, the text of :func:`table_json`; a test fails when the committed
file differs from it (``pytest tests/renderer/test_ops.py --update-golden`` rewrites it).
Easing *names* come from :data:`renderer.easing.EASINGS`; their formulas exist once per
language and a test compares the two on a grid of progress values.

Adding an op: a row here, a handler ``op_<name>`` in the skia executor, an entry in the
player's ``OPS``, a :class:`~renderer.scene.Builder` method, a case in the parity test, and
ops.json rewritten.  Each missing piece fails a test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .easing import EASINGS

__all__ = [
    "FORMAT_VERSION",
    "Category",
    "FieldType",
    "FieldSpec",
    "OpSpec",
    "PaintSpec",
    "OPS",
    "OP",
    "PAINTS",
    "IMAGE_ID",
    "FITS",
    "BLENDS",
    "fit_rect",
    "SceneError",
    "names_in",
    "require_handlers",
    "table",
    "table_json",
    "check_ops",
]

#: the scene JSON's ``"v"``; bump it when an op's fields change meaning
FORMAT_VERSION = 1


class Category(str, Enum):
    """What an op does to the picture (see the module docstring)."""

    STATE = "state"
    MOVE = "move"
    DRAW = "draw"


class FieldType(str, Enum):
    """The JSON value an op field holds."""

    #: a number, or ``{"k": i}``: the value of track ``i`` at the frame's time
    ANIM = "anim"
    #: a literal number
    NUM = "num"
    #: a colour, a gradient (see :data:`PAINTS`) or null (nothing)
    PAINT = "paint"
    #: ``"#rrggbb"`` or ``"#rrggbbaa"``, straight alpha
    COLOUR = "colour"
    #: a font key of :func:`renderer.fonts.font_files`
    FONT = "font"
    #: any string (drawn as text)
    TEXT = "text"
    #: SVG path data with absolute ``M L C Q Z`` only
    PATH = "path"
    #: a key of the scene's ``defs``
    SPRITE = "sprite"
    #: gradient stops ``[[offset 0..1, colour], ...]``
    STOPS = "stops"
    #: an image named by its content: ``<32 hex digits of its md5>.<png|jpg|webp|gif>``
    IMAGE = "image"
    #: how an image fills its box: ``"contain"`` (all of it, aspect kept) or ``"cover"``
    #: (the whole box, aspect kept, the overflow cropped evenly)
    FIT = "fit"
    #: how a layer lands on what is under it: ``"over"`` (source-over) or ``"plus"`` (the
    #: two added, clamped: Canvas2D's "lighter"; two layers at alphas summing to 1 then
    #: dissolve one into the other, what both draw the same staying as it is)
    BLEND = "blend"


@dataclass(frozen=True)
class FieldSpec:
    """One positional field of an op or paint."""

    name: str
    type: FieldType


@dataclass(frozen=True)
class OpSpec:
    """One op: JSON ``[name, *fields]``."""

    name: str
    category: Category
    fields: tuple[FieldSpec, ...]
    doc: str


@dataclass(frozen=True)
class PaintSpec:
    """A non-colour paint: JSON ``[name, *fields]`` in the place of a colour."""

    name: str
    fields: tuple[FieldSpec, ...]
    doc: str


def _f(spec: str) -> tuple[FieldSpec, ...]:
    """``"x:anim y:anim"`` -> field specs (keeps the table below readable)."""
    out = []
    for item in spec.split():
        name, kind = item.split(":")
        out.append(FieldSpec(name, FieldType(kind)))
    return tuple(out)


S, M, D = Category.STATE, Category.MOVE, Category.DRAW

OPS: tuple[OpSpec, ...] = (
    OpSpec("s", S, (), "save transform, global alpha, shadow and clip"),
    OpSpec("r", S, (), "restore what the matching save saved"),
    OpSpec("tr", M, _f("x:anim y:anim"), "translate"),
    OpSpec("sc", M, _f("sx:anim sy:anim"), "scale"),
    OpSpec("ro", M, _f("radians:anim"), "rotate clockwise"),
    OpSpec("a", M, _f("alpha:anim"), "multiply the global alpha (the value clamped to 0..1)"),
    OpSpec(
        "sh",
        S,
        _f("colour:colour blur:num dx:num dy:num"),
        "shadow under later rr/p fills until restore, Canvas2D semantics: blur (= 2 sigma) and "
        "offsets in device pixels, untransformed; shadow alpha = colour alpha x fill alpha x "
        "global alpha; off inside sprites",
    ),
    OpSpec("cl", S, _f("x:num y:num w:num h:num r:num"), "clip to a rounded rect (intersects the clip)"),
    OpSpec(
        "ly",
        S,
        _f("alpha:anim blend:blend"),
        "save, then begin a layer: the ops up to the matching restore draw into a transparent "
        "page-sized layer (global alpha 1, no shadow, no clip; the transform as before), which "
        "the restore composites at alpha (clamped to 0..1) x the global alpha through the clip "
        "in effect, by blend (over: source-over; plus: added, Canvas2D's lighter): a group's "
        "opacity (overlaps inside it not showing through), a clip that leaves the drawing "
        "inside it as it is, and with plus a dissolve of one layer into another",
    ),
    OpSpec(
        "rr",
        D,
        _f("x:num y:num w:num h:num r:num fill:paint stroke:paint lw:num"),
        "rounded rect (r clamped to half the shorter side; 0 = square corners); the stroke, "
        "centred on the outline, is drawn when lw > 0",
    ),
    OpSpec("p", D, _f("d:path fill:paint stroke:paint lw:num"), "path, filled then stroked (when lw > 0)"),
    OpSpec(
        "t",
        D,
        _f("font:font size:num x:num y:num text:text fill:colour ls:num"),
        "text left-aligned at the alphabetic baseline; ls px of letter spacing after each "
        "character; characters the font lacks come from the fallback font 'cjk'",
    ),
    OpSpec(
        "sp",
        D,
        _f("id:sprite x:num y:num s:num"),
        "draw the sprite defs[id] at x, y scaled by s; a sprite is a card: it draws inside the "
        "box 0..100 x 0..140 (the skia executor caches it as an image of that box, 4 px margin)",
    ),
    OpSpec(
        "im",
        D,
        _f("id:image x:num y:num w:num h:num fit:fit"),
        "the image id fitted into the box x, y, w, h (contain or cover, centred, aspect kept; "
        "cover crops to the box), bilinear, at the global alpha, no shadow; an image the "
        "executor has not loaded draws nothing (the skia executor takes it from its Assets, "
        "the page from its image base URL + id, redrawing when it arrives)",
    ),
)

OP: Mapping[str, OpSpec] = {spec.name: spec for spec in OPS}

PAINTS: tuple[PaintSpec, ...] = (
    PaintSpec(
        "lin",
        _f("x0:num y0:num x1:num y1:num stops:stops"),
        "linear gradient in the current user space; stops = [[offset 0..1, colour], ...]",
    ),
)


def fit_rect(iw: float, ih: float, x: float, y: float, w: float, h: float, fit: str) -> tuple[float, float, float, float, float, float, float, float]:
    """Source and destination rects ``(sx, sy, sw, sh, dx, dy, dw, dh)`` of an image of
    ``iw`` x ``ih`` pixels fitted into the box ``x, y, w, h`` (the ``im`` op's rule; the page
    player computes the same in JS)."""
    if iw <= 0 or ih <= 0 or w <= 0 or h <= 0:
        return 0.0, 0.0, 0.0, 0.0, x, y, 0.0, 0.0
    if fit == "cover":
        k = max(w / iw, h / ih)
        sw, sh = w / k, h / k
        return (iw - sw) / 2, (ih - sh) / 2, sw, sh, x, y, w, h
    k = min(w / iw, h / ih)
    dw, dh = iw * k, ih * k
    return 0.0, 0.0, float(iw), float(ih), x + (w - dw) / 2, y + (h - dh) / 2, dw, dh


class SceneError(ValueError):
    """A scene that breaks the op table; the message names the scene and the JSON path."""

    def __init__(self, message: str, *, source: str = "scene", path: str = "") -> None:
        self.source = source
        self.path = path
        self.detail = message
        super().__init__(f"{source}: {path}: {message}" if path else f"{source}: {message}")


def names_in(owner: type, prefix: str) -> set[str]:
    """Names ``x`` of an executor's handler methods ``<prefix>x``."""
    return {k[len(prefix) :] for k in dir(owner) if k.startswith(prefix)}


def require_handlers(kind: str, table_names: Iterable[str], handled: Iterable[str], where: str) -> None:
    """Refuse an executor whose handlers differ from the table.

    Raises:
        SceneError: ``handled`` lacks a name of ``table_names``, or has one it does not list.
    """
    want, have = set(table_names), set(handled)
    if want != have:
        missing, extra = sorted(want - have), sorted(have - want)
        raise SceneError(f"{where} does not follow the {kind} table: lacks {missing}, has unlisted {extra}", source="renderer.ops")


def table() -> dict[str, Any]:
    """The table as JSON data (what ``overlay/static/ops.json`` holds)."""
    return {
        "v": FORMAT_VERSION,
        "categories": {c.value: _CATEGORY_DOC[c] for c in Category},
        "types": {t.value: _TYPE_DOC[t] for t in FieldType},
        "ops": [
            {"name": s.name, "category": s.category.value, "fields": [[f.name, f.type.value] for f in s.fields], "doc": s.doc}
            for s in OPS
        ],
        "paints": [{"name": p.name, "fields": [[f.name, f.type.value] for f in p.fields], "doc": p.doc} for p in PAINTS],
        "easings": [{"name": name, "doc": (fn.__doc__ or "").strip()} for name, fn in EASINGS.items()],
    }


def table_json() -> str:
    """``overlay/static/ops.json``'s text: stable, one op per line, ends with a newline."""
    data = table()
    lines = ["{"]
    head = [k for k in data if k not in ("ops", "paints", "easings")]
    for key in head:
        lines.append(f" {json.dumps(key)}: {json.dumps(data[key], ensure_ascii=False)},")
    for key in ("ops", "paints", "easings"):
        items = [f"  {json.dumps(item, ensure_ascii=False)}" for item in data[key]]
        lines.append(f" {json.dumps(key)}: [\n" + ",\n".join(items) + "\n ]" + ("," if key != "easings" else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


_CATEGORY_DOC = {
    Category.STATE: "save/restore, shadow, clip: change what later draws inherit",
    Category.MOVE: "transform and global alpha: a track here moves or fades what follows",
    Category.DRAW: "put pixels on the canvas",
}

_TYPE_DOC = {
    FieldType.ANIM: 'a number, or {"k": i}: track i sampled at the frame time',
    FieldType.NUM: "a literal number",
    FieldType.PAINT: 'a colour, a paint array (see "paints") or null',
    FieldType.COLOUR: "#rrggbb or #rrggbbaa, straight alpha",
    FieldType.FONT: "a font key (renderer.fonts.font_files)",
    FieldType.TEXT: "a string",
    FieldType.PATH: "SVG path data, absolute M L C Q Z only",
    FieldType.SPRITE: "a key of the scene's defs",
    FieldType.STOPS: "[[offset 0..1, colour], ...]",
    FieldType.IMAGE: "an image's content id: 32 hex digits of its md5, a dot, png|jpg|webp|gif",
    FieldType.FIT: '"contain" or "cover"',
    FieldType.BLEND: '"over" or "plus"',
}

#: an image id (the content hash names the image; see studio.uploads)
IMAGE_ID = re.compile(r"^[0-9a-f]{32}\.(png|jpg|webp|gif)$")
FITS = ("contain", "cover")
BLENDS = ("over", "plus")


# validation --------------------------------------------------------------------------------

_PAINT = {p.name: p for p in PAINTS}


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_colour(v: Any) -> bool:
    if not (isinstance(v, str) and v.startswith("#") and len(v) in (7, 9)):
        return False
    try:
        int(v[1:], 16)
    except ValueError:
        return False
    return True


def _field_problem(kind: FieldType, v: Any, tracks: int, defs: Mapping[str, Any]) -> str | None:
    """What is wrong with ``v`` as a field of type ``kind`` (None: nothing)."""
    if type(v) is float and (kind is FieldType.NUM or kind is FieldType.ANIM):
        return None  # the common case, first
    if kind is FieldType.ANIM:
        if isinstance(v, dict):
            k = v.get("k")
            if set(v) != {"k"} or not isinstance(k, int) or not 0 <= k < tracks:
                return f"{v!r} names no track (the scene has {tracks})"
            return None
        return None if _is_num(v) else f"{v!r} is not a number or a track"
    if kind is FieldType.NUM:
        return None if _is_num(v) else f"{v!r} is not a number"
    if kind is FieldType.COLOUR:
        return None if _is_colour(v) else f"{v!r} is not a #rrggbb(aa) colour"
    if kind is FieldType.PAINT:
        if v is None or _is_colour(v):
            return None
        if isinstance(v, list) and v and v[0] in _PAINT and len(v) == len(_PAINT[v[0]].fields) + 1:
            spec = _PAINT[v[0]]
            if all(_field_problem(f.type, x, tracks, defs) is None for f, x in zip(spec.fields, v[1:])):
                return None
        return f"{v!r} is not a colour, a paint or null"
    if kind is FieldType.STOPS:
        if isinstance(v, list) and v and all(isinstance(s, list) and len(s) == 2 and _is_num(s[0]) and _is_colour(s[1]) for s in v):
            return None
        return f"{v!r} is not a list of [offset, colour] stops"
    if kind is FieldType.SPRITE:
        return None if isinstance(v, str) and v in defs else f"{v!r} is not a sprite of the scene"
    if kind is FieldType.IMAGE:
        return None if isinstance(v, str) and IMAGE_ID.match(v) else f"{v!r} is not an image id (md5 hex + .png/.jpg/.webp/.gif)"
    if kind is FieldType.FIT:
        return None if v in FITS else f"{v!r} is not one of {list(FITS)}"
    if kind is FieldType.BLEND:
        return None if v in BLENDS else f"{v!r} is not one of {list(BLENDS)}"
    if kind is FieldType.PATH:
        if isinstance(v, str) and v and set(v) <= set("MLCQZ0123456789.-+eE ,"):
            return None
        return f"{v!r} is not path data with M L C Q Z only"
    return None if isinstance(v, str) else f"{v!r} is not a string"


#: how each op moves the save depth (a layer is a save that composites at its restore)
_DEPTH = {"s": 1, "ly": 1, "r": -1}


def check_ops(ops: list[Any], *, tracks: int, defs: Mapping[str, Any], source: str = "scene", path: str = "/ops") -> None:
    """Check an op list against the table: names, field counts and types, track and sprite
    references, balanced save/restore, no sprite inside a sprite (``path`` ``/defs/...``).

    Raises:
        SceneError: the first op that breaks the table, by JSON path.
    """
    in_sprite = path.startswith("/defs")
    depth = 0
    for i, op in enumerate(ops):
        where = f"{path}/{i}"
        if not isinstance(op, list) or not op or op[0] not in OP:
            name = op[0] if isinstance(op, list) and op else op
            raise SceneError(f"unknown op {name!r}", source=source, path=where)
        spec = OP[op[0]]
        if len(op) != len(spec.fields) + 1:
            raise SceneError(f"{op[0]!r} takes {len(spec.fields)} fields, got {len(op) - 1}", source=source, path=where)
        for j, f in enumerate(spec.fields, start=1):
            problem = _field_problem(f.type, op[j], tracks, defs)
            if problem:
                raise SceneError(f"{op[0]!r} field {f.name}: {problem}", source=source, path=f"{where}/{j}")
        if op[0] == "sp" and in_sprite:
            raise SceneError("sprites never nest", source=source, path=where)
        depth += _DEPTH.get(op[0], 0)
        if depth < 0:
            raise SceneError("restore without a save", source=source, path=where)
    if depth:
        raise SceneError(f"{depth} save(s) without a restore", source=source, path=path)
