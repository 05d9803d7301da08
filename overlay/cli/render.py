"""``euchre-overlay render GAME -o OUT``: the broadcast graphics as a video file with alpha.

Skia frames go straight into PyAV in this process (no browser).  Step start times are the
overlay Director's (the Timing model's ``run_time + hold`` per step, as a channel plays
them), or a match video's timing file with ``--sync``.  The helpers here (:func:`load_job`,
:func:`progress`, :func:`run_frames`) are shared by ``capture`` and ``composite``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

__all__ = ["register", "run_render", "Job", "load_job", "add_job_arguments", "progress", "run_frames", "parse_deals"]


def register(sub: Any) -> None:
    from renderer.export import CODECS

    p = sub.add_parser(
        "render",
        help="render a game to a video with alpha (qtrle .mov, VP9 .webm, ProRes 4444, PNG sequence, H.264)",
        description="Skia frames straight into PyAV.  The same game and settings give the same frames on any run.",
    )
    p.add_argument("game", help="a .egn/.egnb/.emn file")
    p.add_argument("-o", "--output", required=True, help="output file (a folder for --codec png)")
    p.add_argument("--codec", choices=list(CODECS), default="qtrle", help="qtrle (default, lossless alpha), vp9, prores (4444), png (sequence), h264 (no alpha)")
    add_job_arguments(p)
    p.add_argument("--background", default=None, help="draw over this colour (#rrggbb); h264 defaults to black")
    p.add_argument("--on-interrupt", choices=("keep", "remove"), default="keep", help="Ctrl+C keeps a playable file of what was written (default) or removes it")
    from .frame import add_analysis_argument

    add_analysis_argument(p)
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help="render as Ray tasks on the cluster at ADDRESS (default: a local one); GAME may be a folder of games or a match file, OUT is then a folder")
    p.add_argument("--split-seconds", type=float, default=120.0, help="with --ray: cut a game longer than this at deal starts, one task per piece (default 120; 0: one task per game)")
    p.add_argument("--retries", type=int, default=2, help="with --ray: how many times a failed task is retried (default 2)")
    p.set_defaults(func=run_render)


def add_job_arguments(p: argparse.ArgumentParser) -> None:
    """The options saying what to draw and when (shared by render, capture and composite)."""
    p.add_argument("--fps", default="30", help="frames per second (default 30; 29.97 and 30000/1001 are exact)")
    p.add_argument("--size", default=None, help="WxH (default: the view's size, 1920x1080)")
    p.add_argument("--channel-settings", default=None, help="a channel settings JSON document (timing, theme, per-output views)")
    p.add_argument("--output-name", default="program", choices=("program", "preview", "clean"), help="which output's view of --channel-settings (default program)")
    p.add_argument("--view", default=None, help="a View JSON file, or an EGN file with legacy Renderer 'views'")
    p.add_argument("--theme", default=None, help="a Theme JSON file")
    p.add_argument("--timing", default=None, help="a Timing JSON file")
    p.add_argument("--deals", default=None, help="only these deals, 1-based as inspect lists them: 3, 3-5")
    p.add_argument("--sync", default=None, help="a timing file (or an old EGN file with 'timings') placing steps at match-video times")
    p.add_argument("--uploads", default=None, type=Path, help="folder of the images the studio uploaded (default: DATA/uploads of the server's data folder), for photos and logos named by --channel-settings")


@dataclass
class Job:
    """What to draw: the steps, the renderer models and when each step starts."""

    source: str
    steps: Sequence[Any]
    title: str | None
    view: Any
    theme: Any
    timing: Any
    size: tuple[int, int]
    fps: Fraction
    schedule: Any  # renderer.export.Schedule
    video_url: str | None = None
    match: Any = None  # renderer.matchdata.MatchData of --channel-settings
    uploads: Path | None = None  # where the images the scenes name are stored
    timeline: Any = None  # engine.state.Timeline of ``steps``: the statistics extras' numbers
    rules: Any = None  # engine.ruleset.Ruleset of the game (for --analysis)
    analysis: str | None = None  # "full", "public" or None (no analysis drawn)

    def frames(self) -> Any:
        """A :class:`renderer.export.FrameSource` over this job."""
        from studio.uploads import read_images

        from ..batch import frame_source

        folder = self.uploads
        images = None if folder is None else (lambda ids: read_images(folder, ids))
        return frame_source(
            self.steps,
            self.schedule,
            view=self.view,
            theme=self.theme,
            timing=self.timing,
            title=self.title,
            size=self.size,
            match=self.match,
            images=images,
            timeline=self.timeline,
            rules=self.rules,
            analysis=self.analysis,
        )


def parse_deals(text: str | None, steps: Sequence[Any]) -> tuple[int, int] | None:
    """``"3-5"`` -> the first and last step of deals 3..5 (1-based positions)."""
    if not text:
        return None
    try:
        lo_text, _, hi_text = text.partition("-")
        lo, hi = int(lo_text), int(hi_text or lo_text)
    except ValueError:
        raise OSError(f"--deals {text!r}: expected N or N-M such as 3-5") from None
    main = [s for s in steps if s.branch is None]
    deals = sorted({s.deal for s in main})
    if not (1 <= lo <= hi <= len(deals)):
        raise OSError(f"--deals {text!r}: the game has deals 1..{len(deals)}")
    chosen = set(deals[lo - 1 : hi])
    idx = [i for i, s in enumerate(steps) if s.deal in chosen]
    return idx[0], idx[-1]


def _model(path: str | None, cls: Any) -> Any:
    if not path:
        return None
    return cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


def load_job(
    args: argparse.Namespace,
    *,
    size: tuple[int, int] | None = None,
    fps: Fraction | None = None,
    from_zero: bool = False,
    loaded: Any = None,
) -> Job:
    """Load the game and settings named by ``args`` (see :func:`add_job_arguments`).

    Step start times are the Director's (:class:`overlay.director.StepTimes` over
    :func:`overlay.outputs.durations_of`), so a render shows what a channel plays.
    ``loaded`` (an :class:`engine.load.LoadedGame`, e.g. one game of a match file) is
    drawn instead of reading ``args.game``.

    Raises:
        OSError: a file is missing or an option is malformed.
        EgnError: the game or the sync file is refused (names the file and place).
    """
    from engine.load import load_game
    from renderer.export import Schedule, parse_fps, parse_sync, sync_starts
    from renderer.theme import Theme
    from renderer.timing import Timing

    from ..director import StepTimes
    from ..protocol import ChannelSettings
    from ..outputs import RenderSettings, durations_of
    from .frame import load_view, parse_size

    game = loaded if loaded is not None else load_game(Path(args.game).read_bytes(), source=Path(args.game).name)
    source = args.game if loaded is None else loaded.source
    steps = game.timeline.steps
    if not steps:
        raise OSError(f"{source}: the game has no steps")
    view = theme = timing = match = None
    if args.channel_settings:
        rs = RenderSettings(ChannelSettings.model_validate(json.loads(Path(args.channel_settings).read_text(encoding="utf-8"))))
        view, theme, timing, match = rs.view(args.output_name), rs.theme, rs.timing, rs.match
    if args.view:
        view = load_view(args.view)
    theme = _model(args.theme, Theme) or theme
    timing = _model(args.timing, Timing) or timing or Timing()
    durations = durations_of(steps, timing)
    starts = list(StepTimes.of(durations).starts[: len(durations)])
    video_url = None
    if args.sync:
        sync = parse_sync(Path(args.sync).read_bytes(), steps, source=Path(args.sync).name)
        starts = sync_starts(starts, sync.stamps)
        video_url = sync.video_url
    if size is None:
        size = parse_size(args.size)
    if size is None:
        from renderer.view import default_view

        v = view or default_view()
        size = (v.width, v.height)
    try:
        rate = fps or parse_fps(args.fps)
    except ValueError as exc:
        raise OSError(f"--fps: {exc}") from None
    schedule = Schedule.of(starts, durations, steps=parse_deals(args.deals, steps), from_zero=from_zero or bool(args.sync))
    return Job(
        source=source,
        steps=steps,
        title=game.timeline.title,
        view=view,
        theme=theme,
        timing=timing,
        size=size,
        fps=rate,
        schedule=schedule,
        video_url=video_url,
        match=match,
        uploads=_uploads(args),
        timeline=game.timeline,
        rules=game.document.metadata.ruleset,
        analysis=_analysis_mode(args),
    )


def _analysis_mode(args: argparse.Namespace) -> str | None:
    """``--analysis``: full or public; the clean output's view is always public."""
    mode: str | None = getattr(args, "analysis", None)
    if mode is not None and getattr(args, "output_name", None) == "clean":
        return "public"
    return mode


