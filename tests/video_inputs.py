"""Generated test inputs for the video suites: a synthetic match video with a tone."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np


def write_match(path: Path, *, seconds: float = 3.0, size: tuple[int, int] = (320, 180), fps: int = 30, container: str | None = None) -> None:
    """A gradient with a moving bar (H.264) and a 440 Hz tone (AAC, 48 kHz stereo)."""
    import av

    w, h = size
    out = av.open(str(path), "w", format=container)
    vs = out.add_stream("libx264", rate=fps, options={"preset": "ultrafast", "crf": "20"})
    vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
    ac = out.add_stream("aac", rate=48000)
    ac.layout = "stereo"
    frames = int(seconds * fps)
    ramp = np.linspace(40, 200, w, dtype=np.float32)
    rate = 48000
    samples = int(seconds * rate)
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(samples) / rate)).astype(np.float32)
    apos = 0
    for n in range(frames):
        img = np.empty((h, w, 3), np.uint8)
        img[...] = ramp[None, :, None].astype(np.uint8)
        x = (n * 4) % w
        img[:, x : x + 8] = (250, 250, 40)
        f = av.VideoFrame.from_ndarray(img, format="rgb24")
        f.pts = n
        for p in vs.encode(f):
            out.mux(p)
        until = int((n + 1) * rate / fps)
        while apos < until:
            chunk = tone[apos : apos + 1024]
            af = av.AudioFrame.from_ndarray(np.stack([chunk, chunk]), format="fltp", layout="stereo")
            af.sample_rate = rate
            af.pts = apos
            af.time_base = Fraction(1, rate)
            for p in ac.encode(af):
                out.mux(p)
            apos += len(chunk)
    for p in vs.encode(None):
        out.mux(p)
    for p in ac.encode(None):
        out.mux(p)
    out.close()
