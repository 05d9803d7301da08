"""The skia executor: draws a :class:`~renderer.scene.Scene` at scene time ``t``.

It dispatches each op to its handler ``op_<name>`` and each paint to ``paint_<name>``, built
from the tables of :mod:`renderer.ops` (the module refuses to load when a handler is missing
or unlisted); the page player does the same from ``ops.json``.
Fonts load once from the pinned files.  Sprites are cached as ``skia.Picture`` recordings and,
where the device transform is a plain scale plus translation, as raster images keyed by
(sprite, scale, sub-pixel offset), blitted at the integer offset.  Every cache here holds
values that are functions of their keys, and a draw takes the same path whether its cache
hits or not, so a frame's pixels never depend on what was drawn before (renderer rule: a
function of state, view, theme, timing and t; ``tests/renderer/test_cache.py`` checks it).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import skia  # type: ignore[import-not-found]

from .fonts import font_files, quiet_fontconfig, shape
from .layers import LayerCache, Plan
from .ops import IMAGE_ID, OP, PAINTS, SceneError, fit_rect, names_in, require_handlers
from .scene import Op, Scene, sample
from .textgamma import coverage_table, luminance_index

__all__ = ["Assets", "raster", "to_rgba", "to_argb", "read_straight", "save_png", "default_assets", "parse_colour"]


@dataclass
class Assets:
    """Loaded fonts and sprite caches; build once, reuse for every frame."""

    typefaces: dict[str, skia.Typeface]
    sprite_cache: bool = True
    pictures: dict[tuple[str, int], skia.Picture] = field(default_factory=dict)
    images: dict[tuple[str, int, float, float, float], tuple[skia.Image, int, int]] = field(default_factory=dict)
    shadows: dict[tuple[float, ...], tuple[skia.Image, int, int]] = field(default_factory=dict)
    surfaces: dict[tuple[int, int], skia.Surface] = field(default_factory=dict)
    layers: LayerCache = field(default_factory=LayerCache)
    #: sprite images made once and not kept yet (kept when asked for again: see cached_sprite)
    seen: set[tuple[str, int, float, float, float]] = field(default_factory=set)
    dirty: dict[tuple[int, int], tuple[int, list[skia.IRect]]] = field(default_factory=dict)
    _def_ids: dict[int, tuple[list[Op], int]] = field(default_factory=dict)
    _contents: dict[str, int] = field(default_factory=dict)
    _animated: dict[int, bool] = field(default_factory=dict)
    max_images: int = 512
    #: decoded images by content id (``<md5>.<ext>``), drawn by the ``im`` op; the caller
    #: loads them (:meth:`add_image`): the executor reads no files
    bitmaps: dict[str, skia.Image] = field(default_factory=dict)

    def add_image(self, image_id: str, data: bytes) -> None:
        """Decode ``data`` as the image named ``image_id`` (its content id) for the ``im`` op.

        The id must be the md5 of ``data`` with its extension, as the uploads store names
        files, so a scene always draws the image it names.  Cached layers are dropped (a
        group drawn before the image arrived drew nothing in its place).

        Raises:
            SceneError: the id is not a content id, does not match ``data``, or skia cannot
                decode it.
        """
        if not IMAGE_ID.match(image_id):
            raise SceneError(f"{image_id!r} is not an image id", source="renderer.raster")
        if hashlib.md5(data, usedforsecurity=False).hexdigest() != image_id.split(".", 1)[0]:
            raise SceneError(f"image {image_id!r}: the data's md5 differs from its id", source="renderer.raster")
        img = skia.Image.MakeFromEncoded(skia.Data.MakeWithCopy(data))
        if img is None:
            raise SceneError(f"image {image_id!r}: skia cannot decode it", source="renderer.raster")
        self.bitmaps[image_id] = img.makeRasterImage()
        self.layers = LayerCache()

    def content_id(self, ops: list[Op]) -> int:
        """A small number naming the content of a sprite's op list (computed once per list)."""
        hit = self._def_ids.get(id(ops))
        if hit is not None and hit[0] is ops:
            return hit[1]
        text = json.dumps(ops, separators=(",", ":"))
        n = self._contents.setdefault(text, len(self._contents))
        if len(self._def_ids) > 4096:
            self._def_ids.clear()
        self._def_ids[id(ops)] = (ops, n)
        return n

    def animated(self, n: int, ops: list[Op]) -> bool:
        """Whether a sprite's op list (content id ``n``, :meth:`content_id`) references a
        track (then no image of it is cached)."""
        hit = self._animated.get(n)
        if hit is None:
            hit = self._animated[n] = _has_track(ops)
        return hit

    @classmethod
    def load(cls, *, sprite_cache: bool = True) -> Assets:
        with quiet_fontconfig():  # no system Fontconfig warnings on stderr
            faces = {k: skia.Typeface.MakeFromFile(str(p)) for k, p in font_files().items()}
        missing = [k for k, f in faces.items() if f is None]
        if missing:
            raise OSError(f"cannot load fonts {missing} from {font_files()}")
        return cls(typefaces=faces, sprite_cache=sprite_cache)