def _uploads(args: argparse.Namespace) -> Path | None:
    """``--uploads``, else the default server data folder's uploads when it exists."""
    folder = getattr(args, "uploads", None)
    if folder is None:
        from ..store import default_data_dir

        folder = default_data_dir() / "uploads"
    return folder if folder.is_dir() else None


def progress(total: int | None, *, desc: str, unit: str = "frame") -> Any:
    """A progress bar on a terminal (frames, frames/s, time left); silent in a pipe."""
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, dynamic_ncols=True, smoothing=0.1)


def run_frames(
    writer: Any,
    frames: Iterator[Any],
    *,
    total: int | None,
    desc: str,
    on_interrupt: str,
    write: Callable[[Any, Any], int | None] | None = None,
) -> int:
    """Write every frame of ``frames`` with a progress bar; Ctrl+C keeps or removes the file.

    Returns the exit code (0, or 130 after Ctrl+C) and says on stderr what was left.
    """
    put = write or (lambda w, f: w.write(f))  # returns the frames it wrote (None: one)
    bar = progress(total, desc=desc)
    try:
        for frame in frames:
            n = put(writer, frame)
            bar.update(1 if n is None else n)
    except KeyboardInterrupt:
        bar.close()
        keep = on_interrupt == "keep"
        writer.abort(keep=keep)
        if keep:
            print(f"euchre-overlay: interrupted: kept {writer.path} ({writer.frames} frames, playable)", file=sys.stderr)
        else:
            print(f"euchre-overlay: interrupted: removed {writer.path}", file=sys.stderr)
        return 130
    except BaseException:
        bar.close()
        writer.abort(keep=False)
        raise
    bar.close()
    writer.close()
    return 0


