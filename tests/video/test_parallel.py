"""``render`` on every core (issue 24 item 6): worker processes draw, this process encodes.

The file is the one a single process writes, byte for byte, for every codec; held frames are
neither drawn again nor (qtrle, ProRes) encoded again, and decode to the same pictures; a
worker that fails is reported with the frame it was drawing.  Real PyAV codecs, real
processes; speed is measured by ``euchre-overlay bench export``, not here.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from engine.generate import generate_game
from overlay.cli import main
from overlay.video.batch import GameInput, game_spec
from overlay.video.job import JobOptions, load_job
from overlay.video.parallel import HELD, ParallelFrames, RenderWorkerError
from overlay.video.writer import CODECS, VideoWriter
from renderer.raster import to_rgba


@pytest.fixture(scope="module")
def game_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("par") / "g.egn"
    path.write_text(json.dumps(generate_game(4, deals=1)), encoding="utf-8")
    return path


#: the renders' rate: a one-deal game at 2 frames a second is 98 frames, 15 of them held
FPS = "2"


def _render(game: Path, out: Path, *args: str) -> None:
    """``euchre-overlay render`` run in this process (its workers are processes of their own,
    started by the forkserver this process keeps for the file's tests)."""
    assert main(["render", str(game), "-o", str(out), "--size", "320x180", "--fps", FPS, *args]) == 0


@pytest.mark.parametrize(
    "codec, extra",
    [("qtrle", ()), ("prores", ()), ("vp9", ()), ("h264", ("--background", "#204060")), ("png", ()), ("qtrle", ("--analysis",))],
)
def test_workers_write_the_file_one_process_writes(game_file: Path, tmp_path: Path, codec: str, extra: tuple[str, ...]) -> None:
    suffix = CODECS[codec].suffix
    one, two = tmp_path / f"one{suffix}", tmp_path / f"two{suffix}"
    _render(game_file, one, "--codec", codec, "--workers", "0", *extra)
    _render(game_file, two, "--codec", codec, "--workers", "2", *extra)
    if codec == "png":
        names = sorted(p.name for p in one.iterdir())
        assert names == sorted(p.name for p in two.iterdir()) and len(names) > 50
        assert all((one / n).read_bytes() == (two / n).read_bytes() for n in names)
    else:
        assert _packets(one) == _packets(two) and len(_packets(one)) > 50
        if suffix == ".mov":  # (Matroska and MP4 files carry a random id or a date)
            assert one.read_bytes() == two.read_bytes()


def _packets(path: Path) -> list[tuple[int | None, bytes]]:
    with av.open(str(path)) as c:
        return [(p.pts, bytes(p)) for p in c.demux(video=0) if p.size]


@pytest.mark.slow
def test_held_frames_are_copied_not_encoded_and_decode_to_the_same_pictures(game_file: Path, tmp_path: Path) -> None:
    # 20 s of the deal at 8 fps (its bidding and first tricks: 160 frames, 62 of them held)
    job = load_job(JobOptions(game=str(game_file), size="320x180", fps="8", start="10", end="30"))
    src = job.frames()
    fps = job.fps
    total = job.schedule.frames(fps)
    codecs = ("qtrle", "prores")
    writers = {codec: VideoWriter(tmp_path / f"held.{codec}.mov", codec, fps=fps, size=job.size) for codec in codecs}
    want = []
    for n in range(total):  # each picture drawn once, written by both
        img = src.image(job.schedule.time_of(n, fps))
        for writer in writers.values():
            writer.write(img)
        want.append(to_rgba(img))
    for codec, writer in writers.items():
        writer.close()
        assert writer.copied > total // 4, (codec, writer.copied, total)  # held frames: packets copied
        with av.open(str(tmp_path / f"held.{codec}.mov")) as c:
            got = [(round((f.time or 0.0) * float(fps)), f.to_ndarray(format="rgba")) for f in c.decode(video=0)]
        assert [p for p, _ in got] == list(range(total))
        if codec == "qtrle":  # lossless: every picture exactly
            assert all(np.array_equal(g, w) for (_, g), w in zip(got, want))
        else:  # a copied frame decodes as the frame it copies
            for n in range(1, total):
                if src.key(job.schedule.time_of(n, fps)) == src.key(job.schedule.time_of(n - 1, fps)):
                    assert np.array_equal(got[n][1], got[n - 1][1])


@pytest.mark.parametrize("here", [True, False], ids=["drawing-here-while-workers-start", "workers-only"])
def test_workers_skip_held_frames(game_file: Path, tmp_path: Path, here: bool) -> None:
    job = load_job(JobOptions(game=str(game_file), size="320x180", fps=FPS))
    spec = game_spec(GameInput("g.egn", game_file.read_bytes(), tmp_path / "x.mov"), job, codec="qtrle", background=None)
    src = job.frames()
    times = [job.schedule.time_of(n, job.fps) for n in range(spec.frames)]
    keys = [src.key(t) for t in times]
    pictures = [None if k is None else to_rgba(src.image(t)) for k, t in zip(keys, times)]
    with ParallelFrames(spec, workers=2, here=here) as frames:
        items = list(frames)  # (only the markers are kept: pixel views are reused)
        assert frames.worker_cpu > 0  # reported by each worker at its end
        kinds = ["held" if i is HELD else "none" if i is None else "pixels" for i in items]
    # held: the same step at rest (equal keys: not drawn at all), or drawn to the same pixels
    # as the frame before (an animation already at rest), as one process holds them
    by_key = [n for n in range(1, len(keys)) if keys[n] == keys[n - 1]]
    by_pixels = [
        n for n in range(1, len(keys))
        if n not in by_key and pictures[n] is not None and pictures[n - 1] is not None and np.array_equal(pictures[n], pictures[n - 1])
    ]
    want = ["none" if k is None else "pixels" for k in keys]
    for n in by_key + by_pixels:
        want[n] = "held"
    assert kinds == want
    assert by_key and 0 < kinds.count("held") < len(kinds)


def test_a_failing_worker_names_the_frame(game_file: Path, tmp_path: Path) -> None:
    job = load_job(JobOptions(game=str(game_file), size="320x180", fps=FPS))
    spec = game_spec(GameInput("g.egn", game_file.read_bytes(), tmp_path / "x.mov"), job, codec="qtrle", background=None)
    broken = spec.__class__(**{**spec.__dict__, "data": b"{not a game"})
    with pytest.raises(RenderWorkerError, match=r"render worker \d: frame -1: .*g\.egn"):
        with ParallelFrames(broken, workers=2) as frames:
            list(frames)


def test_fps_of_a_fraction_survives_the_workers(game_file: Path, tmp_path: Path) -> None:
    """NTSC 29.97: the workers' frame clock is the job's (exact fractions)."""
    job = load_job(JobOptions(game=str(game_file), size="320x180", fps="29.97", deals="1"))
    assert job.fps == Fraction(30000, 1001)
    spec = game_spec(GameInput("g.egn", game_file.read_bytes(), tmp_path / "x.mov"), job, codec="qtrle", background=None)
    src = job.frames()
    with ParallelFrames(spec, workers=2, total=40, here=False) as frames:
        for n, item in enumerate(frames):
            if item is HELD or item is None:
                continue
            want = to_rgba(src.image(job.schedule.time_of(n, job.fps)))
            assert np.array_equal(np.roll(item, -1, axis=2), want), n  # ARGB -> RGBA


def test_the_workers_fit_in_the_shared_memory_there_is() -> None:
    """A container's /dev/shm is 64 MB unless given more: a 1080p render's two workers took
    more and the first died of SIGBUS.  Now as many workers as half the free space holds
    with their fewest slots, or none, said in a note; with room, the workers asked for."""
    from overlay.video.parallel import MIN_SLOTS, SLOTS, plan_workers, slots_for

    hd, mb = (1920, 1080), 2**20
    assert plan_workers(2, hd, None).workers == 2 and plan_workers(2, hd, 24 * 2**30) == plan_workers(2, hd, None)
    assert plan_workers(0, hd, 64 * mb).workers == 0 and plan_workers(0, hd, 64 * mb).note is None
    one = plan_workers(2, hd, 64 * mb)
    assert one.workers == 1 and one.note is not None
    assert one.note.startswith("1 drawing process instead of 2: /dev/shm has 64 MB free") and "--shm-size" in one.note
    none = plan_workers(2, hd, 40 * mb)
    assert none.workers == 0 and none.note is not None and none.note.startswith("drawing in this process: /dev/shm has 40 MB free")
    assert plan_workers(4, (1280, 720), 64 * mb).workers == 3  # 3 frames of 720p: 10.5 MB a worker, in 32 MB
    # the slots stay within the share of the room, never under the fewest
    assert slots_for(1, hd, 64 * mb) == 4 and slots_for(2, hd, 50 * mb) == MIN_SLOTS and slots_for(1, hd, 1000 * mb) == SLOTS and slots_for(1, hd) == SLOTS
    assert 1 * slots_for(1, hd, 64 * mb) * 1920 * 1080 * 4 <= 32 * mb


def test_a_worker_killed_by_a_signal_is_named(game_file: Path, tmp_path: Path) -> None:
    """A worker that dies of a signal is named with it; SIGBUS (what a full /dev/shm gives the
    process that writes a slot it cannot back) says so and what to do."""
    import os
    import signal

    job = load_job(JobOptions(game=str(game_file), size="320x180", fps="8"))
    spec = game_spec(GameInput("g.egn", game_file.read_bytes(), tmp_path / "x.mov"), job, codec="qtrle", background=None)
    with pytest.raises(RenderWorkerError, match=r"render worker render-draw-\d died of SIGBUS: the shared memory in /dev/shm ran out, \d+ MB free now \(docker run --shm-size=1g, or --workers 0\) before frame \d+"):
        with ParallelFrames(spec, workers=2, here=False) as frames:
            for n, _ in enumerate(frames):
                if n == 0:
                    for p in frames._procs:
                        os.kill(p.pid, signal.SIGBUS)