_DEFAULT: Assets | None = None


def SIGMA(blur: float) -> float:
    """Canvas2D shadowBlur -> Gaussian sigma (the HTML spec: half the blur)."""
    return blur / 2.0


def default_assets() -> Assets:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Assets.load()
    return _DEFAULT


@lru_cache(maxsize=1024)
def parse_colour(text: str) -> int:
    """``#rrggbb`` / ``#rrggbbaa`` -> skia ARGB int."""
    h = text.lstrip("#")
    r, g, b = int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    a = int(h[6:8], 16) if len(h) == 8 else 255
    return int(skia.ColorSetARGB(a, r, g, b))


@lru_cache(maxsize=4096)
def _path(d: str) -> skia.Path:
    path = skia.Path()
    i, n = 0, len(d)
    cmd = ""
    nums: list[float] = []

    def flush() -> None:
        if cmd == "M":
            path.moveTo(nums[0], nums[1])
        elif cmd == "L":
            path.lineTo(nums[0], nums[1])
        elif cmd == "C":
            path.cubicTo(*nums[:6])
        elif cmd == "Q":
            path.quadTo(*nums[:4])
        elif cmd == "Z":
            path.close()

    token = ""
    while i <= n:
        ch = d[i] if i < n else "M"
        if ch in "MLCQZ" or ch in " ,":
            if token:
                nums.append(float(token))
                token = ""
            if ch in "MLCQZ":
                if cmd:
                    flush()
                cmd, nums = (ch if i < n else ""), []
        else:
            token += ch
        i += 1
    return path


_RRECTS: dict[tuple[float, ...], skia.RRect] = {}


def _rrect(x: float, y: float, w: float, h: float, r: float) -> skia.RRect:
    key = (x, y, w, h, r)
    rr = _RRECTS.get(key)
    if rr is None:
        r = min(r, w / 2, h / 2)
        rr = skia.RRect.MakeRectXY(skia.Rect.MakeXYWH(x, y, w, h), r, r)
        if len(_RRECTS) < 20000:
            _RRECTS[key] = rr
    return rr


def _shadow_layer(
    c: skia.Canvas,
    m: skia.Matrix,
    colour: int,
    sigma: float,
    dx: float,
    dy: float,
    alpha: float,
    bounds: skia.Rect,
    draw: Any,
    shader: skia.Shader | None = None,
) -> None:
    """Draw only the shadow of ``draw(paint)`` under matrix ``m``; filter values in device space.

    The shape is drawn opaque, or with ``shader`` (a gradient: the shadow then follows the
    gradient's own alpha pixel by pixel, as Canvas2D's does).
    """
    dev = m.mapRect(bounds).makeOutset(2, 2)
    lp = skia.Paint()
    lp.setAlphaf(alpha)
    lp.setImageFilter(skia.ImageFilters.DropShadowOnly(dx, dy, sigma, sigma, colour))
    c.save()
    c.resetMatrix()
    c.saveLayer(dev, lp)
    c.concat(m)
    paint = skia.Paint(AntiAlias=True)
    if shader is not None:
        paint.setShader(shader)
    draw(paint)
    c.restore()
    c.restore()


@lru_cache(maxsize=1024)
def _rect_path(x: float, y: float, w: float, h: float) -> skia.Path:
    return skia.Path.Rect(skia.Rect.MakeXYWH(x, y, w, h))


