"""``euchre-overlay serve`` and ``euchre-overlay bench live`` as a user runs them."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from overlay.cli import NAMES, build_parser
from tests.support import ROOT, chromium_or_skip


def test_serve_defaults_bind_localhost() -> None:
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1" and args.port == 8765 and args.data is None and not args.no_demo


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_a_named_subcommand_gets_the_parser_the_whole_command_line_has() -> None:
    whole = _subcommands(build_parser())
    assert sorted(NAMES) == sorted(whole), "NAMES lists every subcommand, and only those"
    for name, full in whole.items():
        alone = _subcommands(build_parser(name))
        assert name in alone and alone[name].format_help() == full.format_help()


def test_serve_starts_without_importing_the_other_commands() -> None:
    """``serve`` (started once per show, and by every scale-out process) registers only
    itself: the video writer and the benchmarks stay unimported."""
    code = (
        "import sys; from overlay.cli import build_parser; build_parser('serve').parse_args(['serve']); "
        "print(sorted(m for m in ('overlay.video.writer', 'overlay.bench.command') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    # the full parser does import them (so the check above means something)
    code = code.replace("build_parser('serve')", "build_parser()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(sorted(("overlay.video.writer", "overlay.bench.command")))


def test_fresh_install_prints_the_obs_url_and_token_once(tmp_path: Path) -> None:
    def start() -> tuple[subprocess.Popen[str], list[str]]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        lines: list[str] = []
        for line in proc.stdout:
            lines.append(line)
            if "/overlay/" in line or "No channels" in line:
                break
        return proc, lines

    proc, lines = start()
    try:
        text = "".join(lines)
        url = re.search(r"(http://127\.0\.0\.1:\d+/overlay/demo)", text)
        assert url, text
        assert "API token" in text
        with urllib.request.urlopen(url.group(1), timeout=10) as r:
            assert r.status == 200 and b"<canvas" in r.read()
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0
    proc, lines = start()
    proc.terminate()
    proc.wait(timeout=15)
    assert "API token" not in "".join(lines)  # printed once, on the first start only


@pytest.mark.slow
@pytest.mark.browser
def test_bench_live_prints_one_json_object() -> None:
    chromium_or_skip()
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from overlay.cli import main; sys.exit(main())", "bench", "live", "--json", "--samples", "4", "--cpu-channels", "1",
         "--channels", "2", "--pages", "2", "--seconds", "1",
         "--fast-actions", "10", "--fast-interval", "0.1", "--deal-rounds", "1", "--deals", "2,5"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["latency_samples"] >= 3
    assert 0 < figures["latency_pixels_p50_ms"] < 1000
    assert figures["scale_pages"] == figures["scale_pages_fed"] == 4 and figures["scale_server_rss_mb"] > 10
    assert figures["lag_actions"] == 10  # the catch-up run, short (90 actions at 0.3 s is the bench's own)
    # the per-deal figures, at the deals asked for (one round here; the bench's own is 7 rounds at 2, 51, 100)
    assert figures["deal_rounds"] == 1 and figures["deal_engine_deal5_median_us"] > 0 and figures["deal_service_deal2_cpu_median_us"] > 0


def test_output_into_a_closed_pipe_stops_quietly() -> None:
    """``euchre-overlay inspect … | head``: the reader goes away, the command stops with the
    shell's SIGPIPE status (141) and says nothing (it printed ``[Errno 32] Broken pipe``)."""
    proc = subprocess.Popen([sys.executable, "-m", "overlay.cli", "inspect", "--steps"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == ""


def test_serve_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "overlay.cli", "serve", "--port", str(port), "--data", str(tmp_path), "--token", "t0ken"],
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 2
    assert res.stderr.strip().endswith(f"127.0.0.1:{port} is in use (another server on it?): stop that one, or pass --port N (--port 0: any free port)"), res.stderr
    assert "Traceback" not in res.stderr


def test_the_json_files_a_command_is_given_read_as_a_game_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--view``, ``--theme``, ``--timing`` and ``--channel-settings`` files: with a UTF-8
    byte-order mark (Notepad) or as UTF-16 (Windows PowerShell) they draw what the plain file
    draws; a broken one is one line naming the option, the file and the place, exit 2 (they
    were tracebacks: a JSONDecodeError, a pydantic ValidationError)."""
    from overlay.cli import main

    demo = str(ROOT / "assets" / "demo" / "demo.egn")
    plain, bom, wide = tmp_path / "plain.json", tmp_path / "bom.json", tmp_path / "wide.json"
    text = json.dumps({"match": {"teams": [{"name": "Red Team"}, {"name": "Blue Team"}]}})  # drawn: the names change
    plain.write_text(text, encoding="utf-8")
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    wide.write_text(text, encoding="utf-16")
    pictures = []
    for name, path in (("plain", plain), ("bom", bom), ("wide", wide)):
        out = tmp_path / f"{name}.png"
        assert main(["frame", demo, "--step", "44", "--size", "320x180", "--channel-settings", str(path), "-o", str(out)]) == 0
        pictures.append(out.read_bytes())
    assert pictures[0] == pictures[1] == pictures[2]
    assert main(["frame", demo, "--step", "44", "--size", "320x180", "-o", str(tmp_path / "none.png")]) == 0
    assert (tmp_path / "none.png").read_bytes() != pictures[0]  # the settings were read, not skipped
    capsys.readouterr()
    broken = tmp_path / "broken.json"
    cases = [
        (["--theme", str(broken)], '{"x": ', f"euchre-overlay: --theme {broken}: line 1, column 7: expecting value"),
        (["--timing", str(broken)], '{"nope": 1}', f"euchre-overlay: --timing {broken}: nope: Extra inputs are not permitted"),
        (["--view", str(broken)], '{"views": 5}', f"euchre-overlay: --view {broken}: its views: legacy views: expected a list, got int"),
        (["--channel-settings", str(broken)], '{"outputs": {"program": {"delay": "x"}}}',
         f"euchre-overlay: --channel-settings {broken}: outputs -> program -> delay: Input should be a valid number, unable to parse string as a number"),
        (["--view", str(tmp_path / "missing.json")], "", f"euchre-overlay: --view {tmp_path / 'missing.json'}: No such file or directory"),
    ]
    for option, content, line in cases:
        broken.write_text(content, encoding="utf-8")
        assert main(["frame", demo, "--step", "44", "--size", "320x180", *option, "-o", str(tmp_path / "x.png")]) == 2, option
        assert capsys.readouterr().err.strip() == line


def test_a_dash_reads_standard_input_and_writes_standard_output(tmp_path: Path) -> None:
    """``cat game.egn | euchre-overlay inspect -``, ``… | convert - -o - | …``: the text tools
    read a game from standard input and write to standard output, as shell tools do (``-``
    was taken for a file name: ``No such file or directory: '-'``); errors name ``stdin``."""
    from engine.generate import generate_game
    from overlay.cli import main

    game_file = tmp_path / "g.egn"
    game_file.write_text(json.dumps(generate_game(5, deals=2)), encoding="utf-8")
    data = game_file.read_bytes()
    assert main(["convert", str(game_file), str(tmp_path / "g.egnb")]) == 0

    def cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "overlay.cli", *args], input=stdin, capture_output=True, cwd=ROOT, timeout=120)

    inspected = cli("inspect", "-", stdin=data.decode().encode("utf-16"))  # as PowerShell pipes it to a file
    assert inspected.returncode == 0 and b"final score" in inspected.stdout, inspected.stderr
    converted = cli("convert", "-", "-o", "-", stdin=data)
    assert converted.returncode == 0 and converted.stdout == (tmp_path / "g.egnb").read_bytes()
    back = cli("convert", "-", "-", stdin=converted.stdout)  # binary in: JSON out
    assert back.returncode == 0 and json.loads(back.stdout)["deals"] == json.loads(data)["deals"]
    broken = cli("baseline", "-", "--hash", stdin=b'{"fileType": ')
    assert broken.returncode == 2 and broken.stderr.decode().strip() == "euchre-overlay: stdin: line 1, column 14: expecting value"


def test_serve_on_a_data_path_that_is_a_file_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``serve --data FILE`` (or a folder under a file) names the file in the way (it said
    ``cannot open the database: File exists``)."""
    from overlay.cli import main

    file = tmp_path / "notes.txt"
    file.write_text("x", encoding="utf-8")
    for data in (file, file / "sub"):
        assert main(["serve", "--data", str(data), "--port", "0", "--no-demo"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"euchre-overlay: {data / 'overlay.sqlite3'}: cannot open the database: {file} is a file, not a folder (--data names a folder)"


def test_the_servers_log_lines_carry_their_time() -> None:
    """``serve`` logs warnings and errors (a refused write, accept errors) to standard error with
    the date and time: Python's fallback had printed the bare message, and a producer reading the
    terminal after a show could not tell when."""
    code = (
        "import logging; from overlay.cli.serve import log_to_terminal; log_to_terminal(); "
        "logging.getLogger('overlay.service.store').error('data/overlay.sqlite3: the database refused the write'); "
        "logging.getLogger('overlay.service.store').info('not shown')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ERROR: data/overlay\.sqlite3: the database refused the write\n", out.stderr), out.stderr


def test_an_output_in_the_way_is_named_and_a_frame_is_a_png_whatever_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` under a file, or naming a folder: one line naming the path and what is in the
    way (it said ``[Errno 17] File exists: 'file'``); ``frame -o shot`` (no ``.png``) writes a
    PNG (it ended in a traceback: "unknown file extension")."""
    from overlay.cli import main
    from tests.support import game

    src = tmp_path / "g.egn"
    src.write_text(json.dumps(game(3, deals=1)), encoding="utf-8")
    (tmp_path / "file").write_text("x")
    (tmp_path / "d.mov").mkdir()
    capsys.readouterr()
    for args, out, why in (
        (["frame", str(src), "--step", "2"], tmp_path / "file" / "x.png", f"{tmp_path / 'file'} is a file, not a folder"),
        (["render", str(src), "--size", "320x180", "--fps", "1"], tmp_path / "file" / "sub" / "x.mov", f"{tmp_path / 'file'} is a file, not a folder"),
        (["render", str(src), "--size", "320x180", "--fps", "1"], tmp_path / "d.mov", "Is a directory"),
    ):
        assert main([*args, "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert re.fullmatch(rf"euchre-overlay: \S*: {re.escape(why)}\n", err) and "Errno" not in err, err
    assert main(["frame", str(src), "--step", "2", "-o", str(tmp_path / "shot"), "--size", "320x180"]) == 0
    assert (tmp_path / "shot").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
