"""Ray render throughput: ``render --ray`` with 1 and 2 local workers against ``render``.

:func:`measure` renders the same folder of generated games (qtrle) three ways and times each
end to end (loading, drawing, encoding, joining, writing): one process game after game
(``render GAME -o OUT`` per game), then ``render FOLDER --ray`` on a local cluster of 1 and of
2 CPUs (the cluster's start is timed apart: a long-lived cluster pays it once).  A fourth run
renders one long game split by deal on 2 workers, which shows what the split costs (the
pieces travel and are joined; a piece draws only its own frames, see :mod:`overlay.video.batch`).

``bench scale`` reports these figures; on its own::

    python -c "from overlay.bench.raybench import measure; print(measure(True))"
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["measure"]


def _games(folder: Path, count: int, deals: int) -> None:
    from engine.generate import generate_game

    for i in range(count):
        (folder / f"game{i + 1:02d}.egn").write_text(json.dumps(generate_game(100 + i, deals=deals)), encoding="utf-8")


def _frames(folder: Path, opts: list[str]) -> int:
    """Frames of every game in ``folder`` at the render options ``opts``."""
    from ..cli import build_parser
    from ..video.job import JobOptions, load_job

    total = 0
    for g in sorted(folder.glob("*.egn")):
        job = load_job(JobOptions.of(build_parser().parse_args(["render", str(g), "-o", "x", *opts])))
        total += job.schedule.frames(job.fps)
    return total


def _ray_run(folder: Path, out: Path, opts: list[str], cpus: int, split_seconds: float) -> tuple[float, float]:
    """(cluster start, batch) seconds of ``render FOLDER --ray`` on a local cluster of ``cpus``."""
    import ray

    from ..cli import main
    from ..video.rayrender import start_ray

    temp = tempfile.mkdtemp(prefix="ray-")
    t0 = time.perf_counter()
    start_ray(None, num_cpus=cpus, temp_dir=temp)
    started = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        code = main(["render", str(folder), "-o", str(out), "--ray", "--split-seconds", str(split_seconds), *opts])
        seconds = time.perf_counter() - t0
        if code != 0:
            raise RuntimeError(f"render --ray exited with {code}")
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
    return started, seconds


def measure(quick: bool) -> dict[str, Any]:
    """Frames/s and games/min of one process, and of Ray with 1 and 2 workers, on one folder.

    ``quick``: 4 games of 2 deals at 640x360, 15 frames/s (2-3 minutes on 2 loaded cores);
    otherwise 6 games of 3 deals at 1920x1080, 30 frames/s.
    """
    from ..cli import main

    count, deals, size, fps = (4, 2, "640x360", "15") if quick else (6, 3, "1920x1080", "30")
    opts = ["--size", size, "--fps", fps, "--uploads", os.devnull]
    out: dict[str, Any] = {
        "ray_games": count,
        "ray_deals_per_game": deals,
        "ray_size": size,
        "ray_fps": int(fps),
        "ray_codec": "qtrle",
        "ray_cpus": os.cpu_count(),
        "ray_load_average_at_start": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory(prefix="raybench-") as tmp:
        root = Path(tmp)
        folder = root / "games"
        folder.mkdir()
        _games(folder, count, deals)
        frames = _frames(folder, opts)
        out["ray_frames"] = frames
        single = root / "single"
        single.mkdir()
        t0 = time.perf_counter()
        for g in sorted(folder.glob("*.egn")):
            if main(["render", str(g), "-o", str(single / f"{g.stem}.mov"), *opts]) != 0:
                raise RuntimeError(f"render {g.name} failed")
        dt = time.perf_counter() - t0
        out["single_process_fps"] = round(frames / dt, 1)
        out["single_process_games_per_min"] = round(count / dt * 60, 2)
        for cpus in (1, 2):
            started, dt = _ray_run(folder, root / f"ray{cpus}", opts, cpus, 0)
            out[f"ray_{cpus}_workers_start_s"] = round(started, 2)
            out[f"ray_{cpus}_workers_fps"] = round(frames / dt, 1)
            out[f"ray_{cpus}_workers_games_per_min"] = round(count / dt * 60, 2)
        out["ray_speedup_2_over_1"] = round(out["ray_2_workers_fps"] / out["ray_1_workers_fps"], 2)
        out["ray_2_workers_over_single"] = round(out["ray_2_workers_fps"] / out["single_process_fps"], 2)
        # one long game cut at deal starts into two pieces on two workers
        long_folder = root / "long"
        long_folder.mkdir()
        _games(long_folder, 1, deals * 2)
        long_frames = _frames(long_folder, opts)
        t0 = time.perf_counter()
        g = next(long_folder.glob("*.egn"))
        if main(["render", str(g), "-o", str(root / "long_single.mov"), *opts]) != 0:
            raise RuntimeError("render of the long game failed")
        single_dt = time.perf_counter() - t0
        half = (long_frames + 1) / 2 / int(fps)  # two pieces
        _, split_dt = _ray_run(long_folder, root / "long_ray", opts, 2, half)
        out["split_game_frames"] = long_frames
        out["split_game_single_process_fps"] = round(long_frames / single_dt, 1)
        out["split_game_ray_2_workers_fps"] = round(long_frames / split_dt, 1)
    return out
