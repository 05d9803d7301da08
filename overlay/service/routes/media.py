"""Uploaded images, read-only and without the token: ``GET /media/{name}``.

The OBS page has no token, yet it draws the photos, flags, logos and stinger images a scene
names (the ``im`` op names an image by its content id).  So this one route serves the uploads
folder to anyone, and only that: the name must be a content id (32 hex digits of the md5, a
dot, ``png``/``jpg``/``webp``/``gif``: no path, no other file of the data folder), the file
was checked as an image of that type when it was uploaded (:mod:`studio.uploads`), and it is
sent with its image type and ``nosniff``.  Uploading still needs the token
(``POST /studio/api/uploads``).  Names are content hashes, so a response never changes:
it may be cached for good.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from studio.uploads import upload_path

from ..errors import NotFound
from ..keys import SETTINGS

__all__ = ["routes", "uploads_folder"]

routes = web.RouteTableDef()


def uploads_folder(app: web.Application) -> Path:
    """Where uploads are stored (the studio stores them there): ``<data folder>/uploads``."""
    return Path(app[SETTINGS].data_dir) / "uploads"


@routes.get("/media/{name}")
async def media(request: web.Request) -> web.FileResponse:
    """An uploaded image by its content id (404 for any other name or a missing file)."""
    found = upload_path(uploads_folder(request.app), request.match_info["name"])
    if found is None:
        raise NotFound("no such image")
    path, content_type = found
    return web.FileResponse(
        path,
        headers={
            "Content-Type": content_type,
            "Cache-Control": "public, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; sandbox",
        },
    )
