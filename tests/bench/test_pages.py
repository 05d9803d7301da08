"""``bench pages`` as a user runs it: one JSON object of figures from real launches."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import chromium_or_skip

pytestmark = pytest.mark.browser


def test_bench_pages_prints_both_launches_figures() -> None:
    chromium_or_skip()
    out = subprocess.run(
        [sys.executable, "-m", "overlay.cli", "bench", "pages", "--pages", "1", "--rounds", "1", "--size", "1280x720", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout
    figures = json.loads(out)
    assert figures["pages"] == 1 and figures["rounds"] == 1
    assert figures["page_cpu_s"] > 0 and figures["page_cpu_s_playwright_features"] > 0
    assert figures["page_cpu_s_rounds"] == [figures["page_cpu_s"]]
    (ratio,) = figures["ratio_rounds"]
    assert ratio == pytest.approx(figures["page_cpu_s"] / figures["page_cpu_s_playwright_features"], abs=0.002)
