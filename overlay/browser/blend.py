"""The overlay laid over decoded video frames, for ``inject``: in the video's own YUV where it can.

A match video decodes to YUV 4:2:0.  Turning every frame into RGBA, blending there and
turning it back costs two full-frame conversions (measured at 1080p: 6 ms to RGBA, 5 ms to
blend, 7 ms back, of a 33 ms frame period), although the overlay changes only while something
on it moves.  So :class:`Blender` converts the *overlay* instead, once per new overlay picture
(straight RGBA to YUVA 4:2:0, FFmpeg's conversion, the one the encoder applied to the blended
RGBA before), and lays it over each frame with FFmpeg's ``overlay`` filter in YUV
(``format=yuv420``); a frame with nothing on air goes to the encoder untouched.  Both
conversions use the same coefficients, so the video's pixels where the overlay is
transparent come out as they went in, and the overlay's colours as the RGBA path gives them
but for the 4:2:0 chroma of its edges (where the video's own chroma is 4:2:0 anyway).

A new overlay picture is converted again only where it changed from the one before: its
changed bands are unpremultiplied (:meth:`overlay.video.writer.Pixels.update`) and the tiles
of rows they touch converted to YUVA, each with a margin of rows around it (FFmpeg's vertical
chroma filter reads the rows next to a row pair), copied into the kept YUVA picture: the same
planes as a whole conversion, byte for byte, for a fraction of its cost (a game frame moves
one card or panel; measured at 1080p: about 6 ms to unpremultiply and 6 ms to convert a whole
picture).  :meth:`Blender.prepare` does that, :meth:`Blender.blend_prepared` lays the result
over a frame: ``inject`` prepares in its painter thread while the video's thread blends.

Any other input (RGB, 10-bit, 4:4:4), and a lossless RGB output, takes the RGBA path: skia
blends the premultiplied overlay over the frame (:func:`renderer.frames.composite_over`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import skia  # type: ignore[import-not-found]

__all__ = ["Blender", "Prepared"]

#: the decoded formats blended in YUV (others take the RGBA path)
YUV_FORMATS = frozenset({"yuv420p"})
#: rows copied on each side of a changed band (a chroma row is filtered from the luma rows
#: around its pair, so the pairs next to a change change too), and rows converted beyond
#: those (what the filter reads around them); both even, checked against whole conversions
#: in the tests
REACH, MARGIN = 2, 4
#: rows of a tile: a changed picture is converted tile by tile, each tile with its margin, so
#: that FFmpeg's conversion context is made once (making one costs more than converting a
#: tile: 1.8 ms against 0.33 ms at 1080p)
TILE = 64


@dataclass(frozen=True)
class Prepared:
    """An overlay picture ready to blend: the picture (``None``: nothing on air) and, for the
    YUV blend, its YUVA 4:2:0 frame (``None``: blended in RGBA)."""

    image: skia.Image | None
    yuva: Any


class Blender:
    """Lays overlay pictures over decoded frames; one per video (a graph of its size).

    ``rgb``: the encoder takes RGB (a lossless output): every frame takes the RGBA path.
    """

    def __init__(self, *, rgb: bool = False) -> None:
        self.rgb = rgb
        self._graph: Any = None
        self._shape: tuple[int, int, str] | None = None
        self._overlay: skia.Image | None = None
        self._overlay_frame: Any = None  # the kept YUVA picture (changed in place)
        self._prepared: Prepared | None = None
        self._pixels: Any = None  # overlay.video.writer.Pixels of the overlay pictures (straight RGBA)
        self._planes: list[Any] = []  # the kept YUVA picture's planes, as arrays
        self._reformatters: dict[int, Any] = {}  # by rows converted
        self._n = 0
        #: frames blended in YUV, in RGBA, and passed through with nothing on air
        self.yuv = self.rgba = self.untouched = 0
        #: new overlay pictures converted to YUVA
        self.conversions = 0

    def blend(self, frame: Any, overlay: skia.Image | None) -> Any:
        """``frame`` (an ``av.VideoFrame``) with ``overlay`` (premultiplied, the frame's
        size, or ``None``) over it: a new frame for the encoder (its pts is the caller's)."""
        yuv = not self.rgb and frame.format.name in YUV_FORMATS
        return self.blend_prepared(frame, self.prepare(overlay, yuv=yuv))

    def prepare(self, overlay: skia.Image | None, *, yuv: bool = True) -> Prepared:
        """``overlay`` ready for :meth:`blend_prepared`: with ``yuv``, converted to YUVA (only
        where it changed since the last picture prepared; the same picture again costs
        nothing).  The result is never changed afterwards, so another thread may prepare the
        next picture while this one is blended (``inject``'s painter)."""
        if overlay is None:
            return Prepared(None, None)
        if not yuv:
            return Prepared(overlay, None)
        if overlay is not self._overlay or self._prepared is None:
            self._convert(overlay)
            self._overlay = overlay
            self.conversions += 1
            self._prepared = Prepared(overlay, _copy(self._overlay_frame))
        return self._prepared

    def blend_prepared(self, frame: Any, prepared: Prepared) -> Any:
        """``frame`` with an overlay from :meth:`prepare` over it: a new frame for the encoder."""
        from ..video.writer import video_frame

        fmt = frame.format.name
        if self.rgb or fmt not in YUV_FORMATS or (prepared.image is not None and prepared.yuva is None):
            from renderer.frames import composite_over

            rgba = frame.to_ndarray(format="rgba")
            composite_over(rgba, prepared.image)
            self.rgba += 1
            return video_frame(rgba, "rgba")
        if prepared.image is None:
            self.untouched += 1
            return frame
        over_frame = prepared.yuva
        shape = (frame.width, frame.height, fmt)
        if self._graph is None or self._shape != shape:
            self._graph = self._make_graph(*shape)
            self._shape = shape
        _, main, over, sink = self._graph
        self._n += 1
        frame.pts = self._n
        frame.time_base = _TB
        over_frame.pts = self._n
        over_frame.time_base = _TB
        main.push(frame)
        over.push(over_frame)
        out = sink.pull()
        self.yuv += 1
        return out

    def _convert(self, overlay: skia.Image) -> None:
        """The kept YUVA picture becomes ``overlay``: converted again where it changed."""
        from av.video.reformatter import VideoReformatter

        from ..video.writer import CODECS, Pixels, video_frame

        w, h = overlay.width(), overlay.height()
        if self._pixels is None or self._pixels.blank.shape[:2] != (h, w):
            self._pixels = Pixels(CODECS["png"], (w, h), None)  # straight RGBA
            self._overlay_frame = None
        straight = self._pixels.update(overlay)
        if self._overlay_frame is None or h % 2:  # (an odd height scales chroma by other than 2: whole)
            self._overlay_frame = video_frame(straight, "rgba").reformat(format="yuva420p")
            self._planes = _planes(self._overlay_frame)
            return
        tiles = sorted({t for y0, y1, _, _ in self._pixels.bands for t in range(max(0, y0 - REACH) // TILE, (min(h, y1 + REACH) - 1) // TILE + 1)})
        for t in tiles:
            inner0, inner1 = t * TILE, min(h, (t + 1) * TILE)
            top, bottom = max(0, inner0 - MARGIN), min(h, inner1 + MARGIN)
            rows = bottom - top
            reformatter = self._reformatters.get(rows)
            if reformatter is None:  # one per tile height: FFmpeg's context made once
                reformatter = self._reformatters[rows] = VideoReformatter()
            band = _planes(reformatter.reformat(video_frame(straight[top:bottom], "rgba"), format="yuva420p"))
            for k, (kept, new) in enumerate(zip(self._planes, band)):
                sub = 2 if k in (1, 2) else 1  # U and V: half the rows
                end = -(-inner1 // sub)
                kept[inner0 // sub : end] = new[(inner0 - top) // sub : end - top // sub]

    @staticmethod
    def _make_graph(width: int, height: int, fmt: str) -> tuple[Any, Any, Any, Any]:
        """The graph (kept: its filters live as long as it does), its two inputs and output."""
        import av

        graph = av.filter.Graph()
        main = graph.add_buffer(width=width, height=height, format=av.VideoFormat(fmt), time_base=_TB)
        over = graph.add_buffer(width=width, height=height, format=av.VideoFormat("yuva420p"), time_base=_TB)
        # every frame comes with its overlay picture: the filter never waits for the next one
        lay = graph.add("overlay", "format=yuv420:eof_action=repeat:repeatlast=1")
        sink = graph.add("buffersink")
        main.link_to(lay, 0, 0)
        over.link_to(lay, 0, 1)
        lay.link_to(sink)
        graph.configure()
        return graph, main, over, sink


_TB = Fraction(1, 1000)


def _copy(frame: Any) -> Any:
    """A copy of a YUVA frame (its planes), which the kept picture's next change leaves alone."""
    import av

    out = av.VideoFrame(frame.width, frame.height, frame.format.name)
    for dst, src in zip(out.planes, frame.planes):
        if dst.line_size == src.line_size:
            dst.update(src)
        else:  # (the same format and size: the same layout, but be safe)
            _planes_of(dst)[...] = _planes_of(src)
    return out


def _planes_of(plane: Any) -> Any:
    """One plane as a (rows, width) array over its own memory."""
    import numpy as np

    return np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]


def _planes(frame: Any) -> list[Any]:
    """The planes of ``frame`` as (rows, width) arrays over its own memory."""
    return [_planes_of(p) for p in frame.planes]