class _Exec:
    def __init__(self, canvas: skia.Canvas, scene: Scene, t: float, assets: Assets) -> None:
        self.c = canvas
        self.scene = scene
        self.t = t
        self.assets = assets
        self.alpha = 1.0
        self.shadow: tuple[int, float, float, float] | None = None
        self.clipped = False
        #: device rects drawn this frame (top-level executor only), for the next frame's clear
        self.dirty: list[skia.IRect] | None = None
        self.stack: list[tuple[float, tuple[int, float, float, float] | None, bool]] = []
        #: per open save: None, or for a layer (``ly``) the canvas it lands on, its surface and alpha
        self.opened: list[tuple[skia.Canvas, skia.Surface, float, bool] | None] = []
        self.in_sprite = False
        self.fonts: dict[tuple[str, float], skia.Font] = {}

    def num(self, v: Any) -> float:
        if isinstance(v, dict):
            return sample(self.scene.tracks[v["k"]], self.t)
        return float(v)

    def paint(self, spec: Any, *, stroke: float = 0.0) -> skia.Paint | None:
        if spec is None:
            return None
        p = skia.Paint(AntiAlias=True)
        if isinstance(spec, str):
            p.setColor(parse_colour(spec))
        else:
            make = _PAINT.get(spec[0])
            if make is None:
                raise SceneError(f"unknown paint {spec[0]!r}")
            p.setShader(make(spec))
        if stroke:
            p.setStyle(skia.Paint.kStroke_Style)
            p.setStrokeWidth(stroke)
        if self.alpha < 1.0:
            p.setAlphaf(p.getAlphaf() * self.alpha)
        return p

    def mark(self, local: skia.Rect, outset: float = 1.0) -> None:
        """Note the device area of a draw (``local`` in user space), shadow included."""
        if self.dirty is None:
            return
        dev = self.c.getTotalMatrix().mapRect(local.makeOutset(outset, outset))
        if self.shadow is not None:
            _, blur, dx, dy = self.shadow
            o = 3 * SIGMA(blur) + 3
            dev.join(dev.makeOffset(dx, dy).makeOutset(o, o))
        self.dirty.append(dev.roundOut().makeOutset(1, 1))

    def draw_shadow(self, fill: Any, draw: Any, bounds: skia.Rect) -> None:
        """Canvas2D's shadow, the way Chromium draws it: the shape rasterised into a layer,
        which a drop-shadow-only image filter blurs (sigma = blur / 2, in device pixels) and
        offsets.  ``bounds`` is the shape's user-space box (the layer's extent).

        The layer's alpha carries fill alpha x global alpha, so the shadow's alpha is the
        shadow colour's alpha times theirs, as in Canvas2D; a gradient fill is drawn into the
        layer as it is, so its shadow follows its alpha pixel by pixel.  (Skia's mask-filter blur, an
        analytic shortcut for rounded rects, lands up to 1 px wider: 9/255 off Chromium.)
        """
        if self.shadow is None or fill is None:
            return
        colour, blur, dx, dy = self.shadow
        fill_alpha = (parse_colour(fill) >> 24 & 255) / 255.0 if isinstance(fill, str) else 1.0
        a = fill_alpha * self.alpha
        if a <= 0 or (colour >> 24) == 0:
            return
        shader = None if isinstance(fill, str) else _PAINT[fill[0]](fill)
        _shadow_layer(self.c, self.c.getTotalMatrix(), colour, SIGMA(blur), dx, dy, a, bounds, draw, shader)

    def rr_shadow(self, x: float, y: float, w: float, h: float, r: float, fill: str) -> None:
        """Canvas2D-style shadow of a rounded rect (see :meth:`draw_shadow`), from a cache.

        The shadow is made once per shape, device transform and sub-pixel offset as a coverage
        mask (A8, tinted by the paint) and blitted at an integer position: the pixels of
        drawing it in place, for the price of a blit when the card or panel stands still.
        """
        assert self.shadow is not None
        if not self.assets.sprite_cache:
            rr = _rrect(x, y, w, h, r)
            self.draw_shadow(fill, lambda p: self.c.drawRRect(rr, p), rr.rect())
            return
        colour, blur, dx, dy = self.shadow
        fill_alpha = (parse_colour(fill) >> 24 & 255) / 255.0
        a = (colour >> 24 & 255) / 255.0 * fill_alpha * self.alpha
        if a <= 0:
            return
        m = self.c.getTotalMatrix()
        m.preTranslate(x, y)
        sigma = SIGMA(blur)
        tx, ty = m.getTranslateX() + dx, m.getTranslateY() + dy
        ix, iy = math.floor(tx), math.floor(ty)
        fx, fy = round(tx - ix, 3), round(ty - iy, 3)
        sx, kx, ky, sy = (round(v, 6) for v in (m.getScaleX(), m.getSkewX(), m.getSkewY(), m.getScaleY()))
        key = (round(w, 3), round(h, 3), round(r, 3), sx, kx, ky, sy, round(sigma, 3), fx, fy)
        hit = self.assets.shadows.get(key)
        if hit is None:
            mf = skia.Matrix.MakeAll(sx, kx, fx, ky, sy, fy, 0, 0, 1)
            shape = _rrect(0, 0, key[0], key[1], key[2])
            dev = mf.mapRect(shape.rect()).makeOutset(3 * sigma + 3, 3 * sigma + 3).roundOut()
            surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(dev.width(), dev.height()))
            sc = surf.getCanvas()
            sc.clear(0)
            sc.translate(-dev.left(), -dev.top())
            mm = sc.getTotalMatrix()
            mm.preConcat(mf)
            _shadow_layer(sc, mm, 0xFF000000, sigma, 0.0, 0.0, 1.0, shape.rect(), lambda p: sc.drawRRect(shape, p))
            mask = skia.Surface.MakeRaster(skia.ImageInfo.MakeA8(dev.width(), dev.height()))
            mask.getCanvas().clear(0)
            mask.getCanvas().drawImage(surf.makeImageSnapshot(), 0, 0)
            hit = (mask.makeImageSnapshot(), dev.left(), dev.top())
            if len(self.assets.shadows) > 1024:
                self.assets.shadows.clear()
            self.assets.shadows[key] = hit
        img, left, top = hit
        paint = skia.Paint(Color=colour)
        paint.setAlphaf(a)
        c = self.c
        c.save()
        c.resetMatrix()
        c.drawImage(img, ix + left, iy + top, skia.SamplingOptions(), paint)
        c.restore()

    def run(self, ops: list[Op], *, in_sprite: bool = False, plan: Plan | None = None) -> None:
        """Draw ``ops``: each through its handler ``op_<name>`` (the table of renderer.ops);
        with a ``plan``, a static group is blitted from the layer cache instead."""
        c = self.c
        groups = plan.groups if plan is not None else None
        outer, self.in_sprite = self.in_sprite, in_sprite
        i, n = 0, len(ops)
        while i < n:
            op = ops[i]
            i += 1
            name = op[0]
            if groups is not None and name == "s":
                hit = groups.get(i - 1)
                if hit is not None and self.alpha == 1.0 and self.shadow is None and not self.clipped:
                    end, key = hit
                    group = ops[i - 1 : end]
                    area = self.assets.layers.draw(self.c, key, lambda rc: _Exec(rc, self.scene, self.t, self.assets).run(group))
                    if self.dirty is not None and area is not None:
                        self.dirty.append(area)
                    i = end
                    continue
            handler = _RUN.get(name)
            if handler is None:
                raise SceneError(f"unknown scene op {name!r} (op {i - 1} of the list drawn)")
            handler(self, op)
        self.in_sprite = outer

    # one handler per op of renderer.ops.OPS (checked when this module loads) ---------------
    def op_s(self, op: Op) -> None:
        self.c.save()
        self.stack.append((self.alpha, self.shadow, self.clipped))
        self.opened.append(None)

    def op_r(self, op: Op) -> None:
        layer = self.opened.pop() if self.opened else None
        if layer is None:
            self.c.restore()
        else:  # the end of a layer: composite it onto the canvas it began on
            parent, surf, a, plus = layer
            self.c = parent
            if a > 0.0:
                p = skia.Paint()
                p.setAlphaf(a)
                if plus:
                    p.setBlendMode(skia.BlendMode.kPlus)
                parent.save()
                parent.resetMatrix()
                parent.drawImage(surf.makeImageSnapshot(), 0, 0, skia.SamplingOptions(), p)
                parent.restore()
        self.alpha, self.shadow, self.clipped = self.stack.pop()

    def op_tr(self, op: Op) -> None:
        self.c.translate(self.num(op[1]), self.num(op[2]))

    def op_sc(self, op: Op) -> None:
        self.c.scale(self.num(op[1]), self.num(op[2]))

    def op_ro(self, op: Op) -> None:
        self.c.rotate(math.degrees(self.num(op[1])))

    def op_a(self, op: Op) -> None:
        self.alpha *= min(1.0, max(0.0, self.num(op[1])))

    def op_ly(self, op: Op) -> None:
        """A layer as Chromium draws one: a cleared canvas-sized surface without the clip,
        drawn on under the same matrix, composited through the clip at its restore (skia's
        saveLayer would clip each draw inside it, which differs where draws overlap on an
        anti-aliased clip edge)."""
        a = min(1.0, max(0.0, self.num(op[1]))) * self.alpha
        size = self.c.getBaseLayerSize()
        surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(size.width(), size.height()))
        lc = surf.getCanvas()
        lc.clear(0)
        lc.setMatrix(self.c.getTotalMatrix())
        self.stack.append((self.alpha, self.shadow, self.clipped))
        self.opened.append((self.c, surf, a, op[2] == "plus"))
        self.c = lc
        self.alpha, self.shadow, self.clipped = 1.0, None, False  # the layer's own canvas has no clip

    def op_sh(self, op: Op) -> None:
        self.shadow = None if self.in_sprite else (parse_colour(op[1]), float(op[2]), float(op[3]), float(op[4]))

    def op_cl(self, op: Op) -> None:
        _, x, y, w, h, r = op
        self.c.clipRRect(_rrect(x, y, w, h, r), skia.ClipOp.kIntersect, True)
        self.clipped = True

    def op_rr(self, op: Op) -> None:
        if self.alpha <= 0:
            return
        _, x, y, w, h, r, fill, stroke, lw = op
        c = self.c
        rr = _rrect(x, y, w, h, r)
        if self.dirty is not None:
            self.mark(rr.rect(), lw / 2 + 1)
        if self.shadow is not None and isinstance(fill, str):
            self.rr_shadow(x, y, w, h, r, fill)
        elif self.shadow is not None and fill is not None:
            self.draw_shadow(fill, lambda p: c.drawRRect(rr, p), rr.rect())
        pf = self.paint(fill)
        if pf is not None:
            c.drawRRect(rr, pf)
        ps = self.paint(stroke, stroke=lw) if lw else None
        if ps is not None:
            if r > 0:
                c.drawRRect(rr, ps)
            else:
                # Chromium strokes a square-cornered roundRect as a path, with coverage in
                # quarter-pixel rows; skia's drawRRect takes its exact rect-frame shortcut,
                # up to 31/255 off on the edges of a rect at a fractional y (measured)
                c.drawPath(_rect_path(x, y, w, h), ps)

    def op_p(self, op: Op) -> None:
        if self.alpha <= 0:
            return
        _, d, fill, stroke, lw = op
        c = self.c
        path = _path(d)
        if self.dirty is not None:
            self.mark(path.getBounds(), lw / 2 + 1)
        self.draw_shadow(fill, lambda p: c.drawPath(path, p), path.getBounds())
        pf = self.paint(fill)
        if pf is not None:
            c.drawPath(path, pf)
        ps = self.paint(stroke, stroke=lw) if lw else None
        if ps is not None:
            c.drawPath(path, ps)

    def op_t(self, op: Op) -> None:
        if self.alpha > 0:
            self.text(op)

    def op_sp(self, op: Op) -> None:
        if self.alpha > 0:
            self.sprite(op)

    def op_im(self, op: Op) -> None:
        if self.alpha <= 0:
            return
        _, image_id, x, y, w, h, fit = op
        img = self.assets.bitmaps.get(image_id)
        if img is None:
            return  # not loaded: nothing, as on the page before the image arrives
        sx, sy, sw, sh, dx, dy, dw, dh = fit_rect(img.width(), img.height(), x, y, w, h, fit)
        if dw <= 0 or dh <= 0:
            return
        dst = skia.Rect.MakeXYWH(dx, dy, dw, dh)
        if self.dirty is not None:
            saved, self.shadow = self.shadow, None
            self.mark(dst, 2.0)
            self.shadow = saved
        # Chromium's Canvas2D draws an image without anti-aliasing unless the transform
        # rotates or skews it or it is under a device pixel wide or tall (its
        # ShouldDrawImageAntialiased); edges then fall on whole pixels (measured: 102/255 off
        # on the edge of a fractionally placed image with anti-aliasing on here)
        m = self.c.getTotalMatrix()
        if m.rectStaysRect():
            ex, ey = (m.getSkewY(), m.getSkewX()) if int(m.getType()) & int(skia.Matrix.kAffine_Mask) else (m.getScaleX(), m.getScaleY())
            aa = dw * abs(ex) < 1 or dh * abs(ey) < 1
        else:
            aa = True
        p = skia.Paint(AntiAlias=aa)
        if self.alpha < 1.0:
            p.setAlphaf(self.alpha)
        # fast constraint: a cropped source samples its neighbours at the edge, as Chromium does
        self.c.drawImageRect(img, skia.Rect.MakeXYWH(sx, sy, sw, sh), dst, _IMAGE_SAMPLING, p, skia.Canvas.kFast_SrcRectConstraint)

    def font(self, key: str, size: float) -> skia.Font:
        f = self.fonts.get((key, size))
        if f is None:
            f = skia.Font(self.assets.typefaces[key], size)
            f.setSubpixel(True)
            f.setHinting(skia.FontHinting.kSlight)
            f.setEdging(skia.Font.Edging.kAntiAlias)
            f.setLinearMetrics(True)
            self.fonts[(key, size)] = f
        return f

    def text(self, op: Op) -> None:
        _, key, size, x, y, text, fill, ls = op
        blob = _blob(key, float(size), text, float(ls), lambda k: self.font(k, float(size)))
        p = self.paint(fill)
        if p is not None:
            if isinstance(fill, str):
                p.setMaskFilter(_text_filter(luminance_index(parse_colour(fill))))
            if self.dirty is not None:
                self.mark(blob.bounds().makeOffset(float(x), float(y)), 2.0)
            self.c.drawTextBlob(blob, float(x), float(y), p)

    def sprite(self, op: Op) -> None:
        _, sid, x, y, s = op
        ops = self.scene.defs[sid]
        c = self.c
        c.save()
        c.translate(x, y)
        if s != 1:
            c.scale(s, s)
        if self.dirty is not None:
            saved_shadow, self.shadow = self.shadow, None
            self.mark(_SPRITE_BOUNDS, 2.0)
            self.shadow = saved_shadow
        saved = (self.alpha, self.shadow, self.clipped)
        self.shadow = None
        if not self.assets.sprite_cache or self.alpha < 1.0:
            self.stack.append(saved)
            self.run(ops, in_sprite=True)
            self.stack.pop()
        else:
            self.cached_sprite(sid, ops)
        self.alpha, self.shadow, self.clipped = saved
        c.restore()

    def cached_sprite(self, sid: str, ops: list[Op]) -> None:
        """Draw a sprite (alpha 1, no shadow) so that its pixels depend on this frame alone.

        Under a plain scale plus translation with equal scales, the sprite is always drawn as
        an image rasterised at the translation's sub-pixel fraction and blitted at the integer
        part (:meth:`make_image`), whether that image comes from the cache or is made for this
        draw only: the cache decides the cost, never the pixels.  (Drawing a card's vectors
        straight onto the frame instead blends each op with what is under it, a different
        rounding: up to 10/255 off, and which way a card was drawn depended on how often it
        had missed the cache before.)  An image is kept when the same (sprite, scale,
        fraction) is asked for a second time, so a moving card, which never repeats a
        fraction, does not fill the cache.  Other transforms draw a recorded picture, and a
        sprite that references a track draws its vectors at ``t``.
        """
        c = self.c
        m = c.getTotalMatrix()
        key_ops = self.assets.content_id(ops)
        if self.assets.animated(key_ops, ops):
            self.run(ops, in_sprite=True)
            return
        if m.isScaleTranslate() and m.getScaleX() == m.getScaleY():
            s = m.getScaleX()
            tx, ty = m.getTranslateX(), m.getTranslateY()
            ix, iy = math.floor(tx), math.floor(ty)
            fx, fy = tx - ix, ty - iy
            key = (sid, key_ops, s, fx, fy)
            images = self.assets.images
            hit = images.get(key)
            if hit is None:
                hit = self.make_image(ops, s, fx, fy)
                seen = self.assets.seen
                if key in seen:
                    seen.discard(key)
                    if len(images) >= self.assets.max_images:
                        images.clear()
                    images[key] = hit
                else:
                    if len(seen) >= 4 * self.assets.max_images:
                        seen.clear()
                    seen.add(key)
            img, ox, oy = hit
            c.save()
            c.resetMatrix()
            c.drawImage(img, ix - ox, iy - oy)
            c.restore()
            return
        pic = self.assets.pictures.get((sid, key_ops))
        if pic is None:
            rec = skia.PictureRecorder()
            rc = rec.beginRecording(_SPRITE_BOUNDS)
            _Exec(rc, self.scene, self.t, self.assets).run(ops, in_sprite=True)
            pic = rec.finishRecordingAsPicture()
            self.assets.pictures[(sid, key_ops)] = pic
        c.drawPicture(pic)

    def make_image(self, ops: list[Op], s: float, fx: float, fy: float) -> tuple[skia.Image, int, int]:
        """The sprite ``ops`` at scale ``s`` and sub-pixel offset (``fx``, ``fy``) as an image
        with a 3 px margin; a function of its arguments only (the sprite references no track)."""
        pad = 3
        w = int(math.ceil(104 * s)) + 2 * pad
        h = int(math.ceil(144 * s)) + 2 * pad
        surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(w, h))
        sc = surf.getCanvas()
        sc.clear(0)
        sc.translate(pad + fx, pad + fy)
        sc.scale(s, s)
        _Exec(sc, self.scene, self.t, self.assets).run(ops, in_sprite=True)
        return surf.makeImageSnapshot(), pad, pad


