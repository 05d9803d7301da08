"""Uploaded images (player photos and flags, logo and sponsor slots): checked, then stored by content.

Only PNG, JPEG, WebP and GIF are taken, recognised by their first bytes (never by the name
or the declared type), up to :data:`MAX_UPLOAD` bytes.  A file is stored under the uploads
folder as ``<md5 of content>.<ext>``, so its name carries nothing the user typed and the
same image uploaded twice is stored once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["MAX_UPLOAD", "UploadRefused", "image_kind", "store_image", "upload_path", "read_images"]

MAX_UPLOAD = 2 * 1024 * 1024
_NAME = re.compile(r"^[0-9a-f]{32}\.(png|jpg|webp|gif)$")
_CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}


class UploadRefused(ValueError):
    """An upload that is not an image of a known type, or too large."""


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


def store_image(folder: Path, data: bytes, *, filename: str = "upload") -> str:
    """Check ``data`` and store it in ``folder``; returns the upload id (the stored file's name).

    Written to a temporary file and renamed, so a reader never sees half an image.

    Raises:
        UploadRefused: empty, over :data:`MAX_UPLOAD`, or not a PNG/JPEG/WebP/GIF.
    """
    if not data:
        raise UploadRefused(f"{filename!r}: empty upload")
    if len(data) > MAX_UPLOAD:
        raise UploadRefused(f"{filename!r}: {len(data)} bytes is over the {MAX_UPLOAD} byte cap")
    kind = image_kind(data)
    if kind is None:
        raise UploadRefused(f"{filename!r}: not a PNG, JPEG, WebP or GIF image")
    name = f"{hashlib.md5(data, usedforsecurity=False).hexdigest()}.{kind}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    if not target.exists():
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
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
