"""``euchre-overlay frame GAME --step N``: one PNG of a game state."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any



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


def add_analysis_argument(p: argparse.ArgumentParser) -> None:
    """``--analysis [full|public]`` (render and frame)."""
    p.add_argument(
        "--analysis",
        nargs="?",
        const="full",
        default=None,
        choices=("full", "public"),
        help="draw the analysis elements (win-probability bar and graph, best play, play quality, bidding table), computed for each step; "
        "public: only what the clean output may show (also the default with --output-name clean)",
    )


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
