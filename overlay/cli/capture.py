"""``euchre-overlay capture GAME_OR_CHANNEL_OR_URL -o OUT``: the page, captured by Chromium.

``--mode deterministic`` (default): a game file is drawn by the page's player through the
OGraf graphic's ``goToTime``, frame by frame, screenshot with a transparent background
(same schedule, settings and output formats as ``render``); a channel or page URL has its
page clock stopped and stepped with ``renderAt(t)`` over the scene on screen.
``--mode live``: records the channel's page as it plays (screencast with alpha).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["register", "run_capture"]


def register(sub: Any) -> None:
    from ..video.writer import CODECS
    from .options import add_analysis_argument, add_job_arguments, add_window_arguments

    p = sub.add_parser(
        "capture",
        help="capture the overlay page headlessly (Chromium) into a video with alpha",
        description="Deterministic: the page's clock stepped frame by frame.  Live: what the live page shows.",
    )
    p.add_argument("source", help="a game file (deterministic), a channel id, or an overlay page URL")
    p.add_argument("-o", "--output", required=True, help="output file (a folder for --codec png)")
    p.add_argument("--codec", choices=list(CODECS), default="qtrle", help="as for render (default qtrle)")
    p.add_argument("--mode", choices=("deterministic", "live"), default="deterministic")
    p.add_argument("--duration", type=float, default=None, help="seconds to record (a channel or URL; live runs until Ctrl+C without it)")
    p.add_argument("--server", default="http://127.0.0.1:8765", help="server of a channel id (default http://127.0.0.1:8765)")
    p.add_argument("--token", default=None, help="API token, for the preview output (default: $EUCHRE_OVERLAY_TOKEN)")
    p.add_argument("--background", default=None, help="draw over this colour (#rrggbb); h264 defaults to black")
    p.add_argument("--on-interrupt", choices=("keep", "remove"), default="keep", help="Ctrl+C keeps a playable file (default) or removes it")
    add_job_arguments(p)
    add_window_arguments(p)
    add_analysis_argument(p)
    p.set_defaults(func=run_capture)


def run_capture(args: argparse.Namespace) -> int:
    from ..browser.capture import GraphicCapture, LiveCapture, PageClockCapture, page_url
    from ..video.job import JobOptions, load_job, parse_size
    from ..video.writer import CODECS, VideoWriter, parse_fps
    from .options import run_frames

    codec = CODECS[args.codec]
    is_file = Path(args.source).is_file()
    if is_file and args.mode == "live":
        raise OSError("--mode live records a running channel's page: give a channel id or a page URL")
    if is_file:
        args.game = args.source
        job = load_job(JobOptions.of(args))
        sched = job.schedule
        total: int | None = sched.frames(job.fps)
        frames = job.frames()
        cap: Any = GraphicCapture(
            job.size,
            scene=lambda i: frames.on_air(i).dumps(),
            starts=list(sched.starts),
            first=sched.first,
            last=sched.last,
            fps=float(job.fps),
            images=job.images(),
        )
        size, fps = job.size, job.fps
    else:
        if args.start is not None or args.end is not None:
            raise OSError("--from/--to cut a game file's video: a channel's page is recorded for --duration")
        try:
            fps = parse_fps(args.fps)
        except ValueError as exc:
            raise OSError(f"--fps: {exc}") from None
        size = parse_size(args.size) or (1920, 1080)
        url = page_url(args.source, server=args.server, output=args.output_name, size=size, token=args.token or os.environ.get("EUCHRE_OVERLAY_TOKEN"))
        if args.mode == "deterministic" and args.duration is None:
            raise OSError("--duration is needed to capture a channel's page deterministically")
        cap = PageClockCapture(url, size) if args.mode == "deterministic" else LiveCapture(url, size)
        total = None if args.duration is None else max(1, round(args.duration * fps))
    try:
        writer = VideoWriter(Path(args.output), codec, fps=fps, size=size, background=args.background)
    except ValueError as exc:
        raise OSError(str(exc)) from None

    def put(w: Any, rgba: Any) -> None:
        w.write_rgba(w.over_background(rgba))

    with cap:
        if isinstance(cap, LiveCapture):
            items: Iterator[Any] = cap.frames(fps=float(fps), duration=args.duration)
        else:
            n_frames = total or 0

            def stepped() -> Iterator[Any]:
                for n in range(n_frames):
                    t = sched.time_of(n, fps) if is_file else n / float(fps)
                    yield cap.frame(t)

            items = stepped()
        code = run_frames(writer, items, total=total, desc=f"capture {args.mode}", on_interrupt=args.on_interrupt, write=lambda w, f: put(w, f))
    if isinstance(cap, LiveCapture) and code == 0:
        print(f"euchre-overlay: {cap.received} screencast frames received for {writer.frames} written", file=sys.stderr)
    return code
