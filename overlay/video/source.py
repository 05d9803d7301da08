"""A video to read (``composite``'s match, ``inject``'s input), opened and checked first.

PyAV opens some damaged files without complaint and fails later in ways that name neither
the file nor the fault: a sample entry with an unknown codec gives a stream whose
``codec_context`` is None (``AttributeError: 'NoneType' object has no attribute 'width'``),
undecodable metadata a ``UnicodeDecodeError``, a damaged picture an ``InvalidDataError``
halfway through.  :func:`open_video` turns each of these into one :class:`VideoInputError`
(an ``OSError``: the CLI prints it as one line and exits 2) that names the file, where in
it, and the fault; :func:`decode_fault` does the same for a frame that cannot be decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["VideoInputError", "VideoInput", "open_video", "decode_fault"]


class VideoInputError(OSError):
    """A video input that cannot be read: the message is ``SOURCE: [where: ]fault``."""

    def __init__(self, source: str, fault: str, *, where: str = "") -> None:
        self.source = source
        self.where = where
        self.fault = fault
        super().__init__(f"{source}: {where + ': ' if where else ''}{fault}")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class VideoInput:
    """An opened video: the container, its first video stream (with a decoder and a frame
    size) and its first audio stream, if any."""

    source: str
    container: Any
    video: Any
    audio: Any | None

    @property
    def size(self) -> tuple[int, int]:
        return int(self.video.codec_context.width), int(self.video.codec_context.height)

    def close(self) -> None:
        self.container.close()


def _why(exc: BaseException) -> str:
    """FFmpeg's own words for a fault, without PyAV's ``[Errno N]`` and the repeated path."""
    text = getattr(exc, "strerror", None)
    if isinstance(exc, UnicodeDecodeError):
        return f"its metadata is not text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, EOFError):
        return "it ends before its header does"
    return str(text) if text else (str(exc) or type(exc).__name__)


def open_video(source: str, *, options: dict[str, str] | None = None, timeout: float | None = None) -> VideoInput:
    """Open ``source`` (a path or a stream URL) and check it has a video stream that can be
    decoded.  Metadata that is not valid UTF-8 is read with replacement characters (a tag
    must not stop a match from playing).

    Raises:
        VideoInputError: it cannot be opened, has no video stream, names a codec this
            FFmpeg cannot decode, or gives no frame size.
    """
    import av

    try:
        container = av.open(source, options=options or {}, timeout=timeout, metadata_errors="replace")
    except (av.error.FFmpegError, EOFError, UnicodeDecodeError) as exc:
        raise VideoInputError(source, f"not a video that can be read ({_why(exc)})") from None
    try:
        if not container.streams.video:
            raise VideoInputError(source, "no video stream")
        video = container.streams.video[0]
        where = f"video stream #{video.index}"
        if video.codec_context is None:
            raise VideoInputError(source, "its codec is unknown or its header is damaged: no decoder for it", where=where)
        if video.codec_context.width <= 0 or video.codec_context.height <= 0:
            raise VideoInputError(source, "no frame size in its header (damaged)", where=where)
        audio = container.streams.audio[0] if container.streams.audio else None
        if audio is not None and audio.codec_context is None:
            audio = None  # an audio stream that cannot be copied: the picture goes on without it
    except BaseException:
        container.close()
        raise
    return VideoInput(source, container, video, audio)


def decode_fault(source: str, exc: BaseException, packet: Any | None) -> VideoInputError:
    """The error for a packet of ``source`` that cannot be decoded, at its time in the video."""
    where = "a video frame"
    if packet is not None and packet.pts is not None and packet.time_base is not None:
        where = f"the video frame at {float(packet.pts * packet.time_base):.2f} s"
    return VideoInputError(source, f"cannot be decoded ({_why(exc)})", where=where)
