"""What the test files share: fixture paths, Chromium, game builders, the test server.

Registered as a pytest plugin by ``tests/conftest.py``, so its fixtures (``settings``,
``client``, ``clock``, ``server``, ``chromium``, ``browser``, ``live_analysis``) reach every test file; the helpers are
imported by name.

- **Reference fixtures** were made with other people's code; CI has them beside the clone
  (``../shared/fixtures/egn``, found where the benchmarks find them), a user's clone does
  not, and they are never copied into the repository: tests skip, naming the missing folder.
- **Chromium** is the system one, launched as :mod:`overlay.browser.chromium` says (path and flags),
  once per worker (``chromium``); each test gets contexts of its own (``browser``).  The async
  tests share the worker's event loop (pyproject.toml: loop scope ``session``), which the one
  browser needs.
- **Games** come from the project's seeded generator (the logger actions that write one
  come from the service's own :func:`overlay.service.feed.actions_of`).
- **The service** runs in process (``client``: pytest-aiohttp) or on a real port for a
  browser (``server``), with a fixed token and no demo channel.
"""

from __future__ import annotations

import asyncio
import csv
import importlib.machinery
import importlib.util
import json
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aiohttp import WSMsgType, web

from engine.generate import generate_game
from overlay.service.app import create_app
from overlay.bench.corpus import SHARED_FIXTURES
from overlay.bench.services import empty_game as empty_game  # re-exported: the tests build games with it
from overlay.browser.chromium import CHROMIUM_ARGS, ChromiumMissing, chromium_path
from overlay.service.config import ServerSettings

ROOT = Path(__file__).resolve().parents[1]


def script_module(name: str) -> ModuleType:
    """``scripts/NAME`` (a script without a .py suffix) loaded as a module, for its functions."""
    path = ROOT / "scripts" / name
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module

# --------------------------------------------------------------------------- reference fixtures

#: the shared EGN fixture folder (absent in a user's own clone)
SHARED_EGN = SHARED_FIXTURES
MISSING_FIXTURES = f"reference fixtures not present at {SHARED_EGN} (they sit beside the clone in CI only)"


def shared_egn() -> Path:
    """The shared EGN fixture folder, or skip the calling test naming the missing folder."""
    if not SHARED_EGN.is_dir():
        pytest.skip(MISSING_FIXTURES)
    return SHARED_EGN


def shared_files(pattern: str) -> list[Path]:
    """Fixture files matching ``pattern``, for parametrisation (empty when absent: the
    collection hook in conftest then says why the test skips)."""
    return sorted(SHARED_EGN.glob(pattern)) if SHARED_EGN.is_dir() else []


def shared_names(pattern: str) -> list[str]:
    """Like :func:`shared_files`, as paths relative to :data:`SHARED_EGN` (readable test ids)."""
    return [str(p.relative_to(SHARED_EGN)) for p in shared_files(pattern)]


def tsv_rows(name: str) -> list[tuple[str, ...]]:
    """Rows of every ``name`` TSV (header dropped); the first column is made relative to SHARED_EGN."""
    rows = []
    for table in shared_files(f"**/{name}"):
        folder = table.parent.relative_to(SHARED_EGN)
        with table.open(encoding="utf-8", newline="") as fh:
            for row in list(csv.reader(fh, delimiter="\t"))[1:]:
                if row:
                    rows.append((str(folder / row[0]), *row[1:]))
    return rows


# --------------------------------------------------------------------------- Chromium


def chromium_or_skip() -> str:
    """The system Chromium (as :func:`overlay.browser.chromium.chromium_path` finds it), or skip."""
    try:
        return chromium_path()
    except ChromiumMissing as exc:
        pytest.skip(str(exc))


#: Chromium's headless shell as Debian installs it (package ``chromium-headless-shell``, built
#: from the same sources as ``chromium``; ``scripts/bootstrap`` installs both)
HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")


def page_chromium() -> str:
    """The Chromium the tests drive their pages in (the worker's :func:`chromium`):
    ``$EUCHRE_OVERLAY_TEST_CHROMIUM``, else the headless shell when installed, else the
    product's :func:`overlay.browser.chromium.chromium_path` (or skip).

    The shell is the same Blink and skia without the browser's window machinery: a studio page
    in a new context costs 0.15-0.20 s of CPU against 0.29-0.32 s (the browser tests alone,
    ``-m browser``, alternating: 148 and 155 against 182 and 174 s of machine CPU).  The product's
    own launches (``capture``, ``inject``, the benchmarks) keep ``chromium_path()``, so the
    tests that run them hold both binaries' pictures to skia's (tests/video/test_onair_conformance.py
    compares the page in one with ``capture`` and ``inject`` in the other)."""
    env = os.environ.get("EUCHRE_OVERLAY_TEST_CHROMIUM")
    if env and os.path.exists(env):
        return env
    if HEADLESS_SHELL.exists():
        return str(HEADLESS_SHELL)
    return chromium_or_skip()


