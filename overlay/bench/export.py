"""``bench export``: video out at 1080p30, side by side in one run.

* ``render`` frames/s per codec (skia + PyAV in one process, a busy stretch of a game), and
  qtrle as ``render`` writes it (drawing processes beside the encoder, start-up included)
  against one process over the same 30 s;
* ``capture`` frames/s, deterministic (the OGraf graphic's goToTime + screenshot) and live
  (screencast frames received from a playing channel, per second);
* ``inject``: a generated 1080p30 H.264 + AAC input paced to real time with a channel's live
  overlay: frames written, late and dropped, and the p50/p99 lateness (due time to the blended
  frame), on a quiet machine and with one core busy (a CPU hog the bench starts); and its
  throughput unpaced;
* peak RSS over a long qtrle render (written to ``/dev/null``), and how much the resident
  memory grew after the first minute.

Aims on the project's 2-core machine: qtrle as ``render`` writes it >= 4x real time
(120 frames/s) and >= 10x the deterministic capture; inject with no dropped frames and a
p99 lateness under one frame period with one core busy elsewhere; RSS
growth < 50 MB over a 30-minute render (``--long-minutes 30``; the default is shorter to
keep the bench quick).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "run", "write_input"]

HELP = "render per codec, capture (deterministic, live) and inject at 1080p30; peak RSS over a long render"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--frames", type=int, default=90, help="frames per codec, drawn in one process (default 90 = 3 s; ProRes gets a third)")
    p.add_argument("--long-frames", type=int, default=900, help="frames of qtrle as render writes them, with and without drawing processes (default 900 = 30 s)")
    p.add_argument("--capture-frames", type=int, default=30, help="frames of deterministic capture (default 30)")
    p.add_argument("--live-seconds", type=float, default=4.0, help="seconds of live capture (default 4)")
    p.add_argument("--inject-seconds", type=float, default=50.0, help="seconds of 1080p30 input for inject (default 50 = 1,500 frames)")
    p.add_argument("--long-minutes", type=float, default=3.0, help="minutes of video for the RSS run (default 3; the aim is stated for 30)")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: render,capture,live,inject,rss")


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _job(size: tuple[int, int]) -> tuple[Any, Any, Any]:
    from engine.generate import generate_game
    from engine.load import load_game
    from renderer.frames import Schedule
    from renderer.timing import DEFAULT_TIMING

    from ..service.director import StepTimes
    from renderer.timing import durations_of

    tl = load_game(json.dumps(generate_game(7)), source="bench").timeline
    durations = durations_of(tl.steps, DEFAULT_TIMING)
    starts = list(StepTimes.of(durations).starts[: len(durations)])
    return tl, starts, durations


def _render_job(size: tuple[int, int], fps: Fraction, tmp: Path) -> tuple[Any, Any]:
    """The bench game as ``render`` loads it (a Job and its GameInput), from step 8 on (mid
    deal: cards moving)."""
    import dataclasses

    from engine.generate import generate_game
    from renderer.frames import Schedule

    from ..video.batch import GameInput
    from ..video.job import JobOptions, load_job

    game = tmp / "bench.egn"
    game.write_text(json.dumps(generate_game(7)), encoding="utf-8")
    job = load_job(JobOptions(game=str(game), size=f"{size[0]}x{size[1]}", fps=str(fps)))
    s = job.schedule
    job = dataclasses.replace(job, schedule=Schedule.of(s.starts, s.durations, steps=(8, len(s.durations) - 1)))
    return job, GameInput(game.name, game.read_bytes(), tmp / "out")


def _timed_render(job: Any, game: Any, codec: str, n: int, path: Path, *, workers: int) -> tuple[float, float]:
    """Frames/s and CPU ms per frame (this process and its workers) of the first ``n`` frames
    of ``job`` written as ``render`` writes them (worker start-up included)."""
    import dataclasses

    from renderer.frames import Schedule

    from ..video.parallel import job_frames, write_item
    from ..video.writer import VideoWriter

    s = job.schedule
    # the first n frames: cut the schedule's end there
    job = dataclasses.replace(job, schedule=Schedule(s.starts, s.durations, s.first, s.last, s.t0, min(s.t1, s.t0 + n / float(job.fps))))
    writer = VideoWriter(path, codec, fps=job.fps, size=job.size)
    t0, c0 = time.perf_counter(), _cpu()
    with job_frames(job, game, workers=workers, codec=codec, background=None) as frames:
        for item in frames:
            write_item(writer, item)
        workers_cpu = getattr(frames, "worker_cpu", 0.0)  # workers forked by the fork server: not our children
    writer.close()
    dt, cpu = time.perf_counter() - t0, _cpu() - c0 + workers_cpu
    return writer.frames / dt, cpu / max(1, writer.frames) * 1000.0


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _render(args: argparse.Namespace, size: tuple[int, int], fps: Fraction, tmp: Path) -> dict[str, Any]:
    from ..video.parallel import auto_workers
    from ..video.writer import CODECS

    job, game = _render_job(size, fps, tmp)
    out: dict[str, Any] = {}
    job.frames().image(job.schedule.time_of(0, fps))  # fonts, sprites: not part of the rate
    for name, codec in CODECS.items():
        n = max(10, args.frames // 3) if name == "prores" else args.frames
        rate, cpu = _timed_render(job, game, name, n, tmp / (f"r_{name}" + (codec.suffix or "")), workers=0)
        out[f"render_{name}_fps"] = round(rate, 1)
        # CPU time (both threads) per frame: what the rate would be on idle cores
        out[f"render_{name}_cpu_ms_per_frame"] = round(cpu, 2)
    # qtrle as `render` runs it: drawing processes beside the encoder, over a longer stretch
    # (their start-up included), against one process over the same frames
    n = args.long_frames
    workers = auto_workers(n) or 2
    for label, w in (("serial", 0), ("workers", workers)):
        rate, cpu = _timed_render(job, game, "qtrle", n, tmp / f"q_{label}.mov", workers=w)
        out[f"render_qtrle_{label}_fps"] = round(rate, 1)
        out[f"render_qtrle_{label}_cpu_ms_per_frame"] = round(cpu, 2)
    out["render_qtrle_workers"] = workers
    out["render_qtrle_frames"] = n
    return out


def _capture(args: argparse.Namespace, size: tuple[int, int], fps: Fraction) -> dict[str, Any]:
    from renderer.frames import FrameSource, Schedule

    from ..browser.capture import GraphicCapture

    tl, starts, durations = _job(size)
    sched = Schedule.of(starts, durations, steps=(8, len(starts) - 1))
    src = FrameSource(tl.steps, sched, title=tl.title, size=size)
    with GraphicCapture(size, scene=lambda i: src.on_air(i).dumps(), starts=list(sched.starts), first=sched.first, last=sched.last, fps=float(fps)) as cap:
        cap.frame(sched.time_of(0, fps))
        t0 = time.perf_counter()
        for i in range(args.capture_frames):
            cap.frame(sched.time_of(i, fps))
        dt = time.perf_counter() - t0
    return {"capture_deterministic_fps": round(args.capture_frames / dt, 1)}


def _live(args: argparse.Namespace, size: tuple[int, int], fps: Fraction, url: str) -> dict[str, Any]:
    from ..browser.capture import LiveCapture, page_url

    with LiveCapture(page_url("demo", server=url, output="program", size=size), size) as cap:
        n = 0
        before = cap.received
        t0 = time.perf_counter()
        for _ in cap.frames(fps=float(fps), duration=args.live_seconds):
            n += 1
        dt = time.perf_counter() - t0
        got = cap.received - before
    return {"capture_live_screencast_fps": round(got / dt, 1), "capture_live_written": n}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from ..browser.inject import serve_in_thread
    from ..service.config import ServerSettings

    size = (1920, 1080)
    fps = Fraction(30)
    skip = set(filter(None, args.skip.split(",")))
    figures: dict[str, Any] = {"size": "1920x1080", "fps": 30}
    with tempfile.TemporaryDirectory(prefix="bench-export-") as d:
        tmp = Path(d)
        if "render" not in skip:
            figures.update(_render(args, size, fps, tmp))
        if "capture" not in skip:
            figures.update(_capture(args, size, fps))
        url, stop = serve_in_thread(ServerSettings(port=0, data_dir=tmp / "data"))
        try:
            if "live" not in skip:
                figures.update(_live(args, size, fps, url))
            if "inject" not in skip:
                figures.update(_inject(args, size, url, tmp))
        finally:
            stop()
        if "rss" not in skip:
            figures.update(_long_render(args, size, fps))
    if "render_qtrle_workers_fps" in figures:
        figures["render_qtrle_x_realtime"] = round(figures["render_qtrle_workers_fps"] / 30.0, 2)
        if "capture_deterministic_fps" in figures:
            figures["render_qtrle_x_capture"] = round(figures["render_qtrle_workers_fps"] / figures["capture_deterministic_fps"], 1)
    try:
        import os

        figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    return figures


def _inject(args: argparse.Namespace, size: tuple[int, int], url: str, tmp: Path) -> dict[str, Any]:
    """inject of a 1080p30 file over the demo channel: paced to real time on a quiet machine
    and with one core busy (a CPU hog: another job on the box), then unpaced (throughput)."""
    import subprocess
    import sys

    from ..browser.inject import InjectStats, LiveOverlay, inject

    src = tmp / "in.mp4"
    write_input(src, seconds=args.inject_seconds, size=size, fps=30)
    out: dict[str, Any] = {}
    for label, paced, hog in (("realtime", True, False), ("hog", True, True), ("unpaced", False, False)):
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if hog else None
        try:
            overlay = LiveOverlay(url, "demo", size=size).start()
            stats = InjectStats()
            t0, c0 = time.perf_counter(), time.process_time()
            inject(str(src), str(tmp / "out.mp4"), overlay, realtime=paced, stats=stats)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            overlay.stop()
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
        if paced:
            out.update(
                {
                    f"inject_{label}_frames": stats.frames,
                    f"inject_{label}_late": stats.late,
                    f"inject_{label}_dropped": stats.dropped,
                    f"inject_{label}_p50_late_ms": round(stats.late_ms(0.5), 1),
                    f"inject_{label}_p99_late_ms": round(stats.late_ms(0.99), 1),
                    f"inject_{label}_p99_late_periods": round(stats.late_ms(0.99) / (1000.0 / 30), 2),
                    # frame periods the overlay's animation skipped (a drawing longer than a period)
                    f"inject_{label}_overlay_skipped": stats.overlay_skipped,
                }
            )
        else:
            out["inject_unpaced_fps"] = round(stats.frames / dt, 1)
            # decode, blend, encode (all threads; the in-process server's share too)
            out["inject_cpu_ms_per_frame"] = round(cpu / max(1, stats.frames) * 1000.0, 2)
    return out


def write_input(path: Path | str, *, seconds: float, size: tuple[int, int], fps: int, bar: int = 8) -> None:
    """A synthetic match video: H.264 (a gradient with a moving bar) and AAC (a 440 Hz tone,
    48 kHz stereo).  Also the input of the video tests."""
    import av
    import numpy as np

    w, h = size
    out = av.open(str(path), "w")
    vs = out.add_stream("libx264", rate=fps, options={"preset": "ultrafast", "crf": "23"})
    vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
    aus = out.add_stream("aac", rate=48000)
    aus.layout = "stereo"
    base = np.empty((h, w, 3), np.uint8)
    base[...] = np.linspace(40, 200, w, dtype=np.float32).astype(np.uint8)[None, :, None]
    rate = 48000
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(int(seconds * rate)) / rate)).astype(np.float32)
    apos = 0
    for n in range(int(seconds * fps)):
        img = base.copy()
        x = (n * bar) % w
        img[:, x : x + 2 * bar] = (250, 250, 40)
        f = av.VideoFrame.from_ndarray(img, format="rgb24")
        f.pts = n
        for p in vs.encode(f):
            out.mux(p)
        while apos < int((n + 1) * rate / fps):
            chunk = tone[apos : apos + 1024]
            af = av.AudioFrame.from_ndarray(np.stack([chunk, chunk]), format="fltp", layout="stereo")
            af.sample_rate, af.pts, af.time_base = rate, apos, Fraction(1, rate)
            for p in aus.encode(af):
                out.mux(p)
            apos += len(chunk)
    for s in (vs, aus):
        for p in s.encode(None):
            out.mux(p)
    out.close()


def _long_render(args: argparse.Namespace, size: tuple[int, int], fps: Fraction) -> dict[str, Any]:
    """qtrle frames of the whole game (11 minutes), looped, into /dev/null; RSS every minute.

    The renderer's caches are bounded and fill during the first pass over the game, so the
    growth that matters is the second half's."""
    from renderer.frames import FrameSource, Schedule

    from ..video.writer import CODECS, VideoWriter

    tl, starts, durations = _job(size)
    sched = Schedule.of(starts, durations)
    src = FrameSource(tl.steps, sched, title=tl.title, size=size)
    total = int(args.long_minutes * 60 * 30)
    # /dev/null: the memory of a long render without its gigabytes on disk
    writer = VideoWriter("/dev/null", CODECS["qtrle"], fps=fps, size=size, container_format="mov")
    per_minute: list[float] = []
    t0 = time.perf_counter()
    for n in range(total):
        writer.write(src.image(sched.time_of(n % sched.frames(fps), fps)))
        if (n + 1) % (60 * 30) == 0:
            per_minute.append(round(_rss_mb(), 1))
    writer.close()
    dt = time.perf_counter() - t0
    end = _rss_mb()
    first = per_minute[0] if per_minute else end
    half = per_minute[len(per_minute) // 2] if per_minute else end
    return {
        "long_render_minutes": args.long_minutes,
        "long_render_fps": round(total / dt, 1),
        "rss_mb_per_minute": per_minute,
        "rss_growth_mb": round(end - first, 1),  # from the end of minute 1
        "rss_growth_second_half_mb": round(end - half, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