def _has_track(value: Any) -> bool:
    """Whether a (nested) op value references a track: ``{"k": n}`` anywhere in it."""
    if isinstance(value, dict):
        return True
    if isinstance(value, list):
        return any(_has_track(v) for v in value)
    return False


def paint_lin(spec: list[Any]) -> skia.Shader:
    """The ``lin`` paint: a linear gradient in user space."""
    _, x0, y0, x1, y1, stops = spec
    return skia.GradientShader.MakeLinear(
        [skia.Point(x0, y0), skia.Point(x1, y1)],
        [parse_colour(c) for _, c in stops],
        [float(s) for s, _ in stops],
    )


#: the executor's dispatch, from the op and paint tables: refuses to load when they differ
require_handlers("op", OP, names_in(_Exec, "op_"), "renderer.raster")
_RUN: dict[str, Callable[[_Exec, Op], None]] = {name: getattr(_Exec, "op_" + name) for name in OP}
require_handlers("paint", (p.name for p in PAINTS), (k[6:] for k in globals() if k.startswith("paint_")), "renderer.raster")
_PAINT: dict[str, Callable[[list[Any]], skia.Shader]] = {p.name: globals()["paint_" + p.name] for p in PAINTS}


@lru_cache(maxsize=8)
def _text_filter(index: int) -> skia.MaskFilter:
    return skia.TableMaskFilter.Create(list(coverage_table(index)))