def launch_options() -> dict[str, Any]:
    """Keyword arguments of playwright's ``chromium.launch`` (sync or async) for the tests'
    own browser (:func:`page_chromium`), or skip."""
    return {"executable_path": page_chromium(), "args": CHROMIUM_ARGS, "headless": True}


#: the origin under which :func:`serve_player_page` serves the page, the player and its fonts
PLAYER_ORIGIN = "https://player.test"
#: the player module's URL there: a page imports it (``await import(PLAYER_MODULE)``)
PLAYER_MODULE = f"{PLAYER_ORIGIN}/static/player.js"


async def serve_player_page(page: Any, html: str, font_files: dict[str, Path]) -> dict[str, str]:
    """Route :data:`PLAYER_ORIGIN` on a playwright page as the overlay serves it: ``/static/*``
    from ``overlay/static`` (the player fetches ``ops.json`` beside itself), ``/fonts/KEY.ttf``
    from the pinned fonts and anything else as ``html``.  Returns the player's ``fontUrls``."""
    static = ROOT / "overlay" / "static"

    def serve(route: Any) -> Any:
        path = route.request.url[len(PLAYER_ORIGIN) :]
        if path.startswith("/static/"):
            name = path[len("/static/") :]
            kind = "application/json" if name.endswith(".json") else "text/javascript"
            return route.fulfill(body=(static / name).read_bytes(), content_type=kind)
        if path.startswith("/fonts/"):
            return route.fulfill(body=font_files[path[len("/fonts/") : -4]].read_bytes(), content_type="font/ttf")
        return route.fulfill(body=html, content_type="text/html")

    await page.route(f"{PLAYER_ORIGIN}/**", serve)
    return {k: f"{PLAYER_ORIGIN}/fonts/{k}.ttf" for k in font_files}


def serve_fonts(page: Any, font_files: dict[str, Path]) -> dict[str, str]:
    """Route ``https://fonts.test/KEY.ttf`` on a playwright page (sync or async) to the
    renderer's pinned font files; returns the URLs for the player's ``fontUrls``."""

    def serve(route: Any) -> Any:
        key = route.request.url.rsplit("/", 1)[1][:-4]
        return route.fulfill(body=font_files[key].read_bytes(), content_type="font/ttf")

    page.route("https://fonts.test/*", serve)
    return {k: f"https://fonts.test/{k}.ttf" for k in font_files}


@pytest.fixture(scope="session")
async def chromium() -> AsyncIterator[Any]:
    """The worker's async playwright Chromium, launched once (a launch costs about 1.5 s of CPU
    between the driver and the browser; the browser tests would launch it 60 times).  Tests
    reach it through :func:`browser`, which gives each test contexts of its own."""
    options = launch_options()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        b = await pw.chromium.launch(**options)
        yield b
        await b.close()


class TestBrowser:
    """The worker's Chromium as one test sees it: ``new_context`` and ``new_page`` as
    playwright's ``Browser`` has them, each page in a context of its own (cookies, storage,
    offline state), every context closed when the test ends, so no page of one test outlives it."""

    __test__ = False  # not a test class

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self._contexts: list[Any] = []

    async def new_context(self, **options: Any) -> Any:
        ctx = await self._browser.new_context(**options)
        self._contexts.append(ctx)
        return ctx

    async def new_page(self, **options: Any) -> Any:
        return await (await self.new_context(**options)).new_page()

    async def close(self) -> None:
        for ctx in self._contexts:
            await ctx.close()
        self._contexts.clear()


@pytest.fixture
async def browser(chromium: Any) -> AsyncIterator[TestBrowser]:
    """Chromium for one test (the worker's one browser, with contexts closed at the end)."""
    b = TestBrowser(chromium)
    yield b
    await b.close()


# --------------------------------------------------------------------------- games


def game(seed: int = 7, deals: int = 2) -> dict[str, Any]:
    """A generated EGN game (``deals`` deals, dealt from ``seed``)."""
    return generate_game(seed, deals=deals)


