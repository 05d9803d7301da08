"""``euchre-overlay frame GAME --step N`` (or ``--at TIME``): one PNG of a game state, as
every output draws it.

The frame is what is on air over the step (:class:`renderer.onair.OnAir`: the scene, the
analysis layer, the uploaded images), built by the render job (:mod:`overlay.video.job`)
from the same options as ``render``, so a still and a video of the same settings agree.
``--at`` names a time of ``render``'s video instead (with its ``--fps``, ``--deals`` and
``--sync``): the PNG is the frame that video shows then, pixel for pixel.
"""

from __future__ import annotations

import argparse
from typing import Any

from .options import add_analysis_argument, add_job_arguments


def register(sub: Any) -> None:
    p = sub.add_parser("frame", help="render one frame of a game state to PNG")
    p.add_argument("game", help="a .egn/.egnb file, or a match file (.emn) with --match-game N")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--step", type=int, help="timeline step index (negative counts from the end)")
    which.add_argument("--at", metavar="TIME", default=None,
                       help="the frame render's video shows at this time (seconds or [h:]mm:ss[.fff]; with the same --fps, --deals and --sync)")
    p.add_argument("--t", type=float, default=None, help="with --step: seconds into the step (default: the settled frame)")
    p.add_argument("-o", "--output", required=True, help="PNG path")
    add_job_arguments(p)
    add_analysis_argument(p)
    p.set_defaults(func=run_frame)


def run_frame(args: argparse.Namespace) -> int:
    from renderer.onair import draw
    from renderer.raster import save_png

    from ..video.job import JobOptions, load_job

    job = load_job(JobOptions.of(args))
    if args.at is not None:
        return _frame_at(job, args)
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


def _frame_at(job: Any, args: argparse.Namespace) -> int:
    """``--at``: the video's frame on screen at that time (frame ``floor(time * fps)``), drawn
    as ``render`` draws it; transparent where the video shows nothing yet (a synced pre-roll)."""
    import math
    from fractions import Fraction

    from PIL import Image

    from renderer.raster import save_png

    from ..video.job import parse_clock

    if args.t is not None:
        raise OSError("--t is seconds into a --step: --at names the time itself")
    at = parse_clock(args.at, "--at")
    assert at is not None
    sched, fps = job.schedule, job.fps
    total = sched.frames(fps)
    k = math.floor(Fraction(at) * fps + Fraction(1, 10**9))
    if k >= total:
        raise OSError(f"{job.source}: --at {args.at}: after the video's end ({float(Fraction(total) / fps):g} s, {total} frames)")
    image = job.frames().image(sched.time_of(k, fps))
    if image is None:
        Image.new("RGBA", job.size).save(args.output)  # (0, 0, 0, 0) everywhere
    else:
        save_png(image, args.output)
    return 0
