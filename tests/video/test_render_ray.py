"""``render --ray``: a batch on a real local Ray cluster gives the single-process render's frames.

Frames are compared decoded, frame by frame with PyAV (each plane's pixels hashed, VP9 through
``libvpx-vp9`` to keep alpha), with their timestamps.  The join is checked for every codec
``render`` offers: the joinable ones decode to the one-process frames when split at a deal
start, and the others do not (why they are rendered whole).  Ray runs in this process's
cluster, started once for the module (2 CPUs, no dashboard, a short temp folder); games are
of one or two deals at 320x180 and 1 frame per second to keep the module quick.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

from overlay.video import batch
from overlay.cli import build_parser, main
from overlay.video.job import JobOptions, load_job
from overlay.video.rayrender import BatchReport, print_report, render_batch, start_ray
from overlay.video.writer import CODECS
from tests.support import game, match_doc

#: one worker runs this file under pytest-xdist (--dist loadgroup): its shared set-up is made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


OPTS = ["--size", "320x180", "--fps", "1"]

#: bytes per sample of each pixel format the codecs decode to (planar formats: per plane)
SAMPLE_BYTES = {"argb": 4, "rgba": 4, "yuva444p12le": 2, "yuva444p10le": 2, "yuva420p": 1, "yuv420p": 1}


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    temp = tempfile.mkdtemp(prefix="ray-")
    import ray  # here, not at the top: every pytest-xdist worker collects this file, one runs it

    assert start_ray(None, num_cpus=2, temp_dir=temp)
    yield
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two games and a match of two more: ``a.egn`` of two deals (the one split at
    a deal start), the others of one."""
    folder = tmp_path_factory.mktemp("games")
    for name, seed, deals in (("a.egn", 11, 2), ("b.egn", 12, 1)):
        (folder / name).write_text(json.dumps(game(seed, deals=deals)), encoding="utf-8")
    (folder / "m.emn").write_text(json.dumps(match_doc((13, 14), deals=1)), encoding="utf-8")
    return folder


def plane_hashes(frame: Any) -> str:
    """SHA-256 of a decoded frame's pixels (row padding left out)."""
    size = SAMPLE_BYTES[frame.format.name]
    h = hashlib.sha256()
    for plane in frame.planes:
        rows = np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)
        h.update(rows[:, : plane.width * size].tobytes())
    return h.hexdigest()


def decoded(path: Path, codec: str) -> list[tuple[Any, str]]:
    """(time, pixel hash) of every frame of ``path``, decoded with PyAV."""
    if codec == "png":
        from PIL import Image

        return [(p.name, hashlib.sha256(np.asarray(Image.open(p)).tobytes()).hexdigest()) for p in sorted(path.iterdir())]
    out = []
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        name = CODECS[codec].decoder
        ctx: Any = av.CodecContext.create(name, "r") if name else None
        if ctx is not None:
            ctx.extradata = stream.codec_context.extradata
        for packet in container.demux(stream):
            for frame in ctx.decode(packet) if ctx is not None else packet.decode():
                out.append((packet.pts, plane_hashes(frame)) if ctx is not None else (frame.time, plane_hashes(frame)))
    return out


Single = Callable[..., Path]  # (game file, codec, *more render options) -> the video


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Single:
    """The one-process render of a game file in a codec (``render`` in this process), made once
    for the module: several tests hold Ray's output, or the joined pieces, to the same one."""
    folder = tmp_path_factory.mktemp("one-process")
    made: dict[tuple[Path, str, tuple[str, ...]], Path] = {}

    def render(game_path: Path, codec: str, *more: str) -> Path:
        out = made.get((game_path, codec, more))
        if out is None:
            out = folder / f"{len(made)}-{game_path.stem}{CODECS[codec].suffix}"
            assert main(["render", str(game_path), "-o", str(out), "--codec", codec, *more, *OPTS]) == 0
            made[game_path, codec, more] = out
        return out

    return render


def spec_of(path: Path, out: Path, codec: str, *extra: str) -> batch.GameSpec:
    args = build_parser().parse_args(["render", str(path), "-o", str(out), "--codec", codec, *OPTS, *extra])
    g = batch.GameInput(path.name, path.read_bytes(), out)
    return batch.game_spec(g, load_job(JobOptions.of(args), loaded=batch.load(g)), codec=codec, background=None)


