"""The writer's incremental conversion (:meth:`overlay.video.writer.Pixels.update`): only the
bands that changed are unpremultiplied again, and the result is the whole conversion's, pixel
for pixel, in every layout, over a background and at odd widths."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.generate import generate_game
from overlay.video.job import JobOptions, load_job
from overlay.video.writer import CODECS, Pixels


@pytest.mark.parametrize(
    "codec, size, background",
    [("qtrle", "320x180", None), ("png", "320x180", None), ("h264", "320x180", "#204060"), ("qtrle", "321x181", None)],
)
def test_update_gives_the_whole_conversion(tmp_path: Path, codec: str, size: str, background: str | None) -> None:
    game = tmp_path / "g.egn"
    game.write_text(json.dumps(generate_game(11, deals=1)), encoding="utf-8")
    job = load_job(JobOptions(game=str(game), size=size, fps="12"))
    src = job.frames()
    whole = Pixels(CODECS[codec], job.size, background)
    part = Pixels(CODECS[codec], job.size, background)
    same = changed = 0
    for n in range(0, job.schedule.frames(job.fps), 2):
        image = src.image(job.schedule.time_of(n, job.fps))
        if image is None:
            continue
        want = whole(image).copy()
        got = part.update(image)
        assert np.array_equal(got, want), n
        if part.same:
            same += 1
        else:
            changed += 1
    assert changed > 20 and same > 0  # both paths taken


def test_update_reports_same_only_for_the_same_pixels() -> None:
    import skia

    px = Pixels(CODECS["qtrle"], (64, 32), None)
    surf = skia.Surface(64, 32)
    canvas = surf.getCanvas()
    canvas.clear(0x80FF0000)
    first = px.update(surf.makeImageSnapshot()).copy()
    assert not px.same
    px.update(surf.makeImageSnapshot())
    assert px.same
    canvas.drawRect(skia.Rect.MakeXYWH(60, 30, 1, 1), skia.Paint(Color=0xFF00FF00))  # one pixel, in a corner
    got = px.update(surf.makeImageSnapshot())
    assert not px.same
    assert tuple(got[30, 60]) == (255, 0, 255, 0)  # A R G B
    assert np.array_equal(np.delete(got.reshape(-1, 4), 30 * 64 + 60, axis=0), np.delete(first.reshape(-1, 4), 30 * 64 + 60, axis=0))