def match_doc(seeds: tuple[int, ...] = (1, 2, 3), *, deals: int = 2) -> dict[str, Any]:
    """An EMN match of generated games, its players named after the games' players."""
    games = [generate_game(s, deals=deals) for s in seeds]
    names = sorted({n for g in games for n in g["metadata"]["players"]})
    return {
        "fileType": "Euchre Match Notation",
        "version": "1.0",
        "metadata": {"title": "Test match", "players": [{"id": f"p{i}", "name": n} for i, n in enumerate(names)]},
        "games": [
            {"gameIndex": i, "players": [f"p{names.index(n)}" for n in g["metadata"]["players"]], "gameData": g}
            for i, g in enumerate(games)
        ],
    }


# --------------------------------------------------------------------------- the service

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class FakeClock:
    """A clock the test moves by hand (``clock.t += 1.5``), injected through
    ``ServerSettings.clock``: delays and playback without waiting."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> ServerSettings:
    """The service on a fresh data folder, token :data:`TOKEN`, no demo; on the real clock,
    or on the ``clock`` fixture for tests marked ``fake_clock``; live analysis on for every
    channel where the test asks for ``live_analysis``, else off (whatever the environment says)."""
    analysis = "live_analysis" in request.fixturenames
    if request.node.get_closest_marker("fake_clock") is not None:
        fake: FakeClock = request.getfixturevalue("clock")
        return ServerSettings(data_dir=tmp_path, token=TOKEN, demo=False, clock=fake, analysis=analysis)
    return ServerSettings(data_dir=tmp_path, token=TOKEN, demo=False, analysis=analysis)


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    """The service in process (pytest-aiohttp's test client)."""
    return await aiohttp_client(create_app(settings))


async def make_channel(client: Any, cid: str = "t1", doc: dict[str, Any] | None = None) -> None:
    """Create channel ``cid`` and, with ``doc``, PUT it as the channel's game."""
    r = await client.post("/api/channels", json={"id": cid}, headers=AUTH)
    assert r.status == 201, await r.text()
    if doc is not None:
        r = await client.put(f"/api/channels/{cid}/game", data=json.dumps(doc), headers=AUTH)
        assert r.status == 200, await r.text()


async def scene_msg(ws: Any, timeout: float = 3.0) -> dict[str, Any]:
    """The next scene message on a page socket (other messages skipped)."""
    while True:
        msg = await ws.receive(timeout=timeout)
        assert msg.type == WSMsgType.TEXT, msg
        data: dict[str, Any] = json.loads(msg.data)
        if data["type"] == "scene":
            return data


async def assert_no_analysis(ws: Any, *, quiet: float) -> None:
    """Read a page socket until it has been quiet for ``quiet`` seconds; no message may be an
    analysis (an output that must never get one)."""
    while True:
        try:
            msg = json.loads((await ws.receive(timeout=quiet)).data)
        except asyncio.TimeoutError:
            break
        assert msg["type"] != "analysis"


@pytest.fixture
def live_analysis() -> None:
    """The service's live analysis switched on for every channel (a real process pool, the
    app's: it stops with the app): the ``settings`` fixture reads that a test asks for it."""


async def until(check: Callable[[], Awaitable[Any]], timeout: float = 1.0, *, every: float = 0.02) -> float:
    """Seconds until ``await check()`` is true, asked every ``every`` s; fails after ``timeout``."""
    t0 = time.monotonic()
    while True:
        if await check():
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"not within {timeout} s")
        await asyncio.sleep(every)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """The real service on a fixed port (what a browser connects to), restartable on the
    same data."""

    def __init__(self, data: Path) -> None:
        self.settings = ServerSettings(data_dir=data, token=TOKEN, demo=False, port=free_port())
        self.runner: web.AppRunner | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.settings.port}"

    async def start(self) -> None:
        self.runner = web.AppRunner(create_app(self.settings))
        await self.runner.setup()
        await web.TCPSite(self.runner, self.settings.host, self.settings.port, reuse_address=True).start()

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def api(self, method: str, path: str, **kw: Any) -> Any:
        """One API call with the token; asserts success and returns the JSON body."""
        import aiohttp

        async with aiohttp.ClientSession() as s:
            async with s.request(method, self.base + path, headers=AUTH, **kw) as r:
                body = await r.json()
                assert r.status < 300, body
                return body


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(tmp_path)
    await srv.start()
    yield srv
    await srv.stop()
