"""The player's photo or flag on a name plate (match data, an uploaded image by content id).

Kept apart from :mod:`renderer.table` (which draws the plate and calls :func:`plate_photo`
from one place) so the photo can change without touching the plate's own drawing.
"""

from __future__ import annotations

from .context import Ctx

__all__ = ["plate_photo", "PHOTO_GAP"]

#: space between the photo and the name, in plate pixels
PHOTO_GAP = 8.0


def plate_photo(ctx: Ctx, x: float, y: float, h: float, seat: int) -> float:
    """Draw ``seat``'s photo as a round badge at the left of the plate whose box starts at
    ``x, y`` and is ``h`` tall (after the team colour bar); returns the width it takes
    (0 when the seat has no photo), which the plate shifts the name by.

    The image is cropped to a circle (``cover``: a portrait or a flag fills it, centred).
    """
    image_id = ctx.photo(seat)
    if image_id is None:
        return 0.0
    b = ctx.b
    d = h - 8.0
    px, py = x + 14.0, y + 4.0
    b.save()
    b.clip(px, py, d, d, d / 2)
    b.rrect(px, py, d, d, 0, ctx.team_colour(seat % 2), None, 0)  # under a transparent image
    b.image(image_id, px, py, d, d, "cover")
    b.restore()
    b.rrect(px, py, d, d, d / 2, None, ctx.theme.panel_edge, 1.0)
    return d + PHOTO_GAP
