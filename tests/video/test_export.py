"""Video export: every codec decoded back keeps alpha and timing; sync; composite.

Frames are compared with the skia frames of the same (step, t) computed independently
through :class:`renderer.frames.FrameSource`; VP9 is decoded with ``libvpx-vp9`` (ffmpeg's
native VP9 decoder drops the alpha plane).  Frames are 320x180 to keep CI quick.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import StepKind
from overlay.service.director import StepTimes
from renderer.timing import durations_of
from overlay.video.writer import CODECS, VideoWriter
from renderer.frames import FrameSource, Schedule
from overlay.video.sync import parse_sync, sync_starts
from renderer.raster import Assets, raster, to_rgba
from renderer.timing import DEFAULT_TIMING

from overlay.bench.export import write_input

SIZE = (320, 180)
FPS = Fraction(10)


@pytest.fixture(scope="module")
def game_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("g") / "g.egn"
    path.write_text(json.dumps(generate_game(3)), encoding="utf-8")
    return path


def _timeline(path: Path) -> Any:
    return load_game(path.read_bytes(), source=path.name).timeline


def _model(steps: Any) -> tuple[list[float], list[float]]:
    durations = durations_of(steps, DEFAULT_TIMING)
    return list(StepTimes.of(durations).starts[: len(durations)]), durations


def decode(path: Path, codec: str) -> list[np.ndarray]:
    """Every frame of ``path`` as straight RGBA (the alpha-keeping decoder for VP9)."""
    if codec == "png":
        from PIL import Image

        return [np.asarray(Image.open(p).convert("RGBA")) for p in sorted(path.glob("frame_*.png"))]
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        dec = CODECS[codec].decoder
        ctx = av.codec.CodecContext.create(dec, "r") if dec else None
        out = []
        for packet in c.demux(stream):
            frames = ctx.decode(packet) if ctx is not None else packet.decode()
            out.extend(f.to_ndarray(format="rgba") for f in frames)
        return out


# mean colour error of each codec against the skia frame on opaque pixels (4:2:0 codecs blur
# small text at 320x180); the lossless ones must be exact
TOLERANCE = {"qtrle": 0.0, "png": 0.0, "prores": 1.5, "vp9": 10.0, "h264": 10.0}


@pytest.mark.parametrize("codec", list(CODECS))
def test_codec_keeps_alpha_and_timing(codec: str, game_file: Path, tmp_path: Path) -> None:
    tl = _timeline(game_file)
    starts, durations = _model(tl.steps)
    # about two seconds around the first card played (an animation and a held frame)
    card = next(s.step for s in tl.steps if s.kind is StepKind.CARD)
    sched = Schedule.of(starts, durations, steps=(card - 1, card))
    src = FrameSource(tl.steps, sched, title=tl.title, size=SIZE)
    out = tmp_path / ("frames" if codec == "png" else "out" + CODECS[codec].suffix)
    writer = VideoWriter(out, codec, fps=FPS, size=SIZE)
    total = sched.frames(FPS)
    for n in range(total):
        writer.write(src.image(sched.time_of(n, FPS)))
    writer.close()
    frames = decode(out, codec)
    assert len(frames) == total
    # the same frames drawn again in the same order, from fresh caches: a pure function of t
    check = FrameSource(tl.steps, sched, title=tl.title, size=SIZE)
    other_assets = Assets.load()
    moved = 0
    for n in range(total):
        t = sched.time_of(n, FPS)
        step, local = sched.locate(t)
        assert step is not None
        want = to_rgba(check.image(t))
        got = frames[n]
        opaque = want[..., 3] == 255
        clear = want[..., 3] == 0
        assert opaque.any() and clear.any()
        if CODECS[codec].alpha:
            # a transparent pixel stays transparent, a card pixel stays opaque
            assert (got[..., 3][clear] <= 8).mean() > 0.995, (codec, n)
            assert (got[..., 3][opaque] >= 247).mean() > 0.995, (codec, n)
        else:
            assert (got[..., 3] == 255).all()
        diff = np.abs(got[..., :3].astype(int) - want[..., :3].astype(int))[opaque]
        assert diff.mean() <= TOLERANCE[codec], (codec, n, diff.mean())
        # timing: frame n is nearer to its own step's picture than to the other step's
        other = card if step == card - 1 else card - 1
        alt = to_rgba(raster(check.scene(other), local, other_assets))
        if not np.array_equal(alt, want):
            moved += 1
            d_own = np.abs(got.astype(int) - want.astype(int)).mean()
            d_alt = np.abs(got.astype(int) - alt.astype(int)).mean()
            assert d_own < d_alt, (codec, n)
    assert moved  # the two steps differ on some frames, so the timing check ran


def test_frames_are_a_pure_function_of_t(game_file: Path, tmp_path: Path) -> None:
    """Two runs of the CLI give byte-identical qtrle files."""
    outs = []
    for i in range(2):
        out = tmp_path / f"r{i}.mov"
        cmd = [sys.executable, "-m", "overlay.cli", "render", str(game_file), "-o", str(out), "--size", "320x180", "--fps", "5", "--deals", "1"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        outs.append(decode(out, "qtrle"))
    assert len(outs[0]) == len(outs[1]) > 0
    assert all(np.array_equal(a, b) for a, b in zip(outs[0], outs[1]))


def test_a_window_is_the_whole_videos_frames(game_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--from``/``--to``: the whole render's frames from the first at or after FROM to the
    last before TO, pixel for pixel, drawn in this process or by drawing workers; the clip's
    own clock starts at 0.  ``frame --at`` is the video's frame at that time.  A window or a
    time past the end is refused naming the game and the flags."""
    from overlay.cli import main

    common = [str(game_file), "--size", "320x180", "--fps", "10", "--deals", "1"]
    assert main(["render", *common, "-o", str(tmp_path / "whole.mov"), "--workers", "0"]) == 0
    whole = decode(tmp_path / "whole.mov", "qtrle")
    windows = {"a": (["--from", "1.25", "--to", "0:03"], "0", 13, 30), "b": (["--from", "0:02"], "2", 20, len(whole))}
    for name, (window, workers, lo, hi) in windows.items():
        out = tmp_path / f"{name}.mov"
        assert main(["render", *common, *window, "--workers", workers, "-o", str(out)]) == 0
        got = decode(out, "qtrle")
        assert len(got) == hi - lo, name
        assert all(np.array_equal(a, b) for a, b in zip(got, whole[lo:hi])), name
        with av.open(str(out)) as c:
            assert next(c.decode(video=0)).time == 0.0
    # frame --at: the PNG of the frame the video shows at that time (one of an animation, unlike its neighbours)
    k = next(k for k in range(1, len(whole) - 1) if not np.array_equal(whole[k], whole[k - 1]) and not np.array_equal(whole[k], whole[k + 1]))
    assert main(["frame", *common, "--at", f"{k / 10 + 0.05:.2f}", "-o", str(tmp_path / "at.png")]) == 0
    from PIL import Image

    assert np.array_equal(np.asarray(Image.open(tmp_path / "at.png").convert("RGBA")), whole[k])
    sync = tmp_path / "sync.json"
    sync.write_text(json.dumps({"steps": {"0": 2.0}}), encoding="utf-8")  # nothing on screen before 2 s
    assert main(["frame", *common, "--sync", str(sync), "--at", "1", "-o", str(tmp_path / "empty.png")]) == 0
    empty = np.asarray(Image.open(tmp_path / "empty.png").convert("RGBA"))
    assert empty.shape == (180, 320, 4) and not empty.any()
    capsys.readouterr()
    assert main(["frame", *common, "--at", "0:10:00", "-o", str(tmp_path / "x.png")]) == 2
    assert f"{game_file.name}: --at 0:10:00: after the video's end (" in capsys.readouterr().err
    assert main(["render", *common, "--from", "900", "-o", str(tmp_path / "x.mov")]) == 2
    err = capsys.readouterr().err
    assert f"{game_file.name}: --from 900: the window starts at 900 s, after the video's end" in err
    assert main(["render", *common, "--from", "1:75", "-o", str(tmp_path / "x.mov")]) == 2
    assert "--from '1:75': expected seconds (75.5) or [h:]mm:ss[.fff]" in capsys.readouterr().err


