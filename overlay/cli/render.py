"""``euchre-overlay render GAME -o OUT``: the broadcast graphics as a video file with alpha.

Skia frames go straight into PyAV in this process (no browser).  Step start times are the
overlay Director's (the Timing model's ``run_time + hold`` per step, as a channel plays
them), or a match video's timing file with ``--sync``.  The job itself is
:mod:`overlay.video.job`'s; the options and the progress bar are :mod:`overlay.cli.options`'.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..video.batch import GameInput
from ..video.job import Job, JobOptions, load_job
from .options import add_analysis_argument, add_job_arguments, add_window_arguments, progress, run_frames

__all__ = ["register", "run_render"]


def register(sub: Any) -> None:
    from ..video.writer import CODECS

    p = sub.add_parser(
        "render",
        help="render a game to a video with alpha (qtrle .mov, VP9 .webm, ProRes 4444, PNG sequence, H.264)",
        description="Skia frames straight into PyAV.  The same game and settings give the same frames on any run.",
    )
    p.add_argument("game", help="a .egn/.egnb/.emn file (a match: a video per game into a folder, or one game with --match-game N)")
    p.add_argument("-o", "--output", required=True, help="output file (a folder for --codec png)")
    p.add_argument("--codec", choices=list(CODECS), default="qtrle", help="qtrle (default, lossless alpha), vp9, prores (4444), png (sequence), h264 (no alpha)")
    add_job_arguments(p)
    add_window_arguments(p)
    p.add_argument("--background", default=None, help="draw over this colour (#rrggbb); h264 defaults to black")
    p.add_argument("--on-interrupt", choices=("keep", "remove"), default="keep", help="Ctrl+C keeps a playable file of what was written (default) or removes it")
    p.add_argument("--progress-file", default=None, metavar="FILE", help="write 'DONE TOTAL' (frames) to FILE a few times a second (for a program watching the render)")
    p.add_argument("--workers", type=int, default=None, help="processes drawing frames beside the encoder (default: one per core for a render of 8 s or more; 0: draw in this process)")
    add_analysis_argument(p)
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help="render as Ray tasks on the cluster at ADDRESS (default: a local one); GAME may be a folder of games or a match file, OUT is then a folder")
    p.add_argument("--split-seconds", type=float, default=120.0, help="with --ray: cut a game longer than this at deal starts, one task per piece (default 120; 0: one task per game)")
    p.add_argument("--retries", type=int, default=2, help="with --ray: how many times a failed task is retried (default 2)")
    p.set_defaults(func=run_render)


def run_render(args: argparse.Namespace) -> int:
    from ..video.batch import collect_games
    from ..video.writer import CODECS, VideoWriter

    if args.ray is not None:
        return run_ray(args)
    codec = CODECS[args.codec]
    out = Path(args.output)
    path = Path(args.game)
    if path.is_dir() and args.match_game is not None:
        raise OSError(f"--match-game picks a game of one match file; {path} is a folder")
    if path.is_dir() or (path.suffix.lower() == ".emn" and args.match_game is None):
        games, refused = collect_games(path, out, suffix=codec.suffix)
        return run_batch(args, games, refused)
    job = load_job(JobOptions.of(args))
    if codec.suffix and out.suffix.lower() != codec.suffix and not (codec.name == "prores" and out.suffix.lower() == ".mov"):
        print(f"euchre-overlay: note: {codec.name} is usually written to a {codec.suffix} file", file=sys.stderr)
    try:
        writer = VideoWriter(out, codec, fps=job.fps, size=job.size, background=args.background)
    except ValueError as exc:
        raise OSError(str(exc)) from None
    if job.video_url:
        print(f"euchre-overlay: synced to the match video {job.video_url}", file=sys.stderr)
    game = GameInput(path.name, path.read_bytes(), out)
    return _write_job(job, writer, game=game, args=args, desc=f"render {codec.name}")


def _write_job(job: Job, writer: Any, *, game: GameInput, args: argparse.Namespace, desc: str) -> int:
    """Every frame of ``job`` into ``writer`` (progress bar, Ctrl+C as :func:`run_frames`):
    drawn by worker processes beside the encoder (:mod:`overlay.video.parallel`, ``--workers``)
    or in this process."""
    from ..video.parallel import RenderWorkerError, auto_workers, job_frames, plan_workers, shm_room, write_item

    total = job.schedule.frames(job.fps)
    plan = plan_workers(auto_workers(total) if args.workers is None else max(0, args.workers), job.size, shm_room())
    if plan.note is not None:
        print(f"euchre-overlay: note: {plan.note}", file=sys.stderr)
    try:
        with job_frames(job, game, workers=plan.workers, codec=writer.codec.name, background=args.background) as frames:
            return run_frames(writer, frames, total=total, desc=desc, on_interrupt=args.on_interrupt, write=write_item,
                              progress_file=getattr(args, "progress_file", None))
    except RenderWorkerError as exc:  # said in the command's own words (the file is removed as for any failure)
        raise OSError(f"{game.name}: {exc}") from None


def run_batch(args: argparse.Namespace, games: list[Any], refused: list[tuple[str, str]]) -> int:
    """``render`` of a folder or a match file in this process: game after game, each into
    the file :func:`overlay.video.batch.collect_games` names (the outputs of ``render --ray``); a
    game that cannot be drawn is reported by name and the others are still written (exit 2
    when one was not)."""
    from ..video.batch import load
    from ..video.writer import CODECS, VideoWriter

    if args.sync:
        raise OSError("--sync places one game's steps: it cannot apply to several games")
    codec = CODECS[args.codec]
    failed: dict[str, str] = dict(refused)
    written = 0
    for game in games:
        try:
            job = load_job(JobOptions.of(args), loaded=load(game), which=game.game)
            writer = VideoWriter(game.output, codec, fps=job.fps, size=job.size, background=args.background)
        except (OSError, ValueError) as exc:  # EgnError is a ValueError: named by the game
            failed[game.name] = str(exc)
            continue
        code = _write_job(job, writer, game=game, args=args, desc=f"{game.name}: render {codec.name}")
        if code:
            return code  # Ctrl+C: the games before are written, this one as --on-interrupt says
        written += 1
    for name, reason in failed.items():
        print(f"euchre-overlay: render: {name}: not written: {reason}", file=sys.stderr)
    print(f"euchre-overlay: render: {written} written, {len(failed)} failed", file=sys.stderr)
    return 2 if failed else 0


def run_ray(args: argparse.Namespace) -> int:
    """``render --ray``: every game of GAME (a folder, a match file or one game) as Ray tasks.

    Writes what ``render`` writes for each game (one game: OUT itself; several: OUT/<name>),
    with the same progress bar over all frames; prints the retried tasks and the games not
    written, and exits with 2 when a game was not written.
    """
    from ..video.batch import collect_games, game_spec, load
    from ..video.rayrender import print_report, render_batch, start_ray
    from ..video.writer import CODECS

    if args.sync and Path(args.game).is_dir():
        raise OSError("--sync places one game's steps: it cannot apply to a folder")
    codec = CODECS[args.codec]
    if args.retries < 0:
        raise OSError("--retries: expected 0 or more")
    games, refused = collect_games(Path(args.game), Path(args.output), suffix=codec.suffix)
    specs, outputs = [], []
    failed: dict[str, str] = dict(refused)
    for game in games:
        try:
            job = load_job(JobOptions.of(args), loaded=load(game), which=game.game)
            if codec.encoder in ("libx264", "libvpx-vp9") or codec.pix_fmt.startswith("yuv"):
                if job.size[0] % 2 or job.size[1] % 2:
                    raise OSError(f"{codec.name} needs an even width and height, got {job.size[0]}x{job.size[1]}")
            specs.append(game_spec(game, job, codec=codec.name, background=args.background))
            outputs.append(game.output)
        except (OSError, ValueError) as exc:  # EgnError is a ValueError: named by the game
            failed[game.name] = str(exc)
    total = sum(s.frames for s in specs)
    split = int(args.split_seconds * float(specs[0].fps)) if specs else 0
    started = start_ray(args.ray or None)
    bar = progress(total, desc=f"render {codec.name}")
    try:
        report = render_batch(specs, outputs, split_frames=split, retries=args.retries, bar=bar)
    except KeyboardInterrupt:
        bar.close()
        print("euchre-overlay: interrupted: the games already finished are written, no partial file is left", file=sys.stderr)
        return 130
    finally:
        bar.close()
        if started:
            import ray

            ray.shutdown()
    report.failed = {**failed, **report.failed}
    print_report(report)
    return 2 if report.failed else 0

