"""``euchre-overlay frame GAME --step N``: one PNG of a game state."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..video.job import load_view, parse_size
from .options import add_analysis_argument


def register(sub: Any) -> None:
    p = sub.add_parser("frame", help="render one frame of a game state to PNG")
    p.add_argument("game", help="a .egn/.egnb file")
    p.add_argument("--step", type=int, required=True, help="timeline step index (negative counts from the end)")
    p.add_argument("--t", type=float, default=None, help="seconds into the step (default: the settled frame)")
    p.add_argument("--view", default=None, help="a View JSON file, or an EGN file with legacy Renderer 'views'")
    p.add_argument("--size", default=None, help="output size WxH, e.g. 1280x720 (default: the view's size)")
    p.add_argument("-o", "--output", required=True, help="PNG path")
    add_analysis_argument(p)
    p.set_defaults(func=run_frame)


def run_frame(args: argparse.Namespace) -> int:
    from engine.load import load_game
    from renderer.extras import build_broadcast_scene
    from renderer.raster import raster, save_png
    from renderer.statboard import needs_stats, stats_book

    game = load_game(Path(args.game).read_bytes(), source=Path(args.game).name)
    steps = game.timeline.steps
    if not steps:
        raise OSError(f"{args.game}: the game has no steps")
    n = args.step if args.step >= 0 else len(steps) + args.step
    if not 0 <= n < len(steps):
        raise OSError(f"--step {args.step}: the game has steps 0..{len(steps) - 1}")
    view = load_view(args.view) if args.view else None
    # as a page and `render` draw it: the view's extras too, statistics included
    stats = stats_book(game.timeline).at(n) if view is not None and needs_stats(view.extras) else None
    scene = build_broadcast_scene(steps[n], view, title=game.timeline.title, size=parse_size(args.size), stats=stats)
    if args.analysis is not None:
        from renderer.analysis import GameAnalysis, build_analysis_layer, compose
        from renderer.view import default_view

        frames = GameAnalysis(steps, game.document.metadata.ruleset, public=args.analysis == "public")
        layer = build_analysis_layer(steps[n], view or default_view(), frames(n), size=parse_size(args.size), public=args.analysis == "public")
        scene = compose(scene, layer)
    t = scene.duration if args.t is None else args.t
    save_png(raster(scene, t), args.output)
    return 0