def test_a_window_of_the_schedule() -> None:
    """:meth:`Schedule.window`: its frame ``n`` is at the whole video's time of frame ``n + k0``
    (the very same float), a window of a window is the window of the sum, and the steps shown
    are the ones on screen in it."""
    from overlay.video.job import parse_clock

    fps = Fraction(30000, 1001)
    sched = Schedule.of([0.0, 1.0, 2.5, 4.0, 6.0], [1.0, 1.5, 1.5, 2.0, 1.0], steps=(1, 4))
    whole = sched.frames(fps)
    win = sched.window(fps, 2.0, 3.5)  # output time starts at step 1's start, 1.0
    # frames 60 (the first at or after 2 s: 60 * 1001 / 30000 = 2.002 s) to 104 (3.4968 s)
    assert [win.time_of(n, fps) for n in range(win.frames(fps))] == [sched.time_of(k, fps) for k in range(60, 105)]
    assert (win.first, win.last) == (2, 3) and (sched.first, sched.last) == (1, 4)
    again = win.window(fps, 0.5)  # frames 15.. of the window: 75..104 of the whole
    assert again.frames(fps) == 30 and again.time_of(0, fps) == sched.time_of(75, fps)
    assert again.time_of(29, fps) == sched.time_of(104, fps)
    assert sched.window(fps, None, 0.5).frames(fps) == 15 and sched.window(fps, None, 99).frames(fps) == whole
    for start, end, words in ((9.0, None, "after the video's end"), (2.0, 1.0, r"ends \(1 s\) before it starts"), (1.0, 1.001, "holds no frame")):
        with pytest.raises(ValueError, match=words):
            sched.window(fps, start, end)
    assert [parse_clock(t, "--from") for t in ("75.5", "1:15.5", "0:01:15.5", "0")] == [75.5, 75.5, 75.5, 0.0]
    for bad in ("", "1::2", "-3", "1:60", "x", "nan", "1:2:3:4"):
        with pytest.raises(OSError, match="--from"):
            parse_clock(bad, "--from")