def run_render(args: argparse.Namespace) -> int:
    from renderer.export import CODECS, VideoWriter

    from ..batch import collect_games

    if args.ray is not None:
        return run_ray(args)
    codec = CODECS[args.codec]
    out = Path(args.output)
    path = Path(args.game)
    if path.is_dir() or path.suffix.lower() == ".emn":
        games, refused = collect_games(path, out, suffix=codec.suffix)
        return run_batch(args, games, refused)
    job = load_job(args)
    if codec.suffix and out.suffix.lower() != codec.suffix and not (codec.name == "prores" and out.suffix.lower() == ".mov"):
        print(f"euchre-overlay: note: {codec.name} is usually written to a {codec.suffix} file", file=sys.stderr)
    try:
        writer = VideoWriter(out, codec, fps=job.fps, size=job.size, background=args.background)
    except ValueError as exc:
        raise OSError(str(exc)) from None
    if job.video_url:
        print(f"euchre-overlay: synced to the match video {job.video_url}", file=sys.stderr)
    return _write_job(job, writer, desc=f"render {codec.name}", on_interrupt=args.on_interrupt)


def _write_job(job: Job, writer: Any, *, desc: str, on_interrupt: str) -> int:
    """Every frame of ``job`` into ``writer`` (progress bar, Ctrl+C as :func:`run_frames`)."""
    src = job.frames()
    total = job.schedule.frames(job.fps)

    def frames() -> Iterator[Any]:
        for n in range(total):
            yield src.image(job.schedule.time_of(n, job.fps))

    return run_frames(writer, frames(), total=total, desc=desc, on_interrupt=on_interrupt)


def run_batch(args: argparse.Namespace, games: list[Any], refused: list[tuple[str, str]]) -> int:
    """``render`` of a folder or a match file in this process: game after game, each into
    the file :func:`overlay.batch.collect_games` names (the outputs of ``render --ray``); a
    game that cannot be drawn is reported by name and the others are still written (exit 2
    when one was not)."""
    from renderer.export import CODECS, VideoWriter

    from ..batch import load

    if args.sync:
        raise OSError("--sync places one game's steps: it cannot apply to several games")
    codec = CODECS[args.codec]
    failed: dict[str, str] = dict(refused)
    written = 0
    for game in games:
        try:
            job = load_job(args, loaded=load(game))
            writer = VideoWriter(game.output, codec, fps=job.fps, size=job.size, background=args.background)
        except (OSError, ValueError) as exc:  # EgnError is a ValueError: named by the game
            failed[game.name] = str(exc)
            continue
        code = _write_job(job, writer, desc=f"{game.name}: render {codec.name}", on_interrupt=args.on_interrupt)
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
    from renderer.export import CODECS

    from ..batch import collect_games, game_spec, load
    from ..rayrender import print_report, render_batch, start_ray

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
            job = load_job(args, loaded=load(game))
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