@pytest.mark.parametrize("codec", list(CODECS))
def test_join_at_a_deal_start(codec: str, games: Path, single: Single, tmp_path: Path) -> None:
    """Two pieces split at deal 2 and joined: the one-process frames for joinable codecs;
    for VP9 and H.264 other frames, which is why those games are never split."""
    suffix = CODECS[codec].suffix
    one = single(games / "a.egn", codec)
    spec = spec_of(games / "a.egn", tmp_path / f"two{suffix}", codec)
    steps = batch.steps_of(spec)
    planned = batch.plan_segments(spec, steps, split_frames=spec.frames // 2)
    if codec in batch.JOINABLE:
        assert [s.deals for s in planned] == [(1, 1), (2, 2)]
    else:
        assert planned == [batch.Segment(0, spec.frames, (1, 2))]
        planned = batch.plan_segments(dataclasses.replace(spec, codec="qtrle"), steps, split_frames=spec.frames // 2)
    pieces = [batch.Segment(0, planned[1].first, (1, 1)), planned[1]]
    batch.join(spec, [batch.render_segment(spec, s) for s in pieces], tmp_path / f"two{suffix}")
    a, b = decoded(one, codec), decoded(tmp_path / f"two{suffix}", codec)
    assert len(a) == len(b) == spec.frames
    if codec in batch.JOINABLE:
        assert a == b
    else:
        assert a != b
    if codec not in ("png",):
        with av.open(str(one)) as x, av.open(str(tmp_path / f"two{suffix}")) as y:
            sx, sy = x.streams.video[0], y.streams.video[0]
            assert (sx.codec_tag, sx.time_base, sx.format.name) == (sy.codec_tag, sy.time_base, sy.format.name)


def test_a_window_in_pieces_is_the_one_process_frames(games: Path, single: Single, tmp_path: Path) -> None:
    """``render --ray --from --to``: a window from within deal 1 to within deal 2, cut at deal
    2's start as a task's pieces and joined, is the one-process render's frames of it."""
    whole = spec_of(games / "a.egn", tmp_path / "x.mov", "qtrle")
    deal2 = batch.plan_segments(whole, batch.steps_of(whole), split_frames=whole.frames // 2)[1].first
    lo, hi = 3, whole.frames - 3  # seconds, and frames at 1 fps
    spec = spec_of(games / "a.egn", tmp_path / "x.mov", "qtrle", "--from", str(lo), "--to", str(hi))
    assert spec.frames == hi - lo
    planned = batch.plan_segments(spec, batch.steps_of(spec), split_frames=spec.frames // 2)
    assert [(s.first, s.end, s.deals) for s in planned] == [(0, deal2 - lo, (1, 1)), (deal2 - lo, hi - lo, (2, 2))]
    batch.join(spec, [batch.render_segment(spec, s) for s in planned], tmp_path / "w.mov")
    one = [h for _, h in decoded(single(games / "a.egn", "qtrle"), "qtrle")]
    assert [h for _, h in decoded(tmp_path / "w.mov", "qtrle")] == one[lo:hi]


def test_a_piece_drawn_from_cold_caches_is_the_one_process_frames(games: Path, tmp_path: Path) -> None:
    """Why a worker needs no warm-up: deal 2 drawn by a fresh FrameSource (cold sprite and
    layer caches) has the bytes of deal 2 drawn after deal 1 in one process."""
    from renderer.frames import FrameSource
    from renderer.raster import to_rgba

    spec = spec_of(games / "a.egn", tmp_path / "x.mov", "qtrle")
    steps = batch.steps_of(spec)
    seg = batch.plan_segments(spec, steps, split_frames=spec.frames // 2)[1]
    assert seg.first > 0
    sched, fps = spec.schedule, spec.fps

    def pixels(src: FrameSource, k: int) -> bytes:
        img = src.image(sched.time_of(k, fps))
        return b"" if img is None else to_rgba(img).tobytes()

    warm = FrameSource(steps, sched, title=spec.title, size=spec.size)
    one = [pixels(warm, k) for k in range(spec.frames)][seg.first :]
    cold = FrameSource(steps, sched, title=spec.title, size=spec.size)
    assert [pixels(cold, k) for k in range(seg.first, spec.frames)] == one


@pytest.mark.usefixtures("cluster")
def test_folder_on_ray_equals_single_process(games: Path, single: Single, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The folder (two games, a match of two, a broken file) through ``render --ray``, games
    split by deal: each video decodes to the single-process render's frames; the broken file
    is reported by name and the rest is written."""
    folder = tmp_path / "in"
    shutil.copytree(games, folder)
    (folder / "broken.egn").write_text("{not json", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["render", str(folder), "-o", str(out), "--ray", "--split-seconds", "40", *OPTS])
    err = capsys.readouterr().err
    assert code == 2
    assert "broken.egn: not written: broken.egn: line 1" in err
    assert sorted(p.name for p in out.iterdir()) == ["a.mov", "b.mov", "m-game1.mov", "m-game2.mov"]
    # a match's games as one process renders each (titled "Game 2 of 2", as the pages title it)
    sources: tuple[tuple[str, Path, tuple[str, ...]], ...] = (
        ("a", games / "a.egn", ()), ("b", games / "b.egn", ()),
        ("m-game1", games / "m.emn", ("--match-game", "1")), ("m-game2", games / "m.emn", ("--match-game", "2")),
    )
    for name, src, more in sources:
        one = single(src, "qtrle", *more)
        assert decoded(out / f"{name}.mov", "qtrle") == decoded(one, "qtrle"), name


@pytest.mark.usefixtures("cluster")
def test_one_game_vp9_on_ray(games: Path, single: Single, tmp_path: Path) -> None:
    """One game file, VP9 (never split): OUT is the file, and it decodes to the same frames."""
    out = tmp_path / "a.webm"
    assert main(["render", str(games / "a.egn"), "-o", str(out), "--codec", "vp9", "--ray", "--split-seconds", "10", *OPTS]) == 0
    assert decoded(out, "vp9") == decoded(single(games / "a.egn", "vp9"), "vp9")


@pytest.mark.usefixtures("cluster")
def test_analysis_on_ray_equals_single_process(games: Path, single: Single, tmp_path: Path) -> None:
    """``render --ray --analysis``, split by deal: the pieces draw the analysis layer as one
    process does (and the layer is there: the frames differ from a render without it)."""
    out = tmp_path / "a.mov"
    assert main(["render", str(games / "a.egn"), "-o", str(out), "--ray", "--analysis", "--split-seconds", "40", *OPTS]) == 0
    one = tmp_path / "one.mov"
    assert main(["render", str(games / "a.egn"), "-o", str(one), "--analysis", *OPTS]) == 0
    assert decoded(out, "qtrle") == decoded(one, "qtrle")
    assert decoded(out, "qtrle") != decoded(single(games / "a.egn", "qtrle"), "qtrle")


class Bar:
    """Counts what a batch reports to its progress bar."""

    def __init__(self) -> None:
        self.n = 0

    def update(self, n: int) -> None:
        self.n += n


def flaky(spec: batch.GameSpec, segment: batch.Segment, *, on_progress: Any = None, marker: str, how: str, game_name: str, first: int) -> batch.SegmentOutput:
    """Fails the first attempt at one segment (raise, or the worker process dies), then renders."""
    if spec.name == game_name and segment.first == first and not os.path.exists(marker):
        Path(marker).write_text("failed once", encoding="utf-8")
        if how == "exit":
            os._exit(1)
        raise RuntimeError("injected failure")
    return batch.render_segment(spec, segment, on_progress=on_progress)


def broken(spec: batch.GameSpec, segment: batch.Segment, *, on_progress: Any = None, game_name: str) -> batch.SegmentOutput:
    """Fails every attempt for one game."""
    if spec.name == game_name:
        raise RuntimeError(f"cannot draw {spec.name}")
    return batch.render_segment(spec, segment, on_progress=on_progress)


def specs_of(games: Path, tmp_path: Path, names: tuple[str, ...]) -> tuple[list[batch.GameSpec], list[Path]]:
    specs = [spec_of(games / n, tmp_path / f"{Path(n).stem}.mov", "qtrle") for n in names]
    return specs, [tmp_path / f"{Path(n).stem}.mov" for n in names]


@pytest.mark.usefixtures("cluster")
@pytest.mark.parametrize("how", ["raise", "exit"])
def test_task_failing_once_is_retried_and_reported(how: str, games: Path, single: Single, tmp_path: Path) -> None:
    specs, outputs = specs_of(games, tmp_path, ("a.egn",))
    split = specs[0].frames // 2
    second = batch.plan_segments(specs[0], batch.steps_of(specs[0]), split_frames=split)[1]
    work = functools.partial(flaky, marker=str(tmp_path / "marker"), how=how, game_name="a.egn", first=second.first)
    bar = Bar()
    report = render_batch(specs, outputs, split_frames=split, retries=2, work=work, bar=bar)
    assert report.failed == {}
    assert report.written == outputs
    assert bar.n == specs[0].frames
    assert len(report.retried) == 1
    task = report.retried[0]
    assert (task.game, task.segment, task.attempts, task.ok) == ("a.egn", "deal 2", 2, True)
    if how == "raise":
        assert [(a.number, a.error) for a in task.failures] == [(1, "RuntimeError: injected failure")]
    else:
        assert task.failures == ()  # the worker died before it could say why
    text = io.StringIO()
    print_report(report, file=text)
    expected = "attempt 1: RuntimeError: injected failure" if how == "raise" else "1 attempt lost with its worker"
    assert f"a.egn deal 2: succeeded after 2 attempts ({expected})" in text.getvalue()
    assert decoded(outputs[0], "qtrle") == decoded(single(games / "a.egn", "qtrle"), "qtrle")


@pytest.mark.usefixtures("cluster")
def test_task_failing_always_is_reported_and_others_written(games: Path, tmp_path: Path) -> None:
    specs, outputs = specs_of(games, tmp_path, ("a.egn", "b.egn"))
    report: BatchReport = render_batch(specs, outputs, split_frames=0, retries=1, work=functools.partial(broken, game_name="a.egn"))
    assert report.failed == {"a.egn": "deals 1-2: RuntimeError: cannot draw a.egn"}
    assert report.written == [outputs[1]] and outputs[1].is_file() and not outputs[0].exists()
    assert [(t.game, t.attempts, t.ok, len(t.failures)) for t in report.retried] == [("a.egn", 2, False, 2)]
    text = io.StringIO()
    print_report(report, file=text)
    assert "a.egn: not written: deals 1-2: RuntimeError: cannot draw a.egn" in text.getvalue()
    assert "a.egn deals 1-2: FAILED after 2 attempts" in text.getvalue()
