"""Static layers: groups of scene ops that do not move, drawn once and reused between frames.

A scene is mostly still within a step: panels, name plates and resting cards reference no
track.  :func:`plan` finds such ``["s"] ... ["r"]`` groups in a scene's top-level ops; the skia
executor draws each one once into an image keyed by its *content* (the group's JSON, the JSON
of the sprites it uses) and the device matrix with the translation reduced to its sub-pixel
fraction, then blits that image at the integer offset.  Same (scene, t) gives the same
pixels; the only difference from drawing op by op is one 8-bit rounding of the group's
composite (at most 1/255 where the group's own ops overlap).

A group is cached only where the result cannot depend on t: it references no track, no
enclosing op before it moves or fades it by a track, it holds no layer (``ly``, which opens a
group too and is never cached), and at run time it starts with global alpha 1, no shadow in
effect and no clip.

The page player (``overlay/static/player.js``) caches the same groups by the same rules,
reading the same categories from the op table (``ops.json``); a browser test compares its
``plan`` with this one on real scenes.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import skia  # type: ignore[import-not-found]

from .ops import OPS, Category, FieldType, SceneError
from .scene import Op

__all__ = ["Plan", "plan", "LayerCache"]

_DRAW = frozenset(s.name for s in OPS if s.category is Category.DRAW)
_MOVE = frozenset(s.name for s in OPS if s.category is Category.MOVE)
#: op name -> positions of its fields that may reference a track
_ANIM = {s.name: tuple(i for i, f in enumerate(s.fields, start=1) if f.type is FieldType.ANIM) for s in OPS}


@dataclass
class Plan:
    """Cacheable groups of one op list: index of the ``["s"]`` -> (index after ``["r"]``, key)."""

    groups: dict[int, tuple[int, str]] = field(default_factory=dict)


def _animated(op: Op) -> bool:
    """Whether ``op`` references a track.

    Raises:
        SceneError: ``op`` is not an op of the table.
    """
    at = _ANIM.get(op[0])
    if at is None:
        raise SceneError(f"unknown scene op {op[0]!r}")
    return any(isinstance(op[i], dict) for i in at)


def plan(ops: list[Op], defs: dict[str, list[Op]], *, min_draws: int = 2) -> Plan:
    """Find the static groups of ``ops`` worth caching (at least ``min_draws`` drawing ops).

    Where a static group sits inside another static group only the outer one is listed.
    """
    out = Plan()
    # per open group: [start index, entry is static, group has anim, draw count, sprites, has shadow]
    stack: list[list[Any]] = []
    level_dyn = False  # a track moved or faded the current level before this point
    dyn_stack: list[bool] = []
    def_text: dict[str, str] = {}
    for i, op in enumerate(ops):
        name = op[0]
        if name == "s" or name == "ly":
            # a layer is never cached, nor is a group holding one (its opacity is drawn at run time)
            if name == "ly" and stack:
                stack[-1][2] = True
            stack.append([i, not level_dyn and name == "s", name == "ly", 0, set(), False])
            dyn_stack.append(level_dyn)
            continue
        if name == "r":
            if not stack:
                continue
            start, entry_static, anim, draws, sprites, shadow = stack.pop()
            level_dyn = dyn_stack.pop()
            if stack:
                parent = stack[-1]
                parent[2] = parent[2] or anim
                parent[3] += draws
                parent[4] |= sprites
                parent[5] = parent[5] or shadow
            if entry_static and not anim and (draws >= min_draws or (shadow and draws)):
                # drop inner groups: the outer one covers them
                for k in [k for k in out.groups if start < k < i]:
                    del out.groups[k]
                for sid in sprites:
                    if sid not in def_text:
                        def_text[sid] = json.dumps(defs.get(sid), separators=(",", ":"))
                key = json.dumps(ops[start : i + 1], separators=(",", ":")) + "|" + "|".join(
                    f"{sid}={def_text[sid]}" for sid in sorted(sprites)
                )
                out.groups[start] = (i + 1, key)
            continue
        anim = _animated(op)
        if name in _MOVE and anim:
            level_dyn = True
        if stack:
            top = stack[-1]
            top[2] = top[2] or anim
            if name in _DRAW:
                top[3] += 1
            if name == "sp":
                top[4].add(op[1])
            elif name == "sh":
                top[5] = True
    return out


@dataclass
class _Entry:
    image: skia.Image | None
    left: int
    top: int
    nbytes: int


class LayerCache:
    """Images of static groups keyed by (content, device matrix fraction), LRU by bytes."""

    def __init__(self, max_bytes: int = 192 << 20) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self.plans: OrderedDict[int, tuple[list[Op], dict[str, list[Op]], Plan]] = OrderedDict()

    def plan_of(self, ops: list[Op], defs: dict[str, list[Op]]) -> Plan:
        """The plan of a scene's op list, remembered by identity (scenes are not edited once drawn)."""
        hit = self.plans.get(id(ops))
        if hit is not None and hit[0] is ops and hit[1] is defs:
            self.plans.move_to_end(id(ops))
            return hit[2]
        p = plan(ops, defs)
        self.plans[id(ops)] = (ops, defs, p)
        while len(self.plans) > 32:
            self.plans.popitem(last=False)
        return p

    def draw(self, canvas: skia.Canvas, key: str, record: Any) -> skia.IRect | None:
        """Blit the layer ``key`` under the canvas matrix; ``record(canvas)`` draws it on a miss.

        Returns the device area covered (None if the layer is empty).
        """
        m = canvas.getTotalMatrix()
        tx, ty = m.getTranslateX(), m.getTranslateY()
        ix, iy = math.floor(tx), math.floor(ty)
        fx, fy = tx - ix, ty - iy
        mk = (key, m.getScaleX(), m.getSkewX(), m.getSkewY(), m.getScaleY(), fx, fy)
        entry = self.entries.get(mk)
        if entry is None:
            entry = self._make(m, fx, fy, record)
            self.entries[mk] = entry
            self.bytes += entry.nbytes
            while self.bytes > self.max_bytes and len(self.entries) > 1:
                _, old = self.entries.popitem(last=False)
                self.bytes -= old.nbytes
        else:
            self.entries.move_to_end(mk)
        if entry.image is None:
            return None
        x, y = ix + entry.left, iy + entry.top
        canvas.save()
        canvas.resetMatrix()
        canvas.drawImage(entry.image, x, y)
        canvas.restore()
        return skia.IRect.MakeXYWH(x, y, entry.image.width(), entry.image.height())

    @staticmethod
    def _make(m: skia.Matrix, fx: float, fy: float, record: Any) -> _Entry:
        rec = skia.PictureRecorder()
        rc = rec.beginRecording(skia.Rect(-1e6, -1e6, 1e6, 1e6), skia.RTreeFactory()())
        m.setTranslateX(fx)  # a copy (getTotalMatrix returns one)
        m.setTranslateY(fy)
        rc.setMatrix(m)
        record(rc)
        pic = rec.finishRecordingAsPicture()
        bounds = pic.cullRect().roundOut()
        if bounds.isEmpty():
            return _Entry(None, 0, 0, 0)
        surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(bounds.width(), bounds.height()))
        sc = surf.getCanvas()
        sc.clear(0)
        sc.translate(-bounds.left(), -bounds.top())
        sc.drawPicture(pic)
        return _Entry(surf.makeImageSnapshot(), bounds.left(), bounds.top(), bounds.width() * bounds.height() * 4)
