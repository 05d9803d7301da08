"""Golden-image fixture (pytest plugin ``tests.golden``; registers ``--update-golden``).

``golden.check("render/deal_start_1080", rgba)`` compares a straight-alpha RGBA array with
``tests/golden/render/deal_start_1080.png``.

Tolerance (documented, small): the images must have the same size; at most 0.1% of pixels
may differ by more than 8/255 in any channel, and no 16x16 block may differ by more than
3/255 on average.  That absorbs anti-aliasing noise between skia builds and CPUs, while a
moved card, a changed colour or a missing element fails.  ``pytest --update-golden``
rewrites the files.  On failure the actual image and a diff image (differences x8, alpha
forced opaque) are saved under the test's ``tmp_path`` and their paths printed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
PIXEL_TOL = 8
PIXEL_SHARE = 0.001
BLOCK = 16
BLOCK_TOL = 3.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False, help="rewrite golden images instead of comparing")


class Golden:
    def __init__(self, update: bool, tmp_path: Path) -> None:
        self.update = update
        self.tmp_path = tmp_path

    def check(self, name: str, rgba: npt.NDArray[np.uint8]) -> None:
        from PIL import Image

        path = GOLDEN_DIR / f"{name}.png"
        if self.update or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(rgba, "RGBA").save(path, optimize=True)
            if not self.update:
                pytest.fail(f"golden {path} did not exist; written now — check it and commit it")
            return
        want = np.asarray(Image.open(path).convert("RGBA"))
        problem = compare(want, rgba)
        if problem:
            actual = self.tmp_path / f"{path.stem}.actual.png"
            diff = self.tmp_path / f"{path.stem}.diff.png"
            Image.fromarray(rgba, "RGBA").save(actual)
            if want.shape == rgba.shape:
                d = np.abs(want.astype(np.int16) - rgba.astype(np.int16)).clip(0, 31) * 8
                d = d.astype(np.uint8)
                d[..., 3] = 255
                Image.fromarray(d, "RGBA").save(diff)
            pytest.fail(f"{name}: {problem}\n  golden: {path}\n  actual: {actual}\n  diff:   {diff}")


def channel_diff(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Per pixel, the largest difference of a channel between two RGBA images (uint8, no wider
    copies: the max of the four channel planes, not a reduction over the last axis)."""
    d = np.maximum(a, b)
    d -= np.minimum(a, b)
    return np.maximum(np.maximum(d[..., 0], d[..., 1]), np.maximum(d[..., 2], d[..., 3]))


def compare(want: npt.NDArray[np.uint8], got: npt.NDArray[np.uint8]) -> str | None:
    """None when ``got`` matches ``want`` within the tolerance, else what is wrong."""
    if want.shape != got.shape:
        return f"size {got.shape[1]}x{got.shape[0]} != golden {want.shape[1]}x{want.shape[0]}"
    d = channel_diff(want, got)
    share = float((d > PIXEL_TOL).mean())
    if share > PIXEL_SHARE:
        return f"{share:.3%} of pixels differ by more than {PIXEL_TOL}/255 (limit {PIXEL_SHARE:.1%})"
    h, w = d.shape
    hb, wb = h // BLOCK, w // BLOCK
    blocks = d[: hb * BLOCK, : wb * BLOCK].reshape(hb, BLOCK, wb, BLOCK).mean(axis=(1, 3))
    worst = float(blocks.max()) if blocks.size else 0.0
    if worst > BLOCK_TOL:
        return f"a {BLOCK}x{BLOCK} block differs by {worst:.1f}/255 on average (limit {BLOCK_TOL})"
    return None


@pytest.fixture
def golden(request: pytest.FixtureRequest, tmp_path: Path) -> Golden:
    return Golden(bool(request.config.getoption("--update-golden")), tmp_path)
