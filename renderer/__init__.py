"""Broadcast graphics: scenes (display lists) of game states, and the skia executor.

``build_scene(state, view, theme, timing) -> Scene``; ``raster(scene, t) -> skia.Image``.
"""

from __future__ import annotations

from .build import build_scene
from .scene import Scene
from .theme import DEFAULT_THEME, Theme
from .timing import DEFAULT_TIMING, Timing
from .view import View, default_view

__all__ = ["build_scene", "Scene", "Theme", "DEFAULT_THEME", "Timing", "DEFAULT_TIMING", "View", "default_view"]
