"""``bench render``: ms to build a 1080p scene and to rasterise it (with and without caches),
and ms per frame of an animated stretch drawn in order from cold caches, as an export draws
it (cards in flight take the sprite path that misses the cache)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..video.job import parse_size
from .timing import median_ms, one_core

__all__ = ["HELP", "add_arguments", "run"]

HELP = "ms to build a 1080p scene and to rasterise it (with and without sprite caches; per frame of an animated stretch from cold caches)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeat", type=int, default=200, help="timed repetitions (default 200)")
    p.add_argument("--size", default="1920x1080", help="output size (default 1920x1080)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    with one_core():
        return _run(args)


def _run(args: argparse.Namespace) -> dict[str, Any]:
    from engine.generate import generate_game
    from engine.load import load_game
    from engine.state import StepKind
    from renderer.build import build_scene
    from renderer.raster import Assets, raster, to_rgba

    size = parse_size(args.size) or (1920, 1080)
    tl = load_game(json.dumps(generate_game(7)), source="bench").timeline
    # a busy frame: mid-deal, a card in flight, full hands on the table
    state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 3)
    reps = max(5, int(args.repeat))

    build_ms = median_ms(lambda: build_scene(state, size=size), reps)
    scene = build_scene(state, size=size)
    t = 0.2
    cached = Assets.load(sprite_cache=True)
    uncached = Assets.load(sprite_cache=False)
    raster_cached = median_ms(lambda: raster(scene, t, cached), reps)
    raster_plain = median_ms(lambda: raster(scene, t, uncached), reps)
    readback = median_ms(lambda: to_rgba(raster(scene, t, cached)), reps) - raster_cached
    # 16 steps around the busy one at 30 frames/s (4 for a quick run), from fresh caches each pass
    span = 8 if reps >= 20 else 2
    scenes = [build_scene(s, size=size) for s in tl.steps[max(0, state.step - span) : state.step + span]]
    frames = [(sc, k / 30) for sc in scenes for k in range(int(sc.duration * 30) + 1)]

    def sequence() -> None:
        fresh = Assets.load(sprite_cache=True)
        for sc, ft in frames:
            raster(sc, ft, fresh)

    passes = 3 if reps >= 20 else 1
    sequence_ms = median_ms(sequence, passes) / len(frames)
    return {
        "size": f"{size[0]}x{size[1]}",
        "ops": len(scene.ops),
        "scene_json_bytes": len(scene.dumps()),
        "build_ms": round(build_ms, 3),
        "raster_ms_sprite_cache": round(raster_cached, 3),
        "raster_ms_no_cache": round(raster_plain, 3),
        "rgba_readback_ms": round(max(0.0, readback), 3),
        "raster_ms_sequence": round(sequence_ms, 3),
        "sequence_frames": len(frames),
        "repeat": reps,
    }
