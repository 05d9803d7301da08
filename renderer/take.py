"""The TAKE transition: one output's picture going from one view to another, as one scene.

A producer puts a new layout on air (the studio's TAKE, a view link, a rundown cue) with a
transition (:class:`renderer.timing.TakeTransition`): a **cut** (the new view at once), a
**mix** (a dissolve: the old picture fades out while the new one fades in, each faded
as a whole, and what both draw alike stays as it is) or a **wipe** (an edge
sweeps left to right, the new picture behind it, the old one ahead of it, with an accent
line on the edge) or a **stinger** (a full panel in the theme's colours sweeps in, covers
the change at half time and sweeps out; a stinger may also go over an unchanged layout, a
rundown cue of its own).  :func:`take_scene` makes that one scene out of the two pictures of the
same step, so every executor draws it as it draws any scene (the page, ``inject`` from the
same messages, the skia raster): nothing else has to know a take is under way.

``start`` is the scene time at which the take began.  A take that began before the scene's
step (a new step arriving during the transition) has a negative start: the tracks then
begin at 0 with the progress reached by then and follow the easing by short linear pieces,
so the picture goes on where the step before left it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .easing import ease
from .scene import Builder, Num, Op, Scene
from .timing import TakeTransition

__all__ = ["take_scene", "in_take"]

#: linear pieces a track is cut into when the take began before the scene's clock
_PIECES = 12


def in_take(transition: TakeTransition, start: float) -> bool:
    """Whether a scene whose clock puts the take's start at ``start`` shows any of it."""
    return transition.style != "cut" and start + transition.run_time > 0.0


def _sampled(b: Builder, start: float, run: float, value: Callable[[float], float]) -> Num:
    """A take begun before the scene's clock (``start`` < 0): ``value`` of the time since the
    take began, in short linear pieces from 0 to the take's end."""
    end = start + run
    keys: list[tuple[float, float] | tuple[float, float, str]] = [(0.0, value(-start))]
    keys += [(end * i / _PIECES, value(end * i / _PIECES - start), "linear") for i in range(1, _PIECES + 1)]
    return b.track(keys)


def _keys(b: Builder, start: float, run: float, ease_name: str, a: float, z: float) -> Num:
    """``a`` at the take's start to ``z`` at its end, on the scene's clock (from 0)."""
    if start >= 0.0:
        return b.track([(start, a), (start + run, z, ease_name)])
    return _sampled(b, start, run, lambda u: a + (z - a) * ease(ease_name, min(u / run, 1.0)))


def _switch(b: Builder, at: float, a: float, z: float) -> Num:
    """``a`` up to scene time ``at``, ``z`` after it (``z`` throughout when ``at`` is past)."""
    return b.track([(at, a), (at, z)]) if at > 0.0 else z


def _shifted(value: Any, by: int) -> Any:
    """An op field with its track references moved by ``by`` (tracks of two scenes in one)."""
    if isinstance(value, dict):
        return {"k": value["k"] + by} if set(value) == {"k"} else value
    if isinstance(value, list):
        return [_shifted(v, by) for v in value]
    return value


def _renamed(ops: list[Op], names: dict[str, str]) -> list[Op]:
    """``ops`` with the sprites in ``names`` drawn under their new names."""
    if not names:
        return ops
    return [[op[0], names.get(op[1], op[1]), *op[2:]] if op[0] == "sp" else op for op in ops]


