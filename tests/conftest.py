"""Shared test set-up: the plugins of the suites (:mod:`tests.support` for fixture paths,
Chromium, games and the test server; the golden-image helper with --update-golden)."""

from __future__ import annotations

import pytest

pytest_plugins = ["tests.golden", "tests.support"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fake_clock: the service in process runs on the hand-moved `clock` fixture")


def pytest_report_header(config: pytest.Config) -> str:
    """Which engine the run tests (compiled with mypyc, or pure Python), so CI logs show it."""
    from engine import native

    return f"engine: {native.mode()} ({native.status().detail})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests parametrised over the shared fixtures say why they skip when the folder is absent."""
    from tests.support import MISSING_FIXTURES, SHARED_EGN

    if SHARED_EGN.is_dir():
        return
    for item in items:
        for mark in item.iter_markers("skip"):
            if str(mark.kwargs.get("reason", "")).startswith("got empty parameter set"):
                item.add_marker(pytest.mark.skip(reason=MISSING_FIXTURES), append=False)
                break
