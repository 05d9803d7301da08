"""``euchre-overlay frame GAME --step N``: one PNG of a game state, as every output draws it.

The frame is what is on air over the step (:class:`renderer.onair.OnAir`: the scene, the
analysis layer, the uploaded images), built by the render job (:mod:`overlay.video.job`)
from the same options as ``render``, so a still and a video of the same settings agree.
"""

from __future__ import annotations

import argparse
from typing import Any

from .options import add_analysis_argument, add_job_arguments


def register(sub: Any) -> None:
    p = sub.add_parser("frame", help="render one frame of a game state to PNG")
    p.add_argument("game", help="a .egn/.egnb file")
    p.add_argument("--step", type=int, required=True, help="timeline step index (negative counts from the end)")
    p.add_argument("--t", type=float, default=None, help="seconds into the step (default: the settled frame)")
    p.add_argument("-o", "--output", required=True, help="PNG path")
    add_job_arguments(p, clock=False)
    add_analysis_argument(p)
    p.set_defaults(func=run_frame)


def run_frame(args: argparse.Namespace) -> int:
    from renderer.onair import draw
    from renderer.raster import save_png

    from ..video.job import JobOptions, load_job

    job = load_job(JobOptions.of(args))
    steps = job.steps
    n = args.step if args.step >= 0 else len(steps) + args.step
    if not 0 <= n < len(steps):
        raise OSError(f"--step {args.step}: the game has steps 0..{len(steps) - 1}")
    src = job.frames()
    on_air = src.on_air(n)
    t = on_air.duration if args.t is None else args.t
    image = draw(on_air, t, src.assets)
    assert image is not None
    save_png(image, args.output)
    return 0