def take_scene(
    before: Scene,
    after: Scene,
    transition: TakeTransition,
    start: float,
    *,
    accent: str = "#f2c230ff",
    panel: str = "#101624ff",
    image: str | None = None,
) -> Scene:
    """``after`` coming on air over ``before`` by ``transition`` from scene time ``start``
    (both scenes of one step, one canvas size; pure).  ``accent``, ``panel``: the theme's
    colours for the wipe's edge and the stinger; ``image``: the stinger's image (an uploaded
    image id).  A cut, or a take over before the scene's clock starts, is ``after`` itself."""
    if not in_take(transition, start) or (before.width, before.height) != (after.width, after.height):
        return after
    run, name = transition.run_time, transition.ease
    start += 0.0  # (no -0.0 in the tracks)
    W, H = float(after.width), float(after.height)
    b = Builder()
    # the two scenes' tracks side by side: the old scene's first, then the new one's
    b.tracks = [*before.tracks, *after.tracks]
    shift = len(before.tracks)
    b.defs = dict(after.defs)
    names: dict[str, str] = {}
    for sid, ops in before.defs.items():
        if sid in b.defs and b.defs[sid] != ops:
            names[sid] = f"{sid}~before"
        b.defs[names.get(sid, sid)] = ops
    old_ops = _renamed(before.ops, names)
    new_ops = [_shifted(op, shift) for op in after.ops]
    b.fonts = set(before.fonts) | set(after.fonts)
    b.images = set(before.images) | set(after.images)
    b.duration = max(before.duration, after.duration)
    if transition.style == "mix":
        # a dissolve: each picture as one layer (its own panels and cards never show through
        # each other), the new one added to the old at alphas summing to 1, so what both
        # draw alike stays as it is; the pair lands on the page as one layer
        b.layer(1.0)
        b.layer(_keys(b, start, run, name, 1.0, 0.0))
        b.ops.extend(old_ops)
        b.restore()
        b.layer(_keys(b, start, run, name, 0.0, 1.0), "plus")
        b.ops.extend(new_ops)
        b.restore()
        b.restore()
    elif transition.style == "stinger":
        # the old picture until half time, the new one from then, a panel over the change
        half = start + run / 2
        b.save()
        b.alpha(_switch(b, half, 1.0, 0.0))
        b.ops.extend(old_ops)
        b.restore()
        b.save()
        b.alpha(_switch(b, half, 0.0, 1.0))
        b.ops.extend(new_ops)
        b.restore()
        x = _stinger_x(b, start, run, name, W)
        b.save()
        b.translate(x, 0)
        b.rrect(0, 0, W, H, 0, panel[:7] + "ff", None, 0)  # opaque: neither picture shows through
        bar = max(8.0, round(W / 120.0))
        b.rrect(0, 0, bar, H, 0, accent, None, 0)
        b.rrect(W - bar, 0, bar, H, 0, accent, None, 0)
        if image is not None:
            b.image(image, W * 0.25, H * 0.25, W * 0.5, H * 0.5, "contain")
        b.restore()
    else:  # wipe: the edge goes from x = 0 to x = W; new picture left of it, old one right
        edge = _keys(b, start, run, name, 0.0, W)
        back = _keys(b, start, run, name, 0.0, -W)
        # the old picture, clipped to the right of the edge (the clip moves with the edge)
        # (each picture drawn in a layer: the clip cuts the finished picture, its drawing
        # inside stays exactly as without a take)
        b.save()
        b.translate(edge, 0)
        b.clip(0, 0, W, H)
        b.translate(back, 0)
        b.layer(1.0)
        b.ops.extend(old_ops)
        b.restore()
        b.restore()
        # the new picture, clipped to the left of the edge
        b.save()
        b.translate(_keys(b, start, run, name, -W, 0.0), 0)
        b.clip(0, 0, W, H)
        b.translate(_keys(b, start, run, name, W, 0.0), 0)
        b.layer(1.0)
        b.ops.extend(new_ops)
        b.restore()
        b.restore()
        # the edge itself: an accent line, gone once the wipe has crossed
        line = max(4.0, round(W / 320.0))
        b.save()
        b.alpha(b.track(_edge_alpha(start, run)))
        b.translate(edge, 0)
        b.rrect(-line, 0, line + 2, H, 0, accent, None, 0)  # over the seam of the two clips
        b.restore()
    return b.scene(after.width, after.height, background=after.background, duration=max(b.duration, start + run), elements=list(after.elements))


def _stinger_x(b: Builder, start: float, run: float, ease_name: str, W: float) -> Num:
    """The stinger panel's x: in from the left (covering the canvas at half time), out to
    the right, each half eased; a take begun before the scene's clock goes on from there."""
    half = run / 2
    if start >= 0.0:
        return b.track([(start, -W), (start + half, 0.0, ease_name), (start + run, W, ease_name)])

    def x(u: float) -> float:
        return -W + W * ease(ease_name, min(u / half, 1.0)) if u < half else W * ease(ease_name, min((u - half) / half, 1.0))

    return _sampled(b, start, run, x)


def _edge_alpha(start: float, run: float) -> list[tuple[float, float] | tuple[float, float, str]]:
    """The edge line shows while the wipe crosses and is gone at its end."""
    end = start + run
    fade = min(0.08, run / 4)
    return [(max(0.0, end - fade), 1.0), (max(0.0, end), 0.0, "linear")]