#: Chromium's Canvas2D drawImage with the default imageSmoothingQuality "low": bilinear, no mipmaps
_IMAGE_SAMPLING = skia.SamplingOptions(skia.FilterMode.kLinear, skia.MipmapMode.kNone)

#: generous user-space bounds of a sprite (cards are 100 x 140; see renderer.cardart)
_SPRITE_BOUNDS = skia.Rect(-4, -4, 200, 200)

_BLOBS: dict[tuple[str, float, str, float], skia.TextBlob] = {}


def _blob(key: str, size: float, text: str, ls: float, font: Any) -> skia.TextBlob:
    """One positioned blob of ``text``: a run per font (Barlow, then the fallback where needed).

    ``font(key)`` gives the skia font of a key at this size.
    """
    k = (key, size, text, ls)
    blob = _BLOBS.get(k)
    if blob is None:
        sh = shape(key, text)
        keys = sh.fonts or (key,) * len(sh.glyphs)
        b = skia.TextBlobBuilder()
        i, n = 0, len(sh.glyphs)
        while i < n:
            j = i
            while j < n and keys[j] == keys[i]:
                j += 1
            pts = [skia.Point(sh.x[g] * size + ls * g, sh.y[g] * size) for g in range(i, j)]
            b.allocRunPos(font(keys[i]), list(sh.glyphs[i:j]), pts)
            i = j
        blob = b.make()
        if len(_BLOBS) > 20000:
            _BLOBS.clear()
        _BLOBS[k] = blob
    return blob