def test_sync_fills_between_stamps() -> None:
    model = [0.0, 1.0, 2.0, 4.0, 5.0, 6.0]
    got = sync_starts(model, {1: 10.0, 3: 20.0})
    assert got[1] == 10.0 and got[3] == 20.0
    assert got[0] == 9.0  # before the first stamp: the model's spacing
    assert got[2] == pytest.approx(10.0 + (1.0 / 3.0) * 10.0)  # stretched between stamps
    assert got[4:] == [21.0, 22.0]  # after the last: the model's spacing
    assert sync_starts(model, {}) == model


def test_sync_file_deals_tricks_and_errors(game_file: Path) -> None:
    tl = _timeline(game_file)
    doc = {"deals": {"2": 100.0}, "tricks": {"1.2": 30.0}, "steps": {"0": 5.0}, "offset": 1.5, "videoUrl": "https://v/x.mp4"}
    sync = parse_sync(json.dumps(doc), tl.steps, source="t.json")
    deal2 = next(s.step for s in tl.steps if s.deal == 1)
    lead2 = next(s.step for s in tl.steps if s.deal == 0 and s.kind is StepKind.CARD and s.trick is not None and s.trick.number == 1 and len(s.trick.cards) == 1)
    assert sync.stamps == {0: 6.5, lead2: 31.5, deal2: 101.5}
    assert sync.video_url == "https://v/x.mp4"
    from engine.errors import SchemaError

    with pytest.raises(SchemaError, match=r"t.json: deal 99: no such deal"):
        parse_sync(json.dumps({"deals": {"99": 1.0}}), tl.steps, source="t.json")
    with pytest.raises(SchemaError, match="backwards"):
        parse_sync(json.dumps({"steps": {"0": 9.0, "3": 1.0}}), tl.steps, source="t.json")


