"""Uploaded images (player photos and flags, logo and sponsor slots): checked, then stored by content.

Only PNG, JPEG, WebP and GIF are taken, recognised by their first bytes (never by the name
or the declared type), up to :data:`MAX_UPLOAD` bytes, and only when they decode (Pillow)
to at most :data:`MAX_PIXELS` pixels.  The signature alone let a 3-byte "JPEG" in, and a
875 KB PNG declaring 15000x15000 px took ``render`` to 1.98 GB and the OBS Chromium to 1 GB
more (issue 22 item 7): the header's size is read before anything is decoded.  A file is
stored under the uploads folder as ``<md5 of content>.<ext>``, so its name carries nothing
the user typed and the same image uploaded twice is stored once.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["MAX_UPLOAD", "MAX_PIXELS", "UploadRefused", "UploadNotStored", "image_kind", "check_image", "store_image", "upload_path", "read_images"]

MAX_UPLOAD = 2 * 1024 * 1024
#: the most pixels an upload may hold (width x height, times the frames of an animation):
#: 16 Mpx is a 4096x4096 photo, 64 MB decoded, far beyond any slot on a 3840x2160 page
MAX_PIXELS = 16_000_000
_PIL_FORMATS = {"png": "PNG", "jpg": "JPEG", "webp": "WEBP", "gif": "GIF"}
_NAME = re.compile(r"^[0-9a-f]{32}\.(png|jpg|webp|gif)$")
_CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}


class UploadRefused(ValueError):
    """An upload that is not an image of a known type, does not decode (400), or is too
    large in bytes or pixels (413); ``status`` is the HTTP status."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class UploadNotStored(OSError):
    """A good image the disk refused: full (507, as the database's writes) or another fault
    (503).  Nothing was stored."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def image_kind(data: bytes) -> str | None:
    """``"png"``, ``"jpg"``, ``"webp"`` or ``"gif"`` from the file's signature; None otherwise."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    return None


def check_image(data: bytes, *, filename: str = "upload") -> str:
    """The kind of image ``data`` is (``"png"``, ``"jpg"``, ``"webp"``, ``"gif"``), once its
    header says it holds at most :data:`MAX_PIXELS` pixels and every frame decodes
    (blocking, up to a few hundred milliseconds: call it off the event loop).

    Raises:
        UploadRefused: empty, over :data:`MAX_UPLOAD` bytes or :data:`MAX_PIXELS` pixels
            (413), not a PNG/JPEG/WebP/GIF, or an image that does not decode (400).
    """
    if not data:
        raise UploadRefused(f"{filename!r}: empty upload")
    if len(data) > MAX_UPLOAD:
        raise UploadRefused(f"{filename!r}: {len(data)} bytes is over the {MAX_UPLOAD} byte cap", status=413)
    kind = image_kind(data)
    if kind is None:
        raise UploadRefused(f"{filename!r}: not a PNG, JPEG, WebP or GIF image")
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data), formats=[_PIL_FORMATS[kind]]) as img:
            width, height = img.size
            frames = int(getattr(img, "n_frames", 1))
            pixels = width * height * frames
            if pixels > MAX_PIXELS:
                what = f"{width}x{height}" + (f" x {frames} frames" if frames > 1 else "")
                raise UploadRefused(f"{filename!r}: {what} is {pixels} pixels, over the {MAX_PIXELS} pixel cap", status=413)
            for frame in range(frames):
                img.seek(frame)
                img.load()
    except UploadRefused:
        raise
    except Image.DecompressionBombError as exc:
        raise UploadRefused(f"{filename!r}: over the pixel cap ({exc})", status=413) from None
    except Exception as exc:  # Pillow raises OSError, SyntaxError, ValueError, EOFError ... on a broken file
        raise UploadRefused(f"{filename!r}: the {kind} image does not decode ({type(exc).__name__}: {str(exc)[:200]})") from None
    return kind


def store_image(folder: Path, data: bytes, *, filename: str = "upload") -> str:
    """Check ``data`` (:func:`check_image`) and store it in ``folder``; returns the upload id
    (the stored file's name).  Blocking: call it off the event loop.

    Written to a temporary file and renamed, so a reader never sees half an image.

    Raises:
        UploadRefused: see :func:`check_image`.
        UploadNotStored: the disk is full (507) or refused the write (503).
    """
    kind = check_image(data, filename=filename)
    name = f"{hashlib.md5(data, usedforsecurity=False).hexdigest()}.{kind}"
    target = folder / name
    tmp: str | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
            tmp = None
    except OSError as exc:
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        raise UploadNotStored(
            f"{folder}: the disk {'is full' if full else 'refused the write'} ({exc.strerror or exc}); the image was not stored",
            status=507 if full else 503,
        ) from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return name


def upload_path(folder: Path, name: str) -> tuple[Path, str] | None:
    """The stored file of upload id ``name`` and its content type; None for any other name."""
    if not _NAME.match(name):
        return None
    path = folder / name
    if not path.is_file():
        return None
    return path, _CONTENT_TYPES[name.rsplit(".", 1)[1]]


def read_images(folder: Path, ids: Iterable[str]) -> dict[str, bytes]:
    """The stored bytes of each upload id in ``ids`` (a scene's ``images``), for a skia
    executor's ``Assets.add_image``: the renderer reads no files, its caller does.  Ids not
    stored (or not upload ids) are left out: the ``im`` op then draws nothing, as the page
    does for an image it cannot load."""
    out: dict[str, bytes] = {}
    for name in ids:
        found = upload_path(folder, name)
        if found is not None:
            out[name] = found[0].read_bytes()
    return out
