"""Pinned fonts, loaded by path (never by family name), and text measurement.

The renderer uses the static cuts of Barlow Condensed (SIL OFL 1.1) shipped by the pinned
wheel ``fontpkg-barlow-condensed``.  Each cut has a short *key* (``"semibold"``...); scenes
name fonts by key, the skia executor opens the file, and the page player registers the same
file under the key as its CSS family (``new FontFace(key, url)``), so both sides shape the
same glyphs.

Measurement uses HarfBuzz (``uharfbuzz``) with default features (kerning on), like Chromium,
so that Python can place text by its left edge and the page never has to measure.

Characters Barlow lacks (Chinese, Japanese, Korean names...) come from one pinned fallback,
Noto Sans CJK Bold (SIL OFL 1.1, wheel ``cvttf-notosanscjk-bold``), key ``"cjk"``: a text run
is split into runs of characters Barlow covers and runs it does not, each shaped with its own
font, the way Chromium falls back from a CSS font list (the page draws ``"bold", "cjk"``).
"""

from __future__ import annotations

import math
import os
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cvttf_NotoSansCJK_Bold  # type: ignore[import-untyped]
import fontpkg_barlow_condensed  # type: ignore[import-untyped]
import uharfbuzz as hb  # type: ignore[import-untyped]

__all__ = [
    "FONT_KEYS",
    "FALLBACK",
    "font_files",
    "shape",
    "measure",
    "Shaped",
    "fit_text",
    "Fitted",
    "fit",
    "uses_fallback",
    "quiet_fontconfig",
    "MIN_TEXT",
]

_FILES: dict[str, str] = {
    "medium": "BarlowCondensed-Medium.ttf",
    "semibold": "BarlowCondensed-SemiBold.ttf",
    "bold": "BarlowCondensed-Bold.ttf",
    "extrabold": "BarlowCondensed-ExtraBold.ttf",
}
#: the keys scenes and themes name fonts by (the fallback is not one: it is used only per glyph)
FONT_KEYS: tuple[str, ...] = tuple(_FILES)
#: key of the fallback font for characters the Barlow cuts lack
FALLBACK = "cjk"
#: smallest text size (view px at 1920x1080) a fitted label may shrink to: 20 px at 1080p is
#: 13 px at 720p, the least a viewer reads on a phone-sized stream
MIN_TEXT = 20.0


def font_files() -> dict[str, Path]:
    """Font key -> font file path, for the skia executor and for the server to serve to the page.

    The Barlow cuts, then the fallback (an OpenType/CFF file, ~17 MB: the page loads it too).
    """
    root = Path(fontpkg_barlow_condensed.ROOT) / "files"
    files = {key: root / name for key, name in _FILES.items()}
    files[FALLBACK] = Path(cvttf_NotoSansCJK_Bold.get_TTF_path())
    return files