def raster(scene: Scene, t: float, assets: Assets | None = None, *, layer: Scene | None = None, layer_t: float = 0.0) -> skia.Image:
    """Draw ``scene`` at scene time ``t`` into a new premultiplied N32 image, and ``layer``
    (the analysis layer, :class:`renderer.onair.OnAir`) over it at its own time ``layer_t``.

    The surface is reused between calls of the same size; only the areas the previous frame
    drew on it are cleared (same pixels as clearing all of it, for a fraction of the cost).
    The layer is drawn as the page player's ``_drawLayer`` draws it: from a reset canvas
    state, op by op (no static groups), at ``max(0, layer_t)``.
    """
    assets = assets or default_assets()
    size = (scene.width, scene.height)
    surf = assets.surfaces.get(size)
    if surf is None:
        surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(scene.width, scene.height))
        assets.surfaces[size] = surf
    canvas = surf.getCanvas()
    canvas.restoreToCount(1)
    canvas.resetMatrix()
    bg = parse_colour(scene.background) if scene.background else 0
    prev = assets.dirty.pop(size, None)
    if prev is not None and prev[0] == bg and len(prev[1]) < 256:
        # the areas as one region, cleared once: they overlap (a panel, its shadow, the
        # cards on it), and clearing each on its own wrote the same pixels many times over
        # (about 33 areas a game frame; measured 5 % off a 1080p frame's raster)
        region = skia.Region()
        for area in prev[1]:
            region.op(area, skia.Region.kUnion_Op)
        canvas.save()
        canvas.clipRegion(region)
        canvas.clear(bg)
        canvas.restore()
    else:
        canvas.clear(bg)
    ex = _Exec(canvas, scene, t, assets)
    ex.dirty = []
    plan = assets.layers.plan_of(scene.ops, scene.defs) if assets.sprite_cache else None
    ex.run(scene.ops, plan=plan)
    if layer is not None and layer.ops:
        canvas.restoreToCount(1)
        canvas.resetMatrix()
        lx = _Exec(canvas, layer, max(0.0, layer_t), assets)
        lx.dirty = ex.dirty
        lx.run(layer.ops)
    assets.dirty[size] = (bg, ex.dirty)
    return surf.makeImageSnapshot()


