"""``euchre-overlay frame GAME --step N``: one PNG of a game state; and ``bench render``."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from overlay.cli import bench_target

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo" / "demo.egn"


def register(sub: Any) -> None:
    p = sub.add_parser("frame", help="render one frame of a game state to PNG")
    p.add_argument("game", help="a .egn/.egnb file")
    p.add_argument("--step", type=int, required=True, help="timeline step index (negative counts from the end)")
    p.add_argument("--t", type=float, default=None, help="seconds into the step (default: the settled frame)")
    p.add_argument("--view", default=None, help="a View JSON file, or an EGN file with legacy Renderer 'views'")
    p.add_argument("--size", default=None, help="output size WxH, e.g. 1280x720 (default: the view's size)")
    p.add_argument("-o", "--output", required=True, help="PNG path")
    p.set_defaults(func=run_frame)


def parse_size(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise OSError(f"--size {text!r}: expected WxH such as 1920x1080") from None
    if not (16 <= w <= 7680 and 16 <= h <= 4320):
        raise OSError(f"--size {text!r}: out of range")
    return w, h


def load_view(path: str) -> Any:
    from renderer.legacy import views_from_legacy
    from renderer.view import View

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and "views" in data:
        views = views_from_legacy(data["views"])
        if not views:
            raise OSError(f"{path}: no views")
        return views[0]
    return View.model_validate(data)


def run_frame(args: argparse.Namespace) -> int:
    from engine.load import load_game
    from renderer.build import build_scene
    from renderer.raster import raster, save_png

    game = load_game(Path(args.game).read_bytes(), source=Path(args.game).name)
    steps = game.timeline.steps
    if not steps:
        raise OSError(f"{args.game}: the game has no steps")
    n = args.step if args.step >= 0 else len(steps) + args.step
    if not 0 <= n < len(steps):
        raise OSError(f"--step {args.step}: the game has steps 0..{len(steps) - 1}")
    view = load_view(args.view) if args.view else None
    scene = build_scene(steps[n], view, title=game.timeline.title, size=parse_size(args.size))
    t = scene.duration if args.t is None else args.t
    save_png(raster(scene, t), args.output)
    return 0


def _bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeat", type=int, default=200, help="timed repetitions (default 200)")
    p.add_argument("--size", default="1920x1080", help="output size (default 1920x1080)")


@bench_target("render", help="ms to build a 1080p scene and to rasterise it (with and without sprite caches)", add_arguments=_bench_args)
def bench_render(args: argparse.Namespace) -> dict[str, Any]:
    import os

    from engine.generate import generate_game
    from engine.load import load_game
    from engine.state import StepKind
    from renderer.build import build_scene
    from renderer.raster import Assets, raster, to_rgba

    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    except (AttributeError, OSError):
        pass
    size = parse_size(args.size) or (1920, 1080)
    tl = load_game(json.dumps(generate_game(7)), source="bench").timeline
    # a busy frame: mid-deal, a card in flight, full hands on the table
    state = next(s for s in tl.steps if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 3)
    reps = max(5, int(args.repeat))

    def timed(fn: Any) -> float:
        fn()
        samples = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1000.0)
        return statistics.median(samples)

    build_ms = timed(lambda: build_scene(state, size=size))
    scene = build_scene(state, size=size)
    t = 0.2
    cached = Assets.load(sprite_cache=True)
    uncached = Assets.load(sprite_cache=False)
    raster_cached = timed(lambda: raster(scene, t, cached))
    raster_plain = timed(lambda: raster(scene, t, uncached))
    readback = timed(lambda: to_rgba(raster(scene, t, cached))) - raster_cached
    return {
        "size": f"{size[0]}x{size[1]}",
        "ops": len(scene.ops),
        "scene_json_bytes": len(scene.dumps()),
        "build_ms": round(build_ms, 3),
        "raster_ms_sprite_cache": round(raster_cached, 3),
        "raster_ms_no_cache": round(raster_plain, 3),
        "rgba_readback_ms": round(max(0.0, readback), 3),
        "repeat": reps,
    }