def test_legacy_timings_of_an_old_egn_file(tmp_path: Path) -> None:
    from ..support import shared_egn

    src = shared_egn() / "examples" / "conversion_examples" / "test_timingsLayouts.egn"
    tl = load_game(src.read_bytes(), source=src.name).timeline
    sync = parse_sync(src.read_bytes(), tl.steps, source=src.name)
    assert sync.stamps == {0: 0.0}  # the Renderer's zeros are "no cue"


def test_render_sync_places_the_stamped_step(game_file: Path, tmp_path: Path) -> None:
    tl = _timeline(game_file)
    sync_file = tmp_path / "sync.json"
    sync_file.write_text(json.dumps({"steps": {"2": 3.0}}), encoding="utf-8")
    out = tmp_path / "s.mov"
    from overlay.cli import main  # the command's entry point, in this process

    assert main(["render", str(game_file), "-o", str(out), "--size", "320x180", "--fps", "10", "--deals", "1", "--sync", str(sync_file)]) == 0
    frames = decode(out, "qtrle")
    starts, durations = _model(tl.steps)
    placed = sync_starts(starts, {2: 3.0})
    sched = Schedule.of(placed, durations, steps=(0, max(s.step for s in tl.steps if s.deal == 0)), from_zero=True)
    assert sched.locate(3.0)[0] == 2 and sched.locate(2.95)[0] == 1
    src = FrameSource(tl.steps, sched, title=tl.title, size=SIZE)
    for n in (0, 29, 30, 31, 45):
        img = src.image(n / 10)
        want = to_rgba(img) if img is not None else np.zeros_like(frames[n])
        d = np.abs(frames[n].astype(int) - want.astype(int))
        # frames drawn out of order may differ by a few levels on an anti-aliased edge
        assert d.max() <= 8 and (d > 0).mean() < 0.005, (n, d.max(), (d > 0).mean())


def test_composite_keeps_rate_size_and_audio(game_file: Path, tmp_path: Path) -> None:
    match = tmp_path / "match.mp4"
    write_input(match, seconds=3.0, size=SIZE, fps=25)
    sync_file = tmp_path / "sync.json"
    sync_file.write_text(json.dumps({"steps": {"0": 0.4}}), encoding="utf-8")
    out = tmp_path / "out.mp4"
    cmd = [sys.executable, "-m", "overlay.cli", "composite", str(match), str(game_file), "--sync", str(sync_file), "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    with av.open(str(match)) as a, av.open(str(out)) as b:
        va, vb = a.streams.video[0], b.streams.video[0]
        assert (vb.codec_context.width, vb.codec_context.height) == SIZE
        assert vb.average_rate == va.average_rate == 25
        pa = [bytes(p) for p in a.demux(a.streams.audio[0]) if p.size]
        pb = [bytes(p) for p in b.demux(b.streams.audio[0]) if p.size]
        assert pa == pb  # audio copied untouched
    with av.open(str(match)) as a, av.open(str(out)) as b:
        fa = [f.to_ndarray(format="rgb24").astype(np.int16) for f in a.decode(video=0)]
        fb = [f.to_ndarray(format="rgb24").astype(np.int16) for f in b.decode(video=0)]
    assert len(fa) == len(fb) == 75
    tl = _timeline(game_file)
    starts, durations = _model(tl.steps)
    sched = Schedule.of(sync_starts(starts, {0: 0.4}), durations, from_zero=True)
    src = FrameSource(tl.steps, sched, title=tl.title, size=SIZE)
    assert src.image(0.2) is None  # before the first stamp: the match alone
    assert np.abs(fa[5] - fb[5]).mean() < 3
    ov = to_rgba(src.image(60 / 25))
    opaque, clear = ov[..., 3] == 255, ov[..., 3] == 0
    assert np.abs(fb[60][clear] - fa[60][clear]).mean() < 4  # the match shows through
    assert np.abs(fb[60][opaque] - ov[..., :3][opaque]).mean() < 12  # the overlay covers it (4:2:0)


@pytest.mark.parametrize("mode", ["keep", "remove"])
def test_ctrl_c_keeps_a_playable_file_or_removes_it(mode: str, game_file: Path, tmp_path: Path) -> None:
    import re
    import signal
    import time

    out = tmp_path / "long.mov"
    cmd = [sys.executable, "-m", "overlay.cli", "render", str(game_file), "-o", str(out), "--size", "320x180", "--on-interrupt", mode]
    # a suite started in the background by a shell without job control inherits an ignored
    # SIGINT, which the child would inherit too: give it the default, as a terminal does
    restore = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=restore)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or out.stat().st_size < 200_000):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "frame/s" not in err and "%|" not in err  # no progress bar in a pipe
    if mode == "keep":
        m = re.search(r"interrupted: kept .*long\.mov \((\d+) frames, playable\)", err)
        assert m, err
        frames = decode(out, "qtrle")
        assert len(frames) == int(m.group(1)) > 0
    else:
        assert "interrupted: removed" in err and not out.exists()