def to_rgba(image: skia.Image, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
    """Straight-alpha RGBA (H x W x 4, uint8), as video encoders and PIL expect (into ``out``
    when given)."""
    return read_straight(image, out)


def to_argb(image: skia.Image, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
    """Straight-alpha ARGB (H x W x 4, uint8: A, R, G, B in memory), the qtrle encoder's own
    pixel format, so the encoder gets it without a conversion (into ``out`` when given)."""
    return read_straight(image, out, argb=True)


def read_straight(image: skia.Image, out: npt.NDArray[np.uint8] | None = None, *, argb: bool = False) -> npt.NDArray[np.uint8]:
    """Straight-alpha pixels of ``image`` (skia's unpremultiplying readback): RGBA, or ARGB
    with ``argb`` (read as BGRA, then byte-swapped per pixel: one pass of numpy, against
    swscale's conversion at about five times the cost)."""
    w, h = image.width(), image.height()
    arr = out if out is not None else np.empty((h, w, 4), dtype=np.uint8)
    colour = skia.kBGRA_8888_ColorType if argb else skia.kRGBA_8888_ColorType
    if not image.readPixels(skia.ImageInfo.Make(w, h, colour, skia.kUnpremul_AlphaType), arr, w * 4, 0, 0):
        raise RuntimeError("skia readPixels failed")
    if argb:
        arr.view(np.uint32).byteswap(inplace=True)  # B G R A -> A R G B
    return arr


def to_premul(image: skia.Image) -> npt.NDArray[np.uint8]:
    """Premultiplied RGBA (for parity checks: compare premultiplied values)."""
    info = skia.ImageInfo.Make(image.width(), image.height(), skia.kRGBA_8888_ColorType, skia.kPremul_AlphaType)
    arr = np.empty((image.height(), image.width(), 4), dtype=np.uint8)
    image.readPixels(info, arr, image.width() * 4, 0, 0)
    return arr


def save_png(image: skia.Image, path: str | Path) -> None:
    """Write a straight-alpha PNG (whatever the name's extension: ``frame -o shot`` too)."""
    from PIL import Image

    Image.fromarray(to_rgba(image), "RGBA").save(str(path), format="PNG", optimize=False, compress_level=6)
