"""inject's blending in the video's own YUV (issue 24 item 7): the same picture as blending in
RGBA, without two full-frame conversions per frame.

Real H.264 frames (decoded with PyAV) and a real scene drawn by skia; the RGBA path
(:func:`renderer.frames.composite_over`, then FFmpeg's conversion to 4:2:0 as the encoder
makes it) is the reference.  Speed is ``euchre-overlay bench export``'s.
"""

from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pytest

from engine.generate import generate_game
from engine.load import load_game
from overlay.bench.export import write_input
from overlay.browser.blend import Blender
from renderer.extras import build_broadcast_scene
from renderer.frames import composite_over
from renderer.raster import raster

SIZE = (1280, 720)


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> list[av.VideoFrame]:
    path = tmp_path_factory.mktemp("blend") / "in.mp4"
    write_input(path, seconds=0.4, size=SIZE, fps=25)
    with av.open(str(path)) as c:
        return [f for f in c.decode(video=0)]


def _planes(frame: av.VideoFrame) -> list[np.ndarray]:
    return [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, : p.width].astype(np.int16) for p in frame.planes]


def test_yuv_blend_gives_the_rgba_blends_picture(frames: list[av.VideoFrame]) -> None:
    steps = load_game(json.dumps(generate_game(3)), source="g.egn").timeline.steps
    overlay = raster(build_broadcast_scene(steps[12], size=SIZE), 0.2)
    blender = Blender()
    for frame in frames[:3]:
        assert frame.format.name == "yuv420p"
        rgba = frame.to_ndarray(format="rgba")
        composite_over(rgba, overlay)
        want = av.VideoFrame.from_ndarray(rgba, format="rgba").reformat(format="yuv420p")
        got = blender.blend(frame, overlay)
        assert got.format.name == "yuv420p" and (got.width, got.height) == SIZE
        y, u, v = (np.abs(a - b) for a, b in zip(_planes(want), _planes(got)))
        assert y.max() <= 2, y.max()  # luma: the same but for rounding
        for c in (u, v):  # chroma: the overlay's edges are subsampled after blending there, before here
            assert (c <= 2).mean() >= 0.995 and c.max() <= 32, ((c <= 2).mean(), c.max())
    assert blender.yuv == 3 and blender.conversions == 1  # one overlay picture, converted once


def test_nothing_on_air_leaves_the_frame_untouched_and_other_formats_blend_in_rgba(frames: list[av.VideoFrame]) -> None:
    blender = Blender()
    frame = frames[0]
    assert blender.blend(frame, None) is frame and blender.untouched == 1
    rgb = frame.reformat(format="rgb24")
    steps = load_game(json.dumps(generate_game(3)), source="g.egn").timeline.steps
    overlay = raster(build_broadcast_scene(steps[12], size=SIZE), 0.2)
    out = blender.blend(rgb, overlay)
    want = rgb.to_ndarray(format="rgba")
    composite_over(want, overlay)
    assert np.array_equal(out.to_ndarray(format="rgba"), want) and blender.rgba == 1
    lossless = Blender(rgb=True)
    lossless.blend(frame, overlay)
    assert lossless.rgba == 1 and lossless.yuv == 0


def test_inject_blends_a_yuv_input_in_yuv(tmp_path: Path) -> None:
    """The path inject takes for a match video (H.264 4:2:0): no RGBA conversion per frame,
    one conversion per overlay picture."""
    from overlay.browser.inject import inject

    src = tmp_path / "in.mp4"
    write_input(src, seconds=0.6, size=(640, 360), fps=25)

    class Still:
        """One picture always on air (what a paused channel's live overlay gives)."""

        video_size = (640, 360)

        def __init__(self) -> None:
            steps = load_game(json.dumps(generate_game(3)), source="g.egn").timeline.steps
            self.picture = raster(build_broadcast_scene(steps[12], size=(640, 360)), 0.2)

        def image(self, now: float) -> object:
            return self.picture

    stats = inject(str(src), str(tmp_path / "out.mp4"), Still(), realtime=False)  # type: ignore[arg-type]
    assert stats.frames == 15 and len(stats.lateness) == 15
    assert (stats.blended_yuv, stats.blended_rgba, stats.overlay_conversions) == (15, 0, 1)
