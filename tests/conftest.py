"""Shared test set-up: plugins of the suites and the path of the shared reference fixtures."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

#: Plugins of individual suites (e.g. the golden-image helper with --update-golden).
pytest_plugins = [m for m in ("tests.golden",) if importlib.util.find_spec(m) is not None]

ROOT = Path(__file__).resolve().parents[1]
#: Reference data made with other people's code; CI has ../shared beside the clone, a
#: user's own clone does not.  Never copied into the repository.
SHARED_EGN = ROOT.parent / "shared" / "fixtures" / "egn"


def shared_egn() -> Path:
    """The shared EGN fixture folder, or skip the test with a clear message."""
    if not SHARED_EGN.is_dir():
        pytest.skip(f"reference fixtures not present at {SHARED_EGN} (they sit beside the clone in CI only)")
    return SHARED_EGN


def shared_files(pattern: str) -> list[Path]:
    """Files of the shared fixture folder for parametrisation (empty when absent)."""
    return sorted(SHARED_EGN.glob(pattern)) if SHARED_EGN.is_dir() else []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests parametrised over the shared fixtures say why they skip when the folder is absent."""
    if SHARED_EGN.is_dir():
        return
    reason = f"reference fixtures not present at {SHARED_EGN} (they sit beside the clone in CI only)"
    for item in items:
        for mark in item.iter_markers("skip"):
            if str(mark.kwargs.get("reason", "")).startswith("got empty parameter set"):
                item.add_marker(pytest.mark.skip(reason=reason), append=False)
                break
