"""A built wheel serves: ``pip install`` of it, outside the checkout, runs ``serve`` and
answers the demo page, the studio and a font.

The wheel is built from a copy of the sources (so the build leaves nothing in the checkout)
and installed into a fresh virtual environment in a temporary folder; ``serve`` runs there
with the temporary folder as its working directory and no ``PYTHONPATH``, so the checkout is
not on ``sys.path`` and every file the service reads (pages, scripts, fonts' page, the demo
game) must come from the installed package.

Dependencies: by default the fresh environment borrows the third-party packages of the
interpreter running the tests (a ``.pth`` line naming its site-packages, searched after the
environment's own, so the project's modules come from the wheel, which the test checks);
installing skia, PyAV and playwright from PyPI into every test run would cost a minute or
more.  ``EUCHRE_OVERLAY_WHEEL_DEPS=pypi`` installs the wheel with its dependencies from the
package index instead (what a user's ``pip install`` does).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT, free_port

#: one worker builds the wheel for every test here (under pytest-xdist's --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

#: what goes into the wheel: the five top-level folders and the build's own files
SOURCES = ("engine", "renderer", "overlay", "studio", "assets", "pyproject.toml", "README.md")
PACKAGES = ("engine", "renderer", "overlay", "studio", "assets")


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _clean_env() -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH (it would put the checkout back)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment holding the built wheel; yields its ``bin`` folder."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.egg-info"))
        else:
            shutil.copy2(path, src / name)
    env = _clean_env()
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(src)], cwd=base, env=env, timeout=300)
    (wheel,) = dist.glob("euchre_overlay-*.whl")
    home = base / "venv"
    from_index = os.environ.get("EUCHRE_OVERLAY_WHEEL_DEPS") == "pypi"
    venv.EnvBuilder(with_pip=from_index, clear=True).create(home)
    python = home / "bin" / "python"
    if from_index:
        _run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], cwd=base, env=env, timeout=1800)
    else:
        _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--quiet", str(wheel)], cwd=base, env=env, timeout=300)
        purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base, env=env, timeout=60).strip())
        borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
        (purelib / "_borrowed_deps.pth").write_text("".join(f"{p}\n" for p in sorted(borrowed)), encoding="utf-8")
    yield home / "bin"


def test_the_wheel_holds_the_packages_and_their_files(installed: Path) -> None:
    """Every package and bundled file comes from the installed wheel, not the checkout."""
    code = (
        "import sys, importlib\n"
        f"for name in {PACKAGES!r}:\n"
        "    print(name, importlib.import_module(name).__file__)\n"
        "import assets; print('demo', assets.DEMO_GAME, assets.DEMO_GAME.is_file())\n"
        "print('path', *sys.path, sep='\\n')\n"
    )
    out = _run([str(installed / "python"), "-c", code], cwd=installed.parent.parent, env=_clean_env(), timeout=60)
    site = str(installed.parent / "lib")
    files = dict(line.split(" ", 1) for line in out.splitlines() if line.split(" ", 1)[0] in PACKAGES)
    assert set(files) == set(PACKAGES)
    assert all(f.startswith(site) for f in files.values()), files
    assert f"demo {site}" in out and out.split("demo ", 1)[1].split("\n", 1)[0].endswith("demo.egn True")
    assert str(ROOT) not in out.split("path\n", 1)[1].split("\n"), "the checkout is on sys.path"


def test_serve_from_the_wheel_answers_the_demo_page_the_studio_and_a_font(installed: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [str(installed / "euchre-overlay"), "serve", "--port", str(port), "--data", str(tmp_path / "data")],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        lines: list[str] = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "Studio" in line:
                break
        assert any("serving on" in line for line in lines), "".join(lines)
        # serve's default address is this computer's only: it says so, and how to open it up
        assert any(line.startswith("Only this computer can reach it") and "serve --host 0.0.0.0" in line for line in lines), "".join(lines)
        base = f"http://127.0.0.1:{port}"

        def get(path: str) -> tuple[int, bytes]:
            with urllib.request.urlopen(base + path, timeout=30) as r:
                return r.status, r.read()

        status, page = get("/overlay/demo")
        assert status == 200
        fonts = re.findall(r"/fonts/[\w-]+\.ttf", page.decode())
        assert fonts, "the demo page names no font"
        status, studio = get("/studio")
        assert status == 200 and b"<html" in studio.lower()
        status, font = get(fonts[0])
        assert status == 200 and len(font) > 10_000
        status, script = get("/static/player.js")
        assert status == 200 and script
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