@contextmanager
def quiet_fontconfig() -> Iterator[None]:
    """Run the first skia font call with the process's stderr closed off.

    skia-python links its own (older) Fontconfig, which reads the system's ``/etc/fonts`` on
    the first font call and warns about elements it does not know (Debian ships
    ``<reset-dirs>``): a line of noise on every ``frame`` run.  The renderer opens every font
    by path and never asks Fontconfig for one, so the warning says nothing about us.  Setting
    ``FONTCONFIG_FILE`` from Python does not reach skia's copy (measured: it only works when
    set before the interpreter starts), so the C-level stderr is pointed at /dev/null for the
    duration of the call instead.  Font loading reports failure by its return value, which
    the caller checks, so nothing of ours is hidden.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield  # no usable stderr: nothing to keep quiet
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


@dataclass(frozen=True)
class Shaped:
    """HarfBuzz output for one string in one font, in em units (multiply by the size)."""

    glyphs: tuple[int, ...]
    x: tuple[float, ...]  # pen x of each glyph, em units (letter-spacing excluded)
    y: tuple[float, ...]
    advance: float  # total advance, em units
    fonts: tuple[str, ...] = ()  # font key of each glyph (the fallback where Barlow lacks it)


@lru_cache(maxsize=None)
def _hb_font(key: str) -> tuple[hb.Font, int]:
    blob = hb.Blob.from_file_path(str(font_files()[key]))
    face = hb.Face(blob)
    font = hb.Font(face)
    upem = face.upem
    font.scale = (upem, upem)
    return font, upem


@lru_cache(maxsize=None)
def _cmap(key: str) -> frozenset[int]:
    return frozenset(hb.Face(hb.Blob.from_file_path(str(font_files()[key]))).unicodes)


def _runs(key: str, text: str) -> list[tuple[str, str]]:
    """Split ``text`` into (font key, run) pieces: Barlow where it has the character, else the
    fallback; marks and joiners stay with the character before them."""
    mine, other = _cmap(key), _cmap(FALLBACK)
    runs: list[tuple[str, str]] = []
    for ch in text:
        cp = ord(ch)
        if runs and (unicodedata.category(ch) in ("Mn", "Me", "Cf") or ch == " " and runs[-1][0] == key):
            runs[-1] = (runs[-1][0], runs[-1][1] + ch)
            continue
        k = key if cp in mine or cp not in other else FALLBACK
        if runs and runs[-1][0] == k:
            runs[-1] = (k, runs[-1][1] + ch)
        else:
            runs.append((k, ch))
    return runs


@lru_cache(maxsize=4096)
def uses_fallback(key: str, text: str) -> bool:
    """Whether drawing ``text`` in font ``key`` needs the fallback font."""
    mine = _cmap(key)
    return any(ord(ch) not in mine and unicodedata.category(ch) not in ("Mn", "Me", "Cf", "Zs") for ch in text)


def _shape_run(key: str, text: str) -> tuple[list[int], list[float], list[float], float]:
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
    return glyphs, xs, ys, pen / upem


@lru_cache(maxsize=8192)
def shape(key: str, text: str) -> Shaped:
    """Shape ``text`` with HarfBuzz (kerning and ligatures as the browser does), falling back
    to the CJK font run by run where Barlow lacks characters."""
    runs = _runs(key, text) if uses_fallback(key, text) else [(key, text)]
    glyphs: list[int] = []
    xs: list[float] = []
    ys: list[float] = []
    fonts: list[str] = []
    pen = 0.0
    for k, run in runs:
        g, x, y, adv = _shape_run(k, run)
        glyphs += g
        xs += [pen + v for v in x]
        ys += y
        fonts += [k] * len(g)
        pen += adv
    return Shaped(tuple(glyphs), tuple(xs), tuple(ys), pen, tuple(fonts))


def measure(key: str, size: float, text: str, spacing: float = 0.0) -> float:
    """Advance width of ``text`` in pixels at ``size`` (plus ``spacing`` after each character)."""
    if not text:
        return 0.0
    return shape(key, text).advance * size + spacing * len(text)


def fit_text(
    key: str, size: float, text: str, width: float, *, spacing: float = 0.0, min_scale: float = 0.72
) -> tuple[str, float]:
    """Make ``text`` fit ``width``: shrink down to ``min_scale`` of ``size``, then add an ellipsis.

    Returns the (possibly shortened) text and the size to draw it at (the letter spacing is
    kept: :func:`fit` also tightens it).
    """
    w = measure(key, size, text, spacing)
    if w <= width:
        return text, size
    floor = size * min_scale
    smaller = _shrink(key, size, text, width, spacing, floor, w)
    if measure(key, smaller, text, spacing) <= width:
        return text, smaller
    return _ellipsis(key, smaller, text, width, spacing), smaller


@dataclass(frozen=True)
class Fitted:
    """Text fitted to a width: what to draw, at which size and letter spacing, and its width."""

    text: str
    size: float
    spacing: float
    width: float


@lru_cache(maxsize=8192)
def fit(key: str, size: float, text: str, width: float, *, spacing: float = 0.0, floor: float = MIN_TEXT) -> Fitted:
    """``text`` made to fit ``width`` the way a broadcast typesetter does: first the letter
    spacing is taken back (down to none), then the size comes down (in quarter pixels, never
    below ``floor``: the least size that reads at 720p, :data:`MIN_TEXT`, unless the text was
    asked smaller than that), and only then are letters cut for an ellipsis.

    Every face is already the condensed cut of the family (Barlow *Condensed*), so there is
    no narrower face to turn to first.  One function measures for both executors: the text
    op carries the result, and the page never measures.
    """
    w = measure(key, size, text, spacing)
    if w <= width:
        return Fitted(text, size, spacing, w)
    tight = min(spacing, 0.0)  # tracking is the first thing a typesetter takes back
    w = measure(key, size, text, tight)
    if w <= width:
        # the spacing that just fits, in hundredths of a pixel (frames stay stable)
        room = (width - measure(key, size, text, 0.0)) / max(1, len(text))
        sp = max(tight, min(spacing, math.floor(room * 100) / 100))
        return Fitted(text, size, sp, measure(key, size, text, sp))
    least = min(size, floor)
    smaller = _shrink(key, size, text, width, tight, least, w)
    w = measure(key, smaller, text, tight)
    if w <= width:
        return Fitted(text, smaller, tight, w)
    cut = _ellipsis(key, smaller, text, width, tight)
    return Fitted(cut, smaller, tight, measure(key, smaller, cut, tight))


def _shrink(key: str, size: float, text: str, width: float, spacing: float, floor: float, w: float) -> float:
    """The largest size in quarter pixels, not under ``floor``, at which ``text`` fits (else ``floor``)."""
    smaller = float(int(size * max(floor / size, width / w) * 4) / 4)  # quarter-pixel steps keep frames stable
    smaller = max(smaller, floor)
    # letter spacing does not shrink with the size, so the first guess can be a little wide
    while smaller > floor and measure(key, smaller, text, spacing) > width:
        smaller = max(floor, smaller - max(0.25, smaller * 0.02))
        smaller = float(int(smaller * 4) / 4)
    return max(smaller, floor)


def _ellipsis(key: str, size: float, text: str, width: float, spacing: float) -> str:
    chars = list(text)
    while chars:
        chars.pop()
        candidate = "".join(chars).rstrip() + "\u2026"
        if measure(key, size, candidate, spacing) <= width:
            return candidate
    return "\u2026"
