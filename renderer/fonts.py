"""Pinned fonts, loaded by path (never by family name), and text measurement.

The renderer uses the static cuts of Barlow Condensed (SIL OFL 1.1) shipped by the pinned
wheel ``fontpkg-barlow-condensed``.  Each cut has a short *key* (``"semibold"``...); scenes
name fonts by key, the skia executor opens the file, and the page player registers the same
file under the key as its CSS family (``new FontFace(key, url)``), so both sides shape the
same glyphs.

Measurement uses HarfBuzz (``uharfbuzz``) with default features (kerning on), like Chromium,
so that Python can place text by its left edge and the page never has to measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import fontpkg_barlow_condensed  # type: ignore[import-untyped]
import uharfbuzz as hb  # type: ignore[import-untyped]

__all__ = ["FONT_KEYS", "font_files", "shape", "measure", "Shaped", "fit_text"]

_FILES: dict[str, str] = {
    "medium": "BarlowCondensed-Medium.ttf",
    "semibold": "BarlowCondensed-SemiBold.ttf",
    "bold": "BarlowCondensed-Bold.ttf",
    "extrabold": "BarlowCondensed-ExtraBold.ttf",
}
FONT_KEYS: tuple[str, ...] = tuple(_FILES)


def font_files() -> dict[str, Path]:
    """Font key -> TTF path, for the skia executor and for the server to serve to the page."""
    root = Path(fontpkg_barlow_condensed.ROOT) / "files"
    return {key: root / name for key, name in _FILES.items()}


@dataclass(frozen=True)
class Shaped:
    """HarfBuzz output for one string in one font, in em units (multiply by the size)."""

    glyphs: tuple[int, ...]
    x: tuple[float, ...]  # pen x of each glyph, em units (letter-spacing excluded)
    y: tuple[float, ...]
    advance: float  # total advance, em units


@lru_cache(maxsize=None)
def _hb_font(key: str) -> tuple[hb.Font, int]:
    blob = hb.Blob.from_file_path(str(font_files()[key]))
    face = hb.Face(blob)
    font = hb.Font(face)
    upem = face.upem
    font.scale = (upem, upem)
    return font, upem


@lru_cache(maxsize=8192)
def shape(key: str, text: str) -> Shaped:
    """Shape ``text`` with HarfBuzz (kerning and ligatures as the browser does)."""
    font, upem = _hb_font(key)
    buf = hb.Buffer()
    buf.add_str(text)
    buf.guess_segment_properties()
    hb.shape(font, buf, {})
    glyphs: list[int] = []
    xs: list[float] = []
    ys: list[float] = []
    pen = 0.0
    for info, pos in zip(buf.glyph_infos, buf.glyph_positions):
        glyphs.append(info.codepoint)
        xs.append((pen + pos.x_offset) / upem)
        ys.append(-pos.y_offset / upem)
        pen += pos.x_advance
    return Shaped(tuple(glyphs), tuple(xs), tuple(ys), pen / upem)


def measure(key: str, size: float, text: str, spacing: float = 0.0) -> float:
    """Advance width of ``text`` in pixels at ``size`` (plus ``spacing`` after each character)."""
    return shape(key, text).advance * size + spacing * len(text)


def fit_text(
    key: str, size: float, text: str, width: float, *, spacing: float = 0.0, min_scale: float = 0.72
) -> tuple[str, float]:
    """Make ``text`` fit ``width``: shrink down to ``min_scale`` of ``size``, then add an ellipsis.

    Returns the (possibly shortened) text and the size to draw it at.
    """
    w = measure(key, size, text, spacing)
    if w <= width:
        return text, size
    smaller = size * max(min_scale, width / w)
    smaller = float(int(smaller * 4) / 4)  # quarter-pixel steps keep frames stable
    if measure(key, smaller, text, spacing) <= width:
        return text, smaller
    chars = list(text)
    while chars:
        chars.pop()
        candidate = "".join(chars).rstrip() + "\u2026"
        if measure(key, smaller, candidate, spacing) <= width:
            return candidate, smaller
    return "\u2026", smaller
