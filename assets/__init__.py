"""Files bundled with the package: the demo games (and the notes on the fonts, whose files
come from pinned font wheels).  Read them through :mod:`importlib.resources`, so they are
found in a checkout and in an installed wheel alike."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

__all__ = ["DEMO_FOLDER", "DEMO_GAME"]

#: the bundled demo games
DEMO_FOLDER: Traversable = files(__name__) / "demo"
#: the game the demo channel loops and ``inspect``/``analyse`` read by default
DEMO_GAME: Traversable = DEMO_FOLDER / "demo.egn"
