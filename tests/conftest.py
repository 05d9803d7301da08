"""Shared test set-up: the plugins of the suites (:mod:`tests.support` for fixture paths,
Chromium, games and the test server; the golden-image helper with --update-golden)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# what the product's command line sets (overlay/cli/__init__.py) for this process, its test
# servers' workers and the commands the tests start: numpy without OpenBLAS's thread pool
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

pytest_plugins = ["tests.golden", "tests.support"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fake_clock: the service in process runs on the hand-moved `clock` fixture")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: no error where xdist is not installed
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (``scripts/bootstrap test``): one worker more than the cores.  A third of the
    suite's test time is waiting (sockets, browsers, a logger's taps, timeouts run out on
    purpose, real-time streams), which a spare worker fills: on the 2-core test machine, in
    alternating runs, three workers took 242 and 241 s where two took 259 and 244 s (for some
    10 % more CPU: the third worker's own browser and imports)."""
    import os

    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_finish(session: pytest.Session) -> None:
    """What import and collection made (every module of the product, numpy, skia, the test
    modules) lives to the end of the run: frozen out of the cyclic collector's scans, as
    ``serve`` does after its start.  A worker's full collections scanned it again each time,
    17-26 of them a run, 4-5.5 s of each worker's ~40 s of CPU (measured with gc.callbacks)."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """At the end of each test file, the same for what outlives it (module caches of games
    and timelines, fixtures kept for the session): one collection of what the file made (the
    frozen objects are not scanned), then frozen."""
    if nextitem is None or nextitem.path != item.path:
        import gc

        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True)
def _cores_kept() -> Iterator[None]:
    """Each test leaves its process on the cores it had: ``bench render`` run from a test once
    held its worker, and every server, render and browser the worker started after, to one core
    for the rest of the run."""
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    yield
    if before is not None:
        after = os.sched_getaffinity(0)
        assert after == before, f"the test left this process on cores {sorted(after)} (it had {sorted(before)})"


def pytest_report_header(config: pytest.Config) -> str:
    """Which engine the run tests (compiled with mypyc, or pure Python), so CI logs show it."""
    from engine import native

    return f"engine: {native.mode()} ({native.status().detail})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first, each file's in its order (pytest-xdist hands tests out in
    this order: a long test collected late, as the 28 s conformance test was, ran alone on one
    worker at the end while the other core idled); tests parametrised over the shared fixtures
    say why they skip when the folder is absent."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable
    from tests.support import MISSING_FIXTURES, SHARED_EGN

    if SHARED_EGN.is_dir():
        return
    for item in items:
        for mark in item.iter_markers("skip"):
            if str(mark.kwargs.get("reason", "")).startswith("got empty parameter set"):
                item.add_marker(pytest.mark.skip(reason=MISSING_FIXTURES), append=False)
                break
