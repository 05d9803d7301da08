"""What several commands share: the job options of ``render``, ``capture`` and
``composite`` (read into :class:`overlay.video.job.JobOptions`), ``--analysis``, and the
progress bar and Ctrl+C handling of a command that writes frames."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["add_job_arguments", "add_window_arguments", "add_analysis_argument", "progress", "run_frames"]


def add_job_arguments(p: argparse.ArgumentParser) -> None:
    """The options saying what to draw and when (shared by render, capture, composite and
    frame, whose ``--at`` is a time of the video they make)."""
    p.add_argument("--fps", default="30", help="frames per second (default 30; 29.97 and 30000/1001 are exact)")
    p.add_argument("--size", default=None, help="WxH (default: the view's size, 1920x1080)")
    p.add_argument("--channel-settings", default=None, help="a channel settings JSON document (timing, theme, per-output views)")
    p.add_argument("--output-name", default="program", choices=("program", "preview", "clean"), help="which output's view of --channel-settings (default program)")
    p.add_argument("--view", default=None, help="a View JSON file, or an EGN file with legacy Renderer 'views'")
    p.add_argument("--theme", default=None, help="a Theme JSON file")
    p.add_argument("--timing", default=None, help="a Timing JSON file")
    p.add_argument("--deals", default=None, help="only these deals, 1-based as inspect lists them: 3, 3-5")
    p.add_argument("--match-game", type=int, default=None, metavar="N",
                   help="of a match file (.emn): its game N, from 1, drawn as the pages draw it ('GAME 2 OF 3' on the title's last line)")
    p.add_argument("--sync", default=None, help="a timing file (or an old EGN file with 'timings') placing steps at match-video times")
    p.add_argument("--uploads", default=None, type=Path, help="folder of the images the studio uploaded (default: DATA/uploads of the server's data folder), for photos and logos named by --channel-settings")


def add_window_arguments(p: argparse.ArgumentParser) -> None:
    """``--from``/``--to``: a piece of a game's video (render and capture of a game file)."""
    p.add_argument("--from", dest="start", default=None, metavar="TIME",
                   help="start at this time of the whole video (seconds, or [h:]mm:ss[.fff] as an editor's timeline shows it); its frames are the whole video's")
    p.add_argument("--to", dest="end", default=None, metavar="TIME", help="end before this time of the whole video (default: its end)")


def add_analysis_argument(p: argparse.ArgumentParser) -> None:
    """``--analysis [full|public|none]`` (render, capture and frame)."""
    p.add_argument(
        "--analysis",
        nargs="?",
        const="full",
        default=None,
        choices=("full", "public", "none"),
        help="draw the analysis elements (win-probability bar and graph, best play, play quality, bidding table), computed for each step; "
        "public: only what the clean output may show (also the default with --output-name clean); none: not drawn. "
        "Default: as --channel-settings turn analysis on for the output (off without them)",
    )


def progress(total: int | None, *, desc: str, unit: str = "frame") -> Any:
    """A progress bar on a terminal (frames, frames/s, time left); silent in a pipe."""
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, dynamic_ncols=True, smoothing=0.1)


def run_frames(
    writer: Any,
    frames: Iterable[Any],
    *,
    total: int | None,
    desc: str,
    on_interrupt: str,
    write: Callable[[Any, Any], int | None] | None = None,
    progress_file: str | None = None,
) -> int:
    """Write every frame of ``frames`` with a progress bar; Ctrl+C keeps or removes the file.
    With ``progress_file``, ``DONE TOTAL`` (frames) is written to that file a few times a
    second, for a program watching the render (the studio's render jobs).

    Returns the exit code (0, or 130 after Ctrl+C) and says on stderr what was left.
    """
    import time

    put = write or (lambda w, f: w.write(f))  # returns the frames it wrote (None: one)
    bar = progress(total, desc=desc)
    done, told = 0, 0.0

    def tell(final: bool = False) -> None:
        nonlocal told
        if progress_file is None:
            return
        now = time.monotonic()
        if final or now - told >= 0.25:
            told = now
            tmp = f"{progress_file}.part"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(f"{done} {total or 0}\n")
            os.replace(tmp, progress_file)

    try:
        for frame in frames:
            n = put(writer, frame)
            bar.update(1 if n is None else n)
            done += 1 if n is None else n
            tell()
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
    tell(final=True)
    return 0
