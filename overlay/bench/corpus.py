"""Where benchmarks find their games: the shared reference fixtures, else the project's own.

The reference fixtures (``../shared/fixtures/egn`` beside a clone) are made with other
people's code and never copied into the repository; a user's clone runs the benchmarks on
the bundled demo game or on games dealt by the project's seeded generator instead.
"""

from __future__ import annotations

from pathlib import Path

import assets

__all__ = ["ROOT", "SHARED_FIXTURES", "DEMO_FOLDER", "DEMO_GAME", "default_corpus"]

#: the clone this file sits in (the shared fixtures are looked for beside it: a wheel has none)
ROOT = Path(__file__).resolve().parents[2]
SHARED_FIXTURES = ROOT.parent / "shared" / "fixtures" / "egn"
#: the bundled demo games, found in a checkout and in an installed wheel alike
DEMO_FOLDER = Path(str(assets.DEMO_FOLDER))
DEMO_GAME = DEMO_FOLDER / "demo.egn"


def default_corpus() -> Path:
    """The shared reference fixtures when present, else the bundled demo games."""
    return SHARED_FIXTURES if SHARED_FIXTURES.is_dir() else DEMO_FOLDER
