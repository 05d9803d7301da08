"""The video writer: straight-alpha frames encoded with PyAV in this process.

:class:`VideoWriter` encodes into one of :data:`CODECS`: qtrle ``.mov`` (exact alpha, fast),
VP9 ``.webm`` with alpha, ProRes 4444 ``.mov``, a PNG sequence, or H.264 over a solid
background (no alpha).  Closing early still leaves a playable file.  The frames come from
:class:`renderer.frames.FrameSource` (the pure part); this module is the one that writes files.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import skia  # type: ignore[import-not-found]

from renderer.raster import parse_colour, read_straight

__all__ = ["Codec", "CODECS", "Pixels", "VideoWriter", "parse_fps", "video_frame"]

RGBA = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Codec:
    """One output format: PyAV encoder, pixel format, file suffix and encoder options."""

    name: str
    encoder: str  # "" for the PNG sequence (written by PIL, no container)
    pix_fmt: str
    suffix: str
    alpha: bool
    options: Mapping[str, str] = field(default_factory=dict)
    decoder: str | None = None  # the decoder that keeps alpha, when ffmpeg's default drops it
    #: how a repeated picture (a held frame) is written without encoding it again:
    #: "same" (every frame coded on its own: the last packet again), "delta" (a frame coded
    #: against the previous one: an unchanged frame codes to the same small packet every
    #: time), or None (rate control and references: encode it)
    repeat: str | None = None

    @property
    def layout(self) -> str:
        """The pixel layout frames reach the encoder in: its own ``argb`` (qtrle) needs no
        conversion; every other format takes straight ``rgba``."""
        return "argb" if self.pix_fmt == "argb" else "rgba"


#: every format ``render`` writes; qtrle first (the default: lossless alpha, ~4 ms/frame)
CODECS: dict[str, Codec] = {
    "qtrle": Codec("qtrle", "qtrle", "argb", ".mov", True, repeat="delta"),
    # realtime deadline: good quality at crf 24 and 10-20x faster than the default "good"
    "vp9": Codec(
        "vp9",
        "libvpx-vp9",
        "yuva420p",
        ".webm",
        True,
        {"deadline": "realtime", "cpu-used": "8", "row-mt": "1", "crf": "24", "b": "0"},
        decoder="libvpx-vp9",  # ffmpeg's native vp9 decoder drops the alpha plane
    ),
    "prores": Codec("prores", "prores_ks", "yuva444p10le", ".mov", True, {"profile": "4444", "vendor": "apl0"}, repeat="same"),
    "png": Codec("png", "", "rgba", "", True),
    "h264": Codec("h264", "libx264", "yuv420p", ".mp4", False, {"preset": "veryfast", "crf": "18"}),
}


def parse_fps(text: str | float) -> Fraction:
    """``"30"``, ``"29.97"``, ``"30000/1001"`` -> a frame rate (NTSC rates exact).

    Raises:
        ValueError: not a positive rate up to 240.
    """
    try:
        fps = Fraction(str(text)).limit_denominator(1001)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"frame rate {text!r}: expected a number such as 30 or 29.97") from None
    if abs(float(fps) - 29.97) < 0.005:
        fps = Fraction(30000, 1001)
    elif abs(float(fps) - 59.94) < 0.005:
        fps = Fraction(60000, 1001)
    if not 0 < fps <= 240:
        raise ValueError(f"frame rate {text!r}: out of range (0, 240]")
    return fps



# --------------------------------------------------------------------------- pixels


def video_frame(pixels: RGBA, layout: str) -> Any:
    """An ``av.VideoFrame`` holding a copy of packed four-byte ``pixels`` in ``layout``
    (``rgba``, ``argb``): one copy into the frame's plane (PyAV's ``from_ndarray`` took 2 to
    13 ms for a 1080p frame here, this 0.5 ms)."""
    import av

    h, w = pixels.shape[:2]
    frame = av.VideoFrame(w, h, layout)
    plane = frame.planes[0]
    if plane.line_size == w * 4 and pixels.flags.c_contiguous:
        plane.update(pixels)  # type: ignore[arg-type]  # (any buffer)
        return frame
    return av.VideoFrame.from_ndarray(pixels, format=layout)  # rows padded for alignment


class Pixels:
    """Premultiplied skia frames -> the straight-alpha pixels an encoder of ``codec`` takes:
    over ``background`` when there is one (a codec without alpha gets black), in the
    codec's :attr:`Codec.layout`.  The writer and the drawing processes of a parallel render
    (:mod:`overlay.video.parallel`) convert with the same one."""

    def __init__(self, codec: Codec, size: tuple[int, int], background: str | None) -> None:
        self.codec = codec
        w, h = size
        bg = background if background is not None else (None if codec.alpha else "#000000")
        self.background = parse_colour(bg) if bg else None
        self._surface = skia.Surface.MakeRaster(skia.ImageInfo.MakeN32Premul(w, h)) if self.background is not None else None
        self.blank: RGBA = np.zeros((h, w, 4), np.uint8)
        #: whether the last :meth:`update` found its image the same as the one before it, and
        #: the rectangles it converted again, ``(y0, y1, x0, x1)`` (the whole frame at first)
        self.same = False
        self.bands: list[tuple[int, int, int, int]] = []
        self._straight: RGBA | None = None
        self._premul: npt.NDArray[np.uint32] | None = None
        self._spare: npt.NDArray[np.uint32] = np.empty(0, np.uint32)
        self._differs: npt.NDArray[np.bool_] = np.empty(0, bool)
        if self.background is not None:
            r, g, b, a = _rgba_of(self.background)
            self.blank[...] = (a, r, g, b) if codec.layout == "argb" else (r, g, b, a)

    def __call__(self, image: skia.Image | None, out: RGBA | None = None) -> RGBA:
        """The pixels of ``image`` (``None``: an empty frame), into ``out`` when given."""
        if image is None:
            if out is None:
                return self.blank
            out[...] = self.blank
            return out
        return read_straight(self._over(image), out, argb=self.codec.layout == "argb")

    def _over(self, image: skia.Image) -> skia.Image:
        if self._surface is None:
            return image
        canvas = self._surface.getCanvas()
        canvas.clear(self.background)
        canvas.drawImage(image, 0, 0)
        return self._surface.makeImageSnapshot()

    def update(self, image: skia.Image) -> RGBA:
        """The pixels of ``image``, as calling this object gives them, converted again only
        where they differ from the image of the previous call.

        Unpremultiplying is most of a conversion's cost (about 5 ms at 1080p against 0.5 ms to
        read the premultiplied pixels), and a game frame changes a few bands of the picture:
        this reads the premultiplied pixels, compares them with the previous call's, and
        unpremultiplies the changed rectangles (one per band of changed rows) into a buffer
        kept between calls.  :attr:`same` then says whether nothing changed.  The buffer is
        returned and overwritten by the next call: copy it to keep it.
        """
        image = self._over(image)
        h, w = self.blank.shape[:2]
        argb = self.codec.layout == "argb"
        if self._straight is None:
            self._premul = np.empty((h, w), np.uint32)
            self._spare = np.empty((h, w), np.uint32)
            self._straight = np.empty((h, w, 4), np.uint8)
            self._differs = np.empty((h, w // 2), bool)
            _read_premul(image, self._premul)
            self.same = False
            self.bands = [(0, h, 0, w)]
            return read_straight(image, self._straight, argb=argb)
        cur = self._spare
        _read_premul(image, cur)
        assert self._premul is not None
        if w % 2:
            differs = cur != self._premul  # pixel columns
            scale = 1
        else:  # two pixels a comparison: half the work
            differs = np.not_equal(cur.view(np.uint64), self._premul.view(np.uint64), out=self._differs)
            scale = 2
        rows = np.flatnonzero(differs.any(axis=1))
        self._spare, self._premul = self._premul, cur
        self.same = rows.size == 0
        self.bands = []
        if self.same:
            return self._straight
        breaks = np.flatnonzero(np.diff(rows) > _BAND_GAP) + 1
        flat = self._straight.reshape(-1)
        for band in np.split(rows, breaks):
            y0, y1 = int(band[0]), int(band[-1]) + 1
            cols = np.flatnonzero(differs[y0:y1].any(axis=0))
            x0, x1 = int(cols[0]) * scale, (int(cols[-1]) + 1) * scale
            self.bands.append((y0, y1, x0, x1))
            # the band's rectangle of the kept buffer, addressed as rows of the whole width
            view = flat[(y0 * w + x0) * 4 : ((y1 - 1) * w + x1) * 4]
            info = skia.ImageInfo.Make(x1 - x0, y1 - y0, skia.kBGRA_8888_ColorType if argb else skia.kRGBA_8888_ColorType, skia.kUnpremul_AlphaType)
            if not image.readPixels(info, view, w * 4, x0, y0):
                raise RuntimeError("skia readPixels failed")
            if argb:
                self._straight[y0:y1, x0:x1].view(np.uint32).byteswap(inplace=True)
        return self._straight


# --------------------------------------------------------------------------- writer


class VideoWriter:
    """Encodes frames into ``path`` with one of :data:`CODECS`.

    ``container_format`` overrides the muxer chosen from the file name.
    ``write(image)`` takes a premultiplied skia image (or ``None`` for an empty frame);
    frames are numbered in order at ``fps``.  ``close()`` flushes the encoder and finishes
    the container; ``abort(keep=True)`` does the same after an interruption (the file plays
    up to the last frame written) and ``abort(keep=False)`` removes the output.
    """

    def __init__(
        self,
        path: str | Path,
        codec: str | Codec,
        *,
        fps: Fraction,
        size: tuple[int, int],
        background: str | None = None,
        container_format: str | None = None,
    ) -> None:
        import av

        self.codec = codec if isinstance(codec, Codec) else CODECS[codec]
        self.path = Path(path)
        self.fps = fps
        self.size = size
        self.frames = 0
        self._encoded = 0  # frames the encoder thread took (the truth after an interruption)
        #: held frames written as a copy of a packet, not encoded again (Codec.repeat)
        self.copied = 0
        self.closed = False
        self._last_image: Any = _NOTHING
        self._last_name = ""
        self._error: BaseException | None = None
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=8)
        self._thread: threading.Thread | None = None
        w, h = size
        if self.codec.encoder in ("libx264", "libvpx-vp9") or self.codec.pix_fmt.startswith("yuv"):
            if w % 2 or h % 2:
                raise ValueError(f"{self.codec.name} needs an even width and height, got {w}x{h}")
        self.pixels = Pixels(self.codec, size, background)
        self._bg = self.pixels.background
        if not self.codec.encoder:
            self.path.mkdir(parents=True, exist_ok=True)
            self._container: Any = None
            self._stream: Any = None
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._container = av.open(str(self.path), "w", format=container_format)
        stream = self._container.add_stream(self.codec.encoder, rate=fps, options=dict(self.codec.options))
        stream.width, stream.height = w, h
        stream.pix_fmt = self.codec.pix_fmt
        if self.codec.repeat == "delta":
            # a key frame a second (FFmpeg's default is every 12th: a qtrle key frame codes
            # every row, about three times a delta frame's cost); editors still seek quickly
            stream.codec_context.gop_size = max(12, round(float(fps)))
        if self.codec.encoder == "libvpx-vp9":
            # webm: tell players the stream has alpha (the muxer writes the AlphaMode element)
            stream.metadata["alpha_mode"] = "1"
        self._stream = stream
        self._thread = threading.Thread(target=self._work, name="video-writer", daemon=True)
        self._thread.start()

    def over_background(self, rgba: RGBA) -> RGBA:
        """A straight-alpha frame (e.g. a page screenshot) over the background, if any."""
        if self._bg is None:
            return rgba
        a = rgba[..., 3:4].astype(np.uint16)
        bg = np.array(_rgba_of(self._bg)[:3], np.uint16)
        out = np.empty_like(rgba)
        out[..., :3] = ((rgba[..., :3] * a + bg * (255 - a) + 127) // 255).astype(np.uint8)
        out[..., 3] = 255
        return out

    def write(self, image: skia.Image | None) -> None:
        """Append ``image``; the same image again (a held step), or one with the same pixels
        as the image written before it, is written as a repeat."""
        if self.frames and image is self._last_image:
            self.repeat()
            return
        if image is None:
            self.write_pixels(self.pixels.blank)
        else:
            pixels = self.pixels.update(image)  # converted again only where it changed
            if self.frames and self.pixels.same and self._last_image is not None and self._last_image is not _NOTHING:
                self.repeat()
            else:
                self.write_pixels(pixels.copy())
        self._last_image = image

    def write_copy(self, pixels: RGBA) -> None:
        """Append a copy of straight-alpha ``pixels`` in the codec's layout (``pixels`` may
        change as soon as this returns: a parallel render's shared-memory slot)."""
        if self._container is None:
            self.write_pixels(pixels.copy())
        else:
            self.write_frame(video_frame(pixels, self.codec.layout))

    def write_rgba(self, rgba: RGBA) -> None:
        """Append a straight-alpha RGBA frame (the array must not change afterwards)."""
        self.write_pixels(rgba, "rgba")

    def write_pixels(self, pixels: RGBA, layout: str | None = None) -> None:
        """Append a straight-alpha frame in ``layout`` (default the codec's own,
        :meth:`pixels`); the array must not change afterwards."""
        self._last_image = _NOTHING
        self._put(pixels, layout or self.codec.layout)

    def write_frame(self, frame: Any) -> None:
        """Append an ``av.VideoFrame`` holding straight-alpha pixels in the codec's layout (a
        parallel render makes it straight from a worker's shared memory: one copy less)."""
        self._last_image = _NOTHING
        if self._container is None:
            self._put(frame.to_ndarray(), self.codec.layout)
        else:
            self._put(frame, self.codec.layout)

    def repeat(self) -> None:
        """Append the previous picture again (a held frame): never converted again, and for a
        codec with a :attr:`Codec.repeat` rule never encoded again either."""
        if not self.frames:
            raise ValueError("no frame to repeat yet")
        self._put(None, "")

    def _put(self, pixels: Any, layout: str) -> None:
        """Queue frame number ``self.frames``: pixels (an array, or an ``av.VideoFrame``) in ``layout``, or ``None``: the previous picture again."""
        if self._container is None:
            name = f"frame_{self.frames:06d}.png"
            if pixels is None:
                os.link(self.path / self._last_name, self.path / name)
            else:
                from PIL import Image

                if layout == "argb":
                    pixels = np.roll(pixels, -1, axis=2)
                Image.fromarray(pixels, "RGBA").save(self.path / name, compress_level=1)
                self._last_name = name
        else:
            self._check()
            self._queue.put((pixels, layout, self.frames))
        self.frames += 1

    def _work(self) -> None:
        """The encoder thread: converts, encodes and muxes (PyAV releases the GIL there, so
        rasterising the next frame overlaps with encoding this one)."""
        import av

        last: Any = None
        rule = self.codec.repeat
        #: (pts, bytes, keyframe) of the newest packet, and the packet an unchanged frame codes to
        newest: tuple[int, bytes, bool] | None = None
        unchanged: bytes | None = None
        last_pts = -1  # the frame of the picture ``last`` holds, as last given to the encoder
        try:
            while True:
                item = self._queue.get()
                if item is _NOTHING:
                    return
                pixels, layout, pts = item
                copy: tuple[bytes, bool] | None = None
                if pixels is not None:
                    last = pixels if isinstance(pixels, av.VideoFrame) else video_frame(pixels, layout)
                    if layout != self.codec.pix_fmt:
                        last = last.reformat(format=self.codec.pix_fmt)
                    unchanged = None
                elif rule == "same" and newest is not None and newest[0] == last_pts:
                    copy = (newest[1], newest[2])  # coded on its own: the same packet again
                elif rule == "delta" and unchanged is not None:
                    copy = (unchanged, False)
                if copy is not None:
                    packet = av.Packet(copy[0])
                    packet.pts = packet.dts = pts
                    packet.time_base = Fraction(1) / self.fps
                    packet.is_keyframe = copy[1]
                    packet.stream = self._stream
                    self._container.mux(packet)
                    self.copied += 1
                else:
                    last.pts = pts  # in 1/fps units: the encoder's time base
                    for packet in self._stream.encode(last):
                        newest = (int(packet.pts), bytes(packet), bool(packet.is_keyframe))
                        if pixels is None and rule == "delta" and packet.pts == pts and not packet.is_keyframe:
                            unchanged = newest[1]
                        self._container.mux(packet)
                    last_pts = pts
                self._encoded += 1
        except BaseException as exc:  # noqa: BLE001 - handed to the writing thread
            self._error = exc
            while self._queue.get() is not _NOTHING:  # unblock the producer
                pass

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def _finish(self) -> None:
        """Stop the encoder thread after the queued frames."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(_NOTHING)
            self._thread.join()

    def close(self) -> None:
        """Flush and finish the file."""
        if self.closed:
            return
        self.closed = True
        if self._container is not None:
            self._finish()
            self._check()
            for packet in self._stream.encode(None):
                self._container.mux(packet)
            self._container.close()

    def abort(self, *, keep: bool) -> None:
        """After an interruption: finish what was written (``keep``) or remove it."""
        if keep:
            self.close()
            if self._container is not None:
                # Ctrl+C may land between queueing a frame and counting it: say what the file has
                self.frames = self._encoded
            return
        self.closed = True
        if self._container is not None:
            self._finish()
            try:
                self._container.close()
            except Exception:  # noqa: BLE001 - a half-written container may refuse to close
                pass
            self.path.unlink(missing_ok=True)
        else:
            shutil.rmtree(self.path, ignore_errors=True)


_NOTHING = object()


#: changed rows closer than this are converted as one band (a readback has a fixed cost)
_BAND_GAP = 16


def _read_premul(image: skia.Image, out: npt.NDArray[np.uint32]) -> None:
    """The premultiplied pixels of ``image``, one 32-bit word each (compared, not shown)."""
    h, w = out.shape
    if not image.readPixels(skia.ImageInfo.Make(w, h, skia.kBGRA_8888_ColorType, skia.kPremul_AlphaType), out, w * 4, 0, 0):
        raise RuntimeError("skia readPixels failed")


def _rgba_of(colour: int) -> tuple[int, int, int, int]:
    return ((colour >> 16) & 255, (colour >> 8) & 255, colour & 255, (colour >> 24) & 255)
