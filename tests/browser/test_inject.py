"""inject: a channel's live overlay over a video, on loopback and files only.

A generated match (H.264 + AAC) is injected, paced to real time, while a logger action is
sent to a real server (a subprocess of ``euchre-overlay serve``): the overlay shows up in the
output within :data:`WITHIN` frames of the frame being written when the action was sent, the
audio packets come out untouched, and the end of the input finishes the output cleanly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

from engine.generate import generate_game
from overlay.browser.inject import InjectStats, LiveOverlay, inject, output_format

from overlay.bench.export import write_input

pytestmark = pytest.mark.slow  # started first: see tests/conftest.py

#: frames (at 25 fps: 0.4 s) within which a logger action reaches the output
WITHIN = 10
TOKEN = "inj3ct"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("data")
    proc = subprocess.Popen(
        [sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", str(data), "--token", TOKEN, "--no-demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().split("serving on ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _api(base: str, method: str, path: str, body: Any) -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(base + "/api" + path, data=data, method=method, headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_output_formats() -> None:
    assert output_format("rtmp://h/live/k") == "flv"
    assert output_format("udp://127.0.0.1:5000") == output_format("srt://h:9000") == output_format("-") == "mpegts"
    assert output_format("out.mp4") is None


def test_logger_action_reaches_the_output(server: str, tmp_path: Path) -> None:
    game = generate_game(3)
    game["deals"] = []  # players only: the logger sends the deal live
    _api(server, "POST", "/channels", {"id": "table1"})
    _api(server, "PUT", "/channels/table1/game", json.dumps(game).encode())
    src = tmp_path / "match.mp4"
    write_input(src, seconds=3.6, size=(640, 360), fps=25)  # 90 frames: 50 before the action, 40 after
    out = tmp_path / "out.mp4"
    overlay = LiveOverlay(server, "table1", size=(640, 360)).start()
    stats = InjectStats()
    runner = threading.Thread(target=lambda: inject(str(src), str(out), overlay, stats=stats))
    runner.start()
    try:
        # the action goes out two seconds of video into the run
        deadline = time.monotonic() + 30
        while len(stats.written) < 50 and runner.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert runner.is_alive()
        t_sent = time.monotonic()
        ack = _api(server, "POST", "/channels/table1/actions", {"seq": 1, "kind": "new_deal", "dealer": 0, "up_card": "Jh"})
        assert ack["steps"] == 1
    finally:
        runner.join(timeout=60)
        overlay.stop()
    sent_at = sum(1 for _, at in stats.written if at <= t_sent)
    with av.open(str(src)) as a, av.open(str(out)) as b:
        assert b.streams.video[0].base_rate == 25  # the input's rate (average_rate counts dropped frames)
        pa = [bytes(p) for p in a.demux(a.streams.audio[0]) if p.size]
        pb = [bytes(p) for p in b.demux(b.streams.audio[0]) if p.size]
    assert pa == pb  # audio intact
    with av.open(str(src)) as a, av.open(str(out)) as b:
        fa = [f.to_ndarray(format="rgb24").astype(np.int16) for f in a.decode(video=0)]
        fb = [f.to_ndarray(format="rgb24").astype(np.int16) for f in b.decode(video=0)]
    # the end of the input ended the output cleanly: every frame written is there
    assert len(fb) == stats.frames and stats.frames + stats.dropped == len(fa) == 90
    times = [round(vt * 25) for vt, _ in stats.written]
    # the overlay layer of each output frame (what inject laid over the input frame); before
    # the first deal the channel shows its pre-show (title, teams, name plates), so the action
    # is seen as the layer changing from the pre-show picture held just before it
    layer = [fb[i] - fa[n] for i, n in enumerate(times)]
    assert sent_at >= 12
    before = layer[sent_at - 2]
    assert np.abs(before).mean() > 2.0, "the pre-show was not drawn"
    assert all(np.abs(layer[i] - before).mean() <= 2.0 for i in range(sent_at - 10, sent_at - 1))
    changed = [i for i in range(sent_at - 1, len(layer)) if np.abs(layer[i] - before).mean() > 2.0]
    assert changed, "the logger action never reached the output"
    first = changed[0]
    assert sent_at - 1 <= first <= sent_at + WITHIN, (sent_at, first)


def _send_udp(src: Path, url: str, stop_after: float) -> None:
    """Stream ``src`` as MPEG-TS over UDP at its own pace, then stop (the sender goes away)."""
    with av.open(str(src)) as inp, av.open(url, "w", format="mpegts") as out:
        streams = {s.index: out.add_stream_from_template(s) for s in (inp.streams.video[0], inp.streams.audio[0])}
        t0 = time.monotonic()
        for packet in inp.demux(inp.streams.video[0], inp.streams.audio[0]):
            if packet.dts is None:
                continue
            at = float(packet.dts * packet.time_base)
            if at > stop_after:
                break
            wait = t0 + at - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            packet.stream = streams[packet.stream.index]
            out.mux(packet)


def test_a_stopped_stream_ends_the_output_cleanly(server: str, tmp_path: Path) -> None:
    import socket

    _api(server, "POST", "/channels", {"id": "table2"})
    _api(server, "PUT", "/channels/table2/game", json.dumps(generate_game(4)).encode())
    src = tmp_path / "match.mp4"
    write_input(src, seconds=4.0, size=(640, 360), fps=25)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sender = threading.Thread(target=_send_udp, args=(src, f"udp://127.0.0.1:{port}?pkt_size=1316", 3.0))
    out = tmp_path / "out.mp4"
    overlay = LiveOverlay(server, "table2", size=(1280, 720)).start()
    stats = InjectStats()
    runner = threading.Thread(target=lambda: inject(f"udp://127.0.0.1:{port}?timeout=2000000", str(out), overlay, stats=stats, timeout=2.0))
    runner.start()
    time.sleep(0.3)
    sender.start()
    sender.join(timeout=30)
    runner.join(timeout=30)
    overlay.stop()
    assert not runner.is_alive(), "inject did not end when the stream stopped"
    with av.open(str(out)) as b:
        frames = [f for f in b.decode(video=0)]
    with av.open(str(out)) as b:
        audio = [f for f in b.decode(audio=0)]
    assert len(frames) == stats.frames >= 50  # most of the three seconds sent, all playable
    assert sum(f.samples for f in audio) / 48000 > 2.0  # the audio came through


def test_a_reader_that_goes_away_stops_inject_quietly(server: str, tmp_path: Path) -> None:
    """``inject --output - | consumer``: the consumer quits, inject stops with the shell's
    SIGPIPE status and no traceback (finishing the output failed too, and that error hid the
    broken pipe: a traceback and exit 1)."""
    _api(server, "POST", "/channels", {"id": "table3"})
    _api(server, "PUT", "/channels/table3/game", json.dumps(generate_game(5)).encode())
    src = tmp_path / "match.mp4"
    write_input(src, seconds=3.0, size=(320, 180), fps=25)  # paced: three seconds of output
    proc = subprocess.Popen([sys.executable, "-m", "overlay.cli", "inject", "--server", server, "--channel", "table3", "--input", str(src), "--output", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(188 * 8)[0] == 0x47  # MPEG-TS packets are coming
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and "Traceback" not in err, err


def test_an_output_file_that_cannot_be_written_is_removed(server: str, tmp_path: Path) -> None:
    """A write to the output file fails (here the file-size limit, as a full disk would):
    inject says so in one line, exits 2 and leaves no unplayable file, as render does."""
    import resource
    import signal

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (64_000, 64_000))

    _api(server, "POST", "/channels", {"id": "table4"})
    _api(server, "PUT", "/channels/table4/game", json.dumps(generate_game(6)).encode())
    src = tmp_path / "match.mp4"
    write_input(src, seconds=2.0, size=(640, 360), fps=25)
    out = tmp_path / "out.mp4"
    res = subprocess.run([sys.executable, "-m", "overlay.cli", "inject", "--server", server, "--channel", "table4", "--input", str(src), "--output", str(out), "--no-realtime"],
                         capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    assert res.returncode == 2 and "File too large" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not out.exists()


class _SlowOverlay:
    """An overlay that takes three frame periods to draw each picture (a frame of moving cards
    on a core another job holds): a real skia picture, a red square moving one pixel a draw."""

    def __init__(self, size: tuple[int, int], period: float) -> None:
        self.video_size = size
        self.period = period
        self.draws = 0

    def image(self, now: float) -> Any:
        import skia

        time.sleep(3 * self.period)
        self.draws += 1
        surf = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(*self.video_size))
        canvas = surf.getCanvas()
        canvas.clear(0)
        canvas.drawRect(skia.Rect.MakeXYWH(20 + self.draws, 20, 40, 40), skia.Paint(Color=0xFFFF0000))
        return surf.makeImageSnapshot()


def test_a_slow_overlay_skips_its_own_frames_not_the_videos(tmp_path: Path) -> None:
    """Drawing slower than the video: the video keeps its time (no frame dropped or late), the
    overlay's animation shows fewer pictures (counted), and every frame carries the overlay.

    At 10 frames a second: a frame is late a whole period after its time (100 ms).  A machine
    shared with the other test workers made one frame in 30 late by its scheduling alone, now
    and then (at 25 frames a second, 40 ms, more often), so two may be; an overlay that held the
    video back would make most frames late and drop some (each picture takes three periods)."""
    src, dst = tmp_path / "in.mp4", tmp_path / "out.mp4"
    write_input(src, seconds=3.0, size=(320, 180), fps=10)
    overlay = _SlowOverlay((320, 180), 1 / 10)
    stats = inject(str(src), str(dst), overlay, realtime=True)  # type: ignore[arg-type]
    assert stats.frames == 30 and stats.dropped == 0 and stats.late <= 2, stats.line()
    assert stats.late_ms(0.9) < 100.0, stats.late_ms(0.9)  # under one period (100 ms)
    # a picture every three frames: about 20 of the 30 frames show the one before
    assert stats.overlay_skipped >= 15 and "overlay frames skipped" in stats.line(), stats.line()
    with av.open(str(dst)) as c:
        red = [int(((f[..., 0] > 180) & (f[..., 1] < 90) & (f[..., 2] < 90)).sum()) for f in (v.to_ndarray(format="rgb24") for v in c.decode(video=0))]
    assert len(red) == 30 and min(red) > 900, red  # the 40x40 square on every frame