def test_channel_settings_give_timing_and_view(game_file: Path, tmp_path: Path) -> None:
    """--channel-settings: the channel's timing spaces the steps, its output's view draws them."""
    from overlay.video.job import JobOptions, load_job
    from renderer.settings import ChannelSettings, RenderSettings

    doc = ChannelSettings(title="t", timing={"card": {"run_time": 0.2, "hold": 0.1, "ease": "out"}})
    path = tmp_path / "settings.json"
    path.write_text(doc.model_dump_json(), encoding="utf-8")
    options = JobOptions(game=str(game_file), channel_settings=str(path), output_name="clean", size="320x180", fps="30", deals="2")
    job = load_job(options)
    rs = RenderSettings(doc)
    assert job.view.base == rs.view("clean") and job.timing == rs.timing
    card = next(s.step for s in job.steps if s.kind is StepKind.CARD)
    assert job.schedule.durations[card] == pytest.approx(0.3)
    deal2 = [s.step for s in job.steps if s.deal == 1]
    assert (job.schedule.first, job.schedule.last) == (deal2[0], deal2[-1])
    assert job.schedule.t0 == job.schedule.starts[deal2[0]]


def test_a_match_game_is_titled_as_the_pages_title_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``render`` and ``frame`` of a match file draw a game as the channel's pages draw it:
    which game it is ("GAME 2 OF 3 \u00b7 DEAL 1"; they drew the game's own title alone), the
    same scene; a match given without ``--match-game`` to a command that draws one game says
    so (it drew the first game without a word)."""
    from overlay.cli import main
    from overlay.service.feed import load_bytes
    from overlay.service.outputs import render
    from overlay.video.batch import collect_games, load
    from overlay.video.job import JobOptions, load_job
    from renderer.theme import DEFAULT_THEME
    from renderer.timing import Timing
    from renderer.view import default_view
    from tests.support import match_doc

    path = tmp_path / "m.emn"
    path.write_text(json.dumps(match_doc((13, 14, 15), deals=1)), encoding="utf-8")
    loaded = load_bytes(path.read_bytes(), source="m.emn")
    assert [p.label for p in loaded.parts] == ["Game 1 of 3", "Game 2 of 3", "Game 3 of 3"]
    jobs = [load_job(JobOptions(game=str(path), match_game=n)) for n in (1, 2, 3)]
    assert [(j.title, j.game) for j in jobs] == [(p.timeline.title, p.match_game) for p in loaded.parts]
    games, _ = collect_games(path, tmp_path / "out", suffix=".mov")
    assert [load_job(JobOptions(game=str(path)), loaded=load(g), which=g.game).game for g in games] == [p.match_game for p in loaded.parts]
    # the page's scene of game 2's fourth step is the video's
    part, k = loaded.parts[1], 3
    page = render(loaded.steps[part.first_step + k], view=default_view(), theme=DEFAULT_THEME, timing=Timing(),
                  title=part.timeline.title, game=part.match_game, size=(1920, 1080))
    assert jobs[1].frames().scene(k).dumps() == page and "GAME 2 OF 3 \u00b7 DEAL 1" in page
    capsys.readouterr()
    assert main(["frame", str(path), "--step", "3", "-o", str(tmp_path / "f.png")]) == 2
    assert "m.emn: a match of 3 games: draw one with --match-game N (1 to 3)" in capsys.readouterr().err
    assert main(["frame", str(path), "--step", "3", "--match-game", "4", "-o", str(tmp_path / "f.png")]) == 2
    assert "--match-game 4: m.emn has games 1 to 3" in capsys.readouterr().err
    assert main(["frame", str(path), "--step", "3", "--match-game", "2", "-o", str(tmp_path / "f.png")]) == 0


def test_a_folder_and_a_match_file_render_game_after_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``render FOLDER`` (or a match file) without ``--ray``: a video per game, named as
    ``render --ray`` names them, each the frames of that game rendered alone (a match's game
    with ``--match-game``: titled "Game 2 of 2" as the pages title it); a broken file is
    reported by name and the others are still written (exit 2)."""
    from overlay.cli import main
    from tests.support import game, match_doc

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.egn").write_text(json.dumps(game(11, deals=1)), encoding="utf-8")
    match = match_doc((13, 14), deals=1)
    (folder / "m.emn").write_text(json.dumps(match), encoding="utf-8")
    (folder / "broken.egn").write_text("{not json", encoding="utf-8")
    opts = ["--size", "320x180", "--fps", "2"]
    assert main(["render", str(folder), "-o", str(tmp_path / "out"), *opts]) == 2
    err = capsys.readouterr().err
    assert "broken.egn: not written: broken.egn: line 1" in err and "3 written, 1 failed" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.mov", "m-game1.mov", "m-game2.mov"]
    alone: dict[str, list[str]] = {"a": [str(folder / "a.egn")]}
    for n in range(1, len(match["games"]) + 1):
        alone[f"m-game{n}"] = [str(folder / "m.emn"), "--match-game", str(n)]
    for name, src in alone.items():
        assert main(["render", *src, "-o", str(tmp_path / f"{name}.one.mov"), *opts]) == 0
        a, b = decode(tmp_path / "out" / f"{name}.mov", "qtrle"), decode(tmp_path / f"{name}.one.mov", "qtrle")
        assert len(a) == len(b) > 0 and all(np.array_equal(x, y) for x, y in zip(a, b)), name
    # a match file alone: a folder of its games
    assert main(["render", str(folder / "m.emn"), "-o", str(tmp_path / "match"), *opts]) == 0
    assert sorted(p.name for p in (tmp_path / "match").iterdir()) == ["m-game1.mov", "m-game2.mov"]
    # -o naming a video file: refused before anything is drawn (it became a folder "finals.mov")
    capsys.readouterr()
    for src, what in ((folder / "m.emn", "m.emn: a match of 2 games"), (folder, f"{folder}: a folder of games")):
        assert main(["render", str(src), "-o", str(tmp_path / "finals.mov"), *opts]) == 2
        assert capsys.readouterr().err == f"euchre-overlay: {what} renders one video per game into a folder: -o {tmp_path / 'finals.mov'} names a file; give a folder (-o {tmp_path / 'finals'})\n"
        assert not (tmp_path / "finals.mov").exists()
