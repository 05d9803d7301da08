"""A damaged video given to ``composite`` or ``inject``: one line naming the file and the
fault, exit 2, no traceback (issue 22, item 13).

The damaged files are made here from a real H.264 + AAC match (PyAV, real codecs), three
ways: its header cut off, the codec of its video sample entry renamed (PyAV then opens a
stream without a decoder: ``'NoneType' object has no attribute 'width'`` before the fix),
and a run of its picture data zeroed halfway (the decoder refuses a frame in the middle).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.generate import generate_game
from overlay.bench.export import write_input


def _cut_header(data: bytes) -> bytes:
    return data[:200]


def _unknown_codec(data: bytes) -> bytes:
    entry = data.index(b"avc1", data.index(b"stsd"))
    return data[:entry] + b"zzzz" + data[entry + 4 :]


def _picture_zeroed(data: bytes) -> bytes:
    mdat = data.index(b"mdat")
    at = mdat + (len(data) - mdat) // 2
    return data[:at] + bytes(2000) + data[at + 2000 :]


#: (name, damage, what the one line says)
DAMAGES: list[tuple[str, Callable[[bytes], bytes], str]] = [
    ("header cut", _cut_header, "not a video that can be read (Invalid data found when processing input)"),
    ("unknown codec", _unknown_codec, "video stream #0: its codec is unknown or its header is damaged"),
    ("picture zeroed", _picture_zeroed, "s: cannot be decoded (Invalid data found when processing input)"),
]


@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("match") / "match.mp4"
    write_input(path, seconds=1.0, size=(320, 180), fps=25)
    return path.read_bytes()


@pytest.fixture(scope="module")
def game_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("game") / "g.egn"
    path.write_text(json.dumps(generate_game(3, deals=1)), encoding="utf-8")
    return path


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "overlay.cli", *cmd], capture_output=True, text=True, timeout=180)


def _one_line(res: subprocess.CompletedProcess[str], bad: Path, says: str) -> None:
    lines = [x for x in res.stderr.splitlines() if x.strip() and not x.startswith("euchre-overlay: note:")]
    assert res.returncode == 2, res.stderr[-2000:]
    assert len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith(f"euchre-overlay: {bad}: ") and says in lines[0], lines[0]


@pytest.mark.parametrize("name, damage, says", DAMAGES, ids=[d[0] for d in DAMAGES])
def test_composite_names_the_file_and_the_fault(name: str, damage: Callable[[bytes], bytes], says: str, match: bytes, game_file: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(damage(match))
    out = tmp_path / "out.mp4"
    res = _run(["composite", str(bad), str(game_file), "-o", str(out)])
    _one_line(res, bad, says)
    assert not out.exists()  # no half-made file left behind as if it were the result


@pytest.mark.parametrize("name, damage, says", DAMAGES[:2], ids=[d[0] for d in DAMAGES[:2]])
def test_inject_names_the_file_and_the_fault_before_any_server(name: str, damage: Callable[[bytes], bytes], says: str, match: bytes, tmp_path: Path) -> None:
    """A file that cannot be opened is told at once (no server is asked: port 9 is closed)."""
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(damage(match))
    res = _run(["inject", "--channel", "t", "--input", str(bad), "--output", str(tmp_path / "out.mp4"), "--server", "http://127.0.0.1:9"])
    _one_line(res, bad, says)


def test_inject_finishes_the_output_then_names_the_damaged_frame(match: bytes, tmp_path: Path) -> None:
    """A frame that cannot be decoded halfway through a file: the output written so far is
    finished (playable), then one line names the file, the frame's time and the fault."""
    import av

    bad = tmp_path / "bad.mp4"
    bad.write_bytes(_picture_zeroed(match))
    out = tmp_path / "out.mp4"
    res = _run(["inject", "--serve", "--data", str(tmp_path / "data"), "--channel", "demo", "--input", str(bad), "--output", str(out), "--no-realtime"])
    lines = [x for x in res.stderr.splitlines() if x.startswith(f"euchre-overlay: {bad}")]
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert "cannot be decoded (Invalid data found when processing input)" in lines[0] and "Traceback" not in res.stderr
    with av.open(str(out)) as written:
        assert 0 < sum(1 for _ in written.decode(video=0)) < 25
