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


@pytest.mark.parametrize("size", [SIZE, (1281, 720), (1280, 721)], ids=["720p", "odd-width", "odd-height"])
def test_a_new_overlay_picture_is_converted_where_it_changed_to_the_whole_conversion(size: tuple[int, int]) -> None:
    """A card moving, panels coming in: the kept YUVA picture, converted band by band, is the
    whole picture's conversion byte for byte."""
    from renderer.raster import to_rgba

    steps = load_game(json.dumps(generate_game(3)), source="g.egn").timeline.steps
    blender = Blender()
    main = av.VideoFrame(size[0], size[1], "yuv420p")
    for plane in main.planes:
        plane.update(bytes([90]) * plane.buffer_size)
    partial = 0
    for step, t in [(12, 0.0), (12, 0.1), (12, 0.25), (13, 0.0), (13, 0.3), (14, 0.05), (14, 0.6)]:
        overlay = raster(build_broadcast_scene(steps[step], size=size), t)
        blender.blend(main, overlay)
        want = av.VideoFrame.from_ndarray(to_rgba(overlay), format="rgba").reformat(format="yuva420p")
        for got_plane, want_plane in zip(blender._planes, want.planes):
            assert np.array_equal(got_plane, np.frombuffer(want_plane, np.uint8).reshape(want_plane.height, want_plane.line_size)[:, : want_plane.width]), (step, t)
        partial += bool(blender._pixels.bands) and blender._pixels.bands != [(0, size[1], 0, size[0])]
    if size[1] % 2 == 0:
        assert partial >= 3  # converted band by band, not whole


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
