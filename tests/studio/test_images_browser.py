"""Images through the studio, in the system Chromium against the real service: a photo
uploaded in the Match tab shows on the preview page's name plate, and a logo slot added and
given an image in the layout editor shows on the preview page (the OBS page loads both from
the public ``/media/`` route, without the token)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from renderer.extras import EXTRA_SIZES
from renderer.placement import place_extra
from renderer.settings import default_views
from renderer.view import ExtraType, default_view
from tests.studio.test_browser import Studio, overlay_page, server
from tests.studio.test_images import GREEN, MAGENTA, badge_centre
from tests.support import Server, until

__all__ = ["server"]  # the fixture, shared with the studio's other browser tests

pytestmark = pytest.mark.browser


async def rgb_at(page: Any, x: float, y: float) -> list[int]:
    """RGBA of the overlay page's canvas at view pixel (x, y) of the 1920x1080 view."""
    js = """([x, y]) => { const c = document.querySelector('canvas'); const k = c.width / 1920;
        return Array.from(c.getContext('2d').getImageData(Math.floor(x * k), Math.floor(y * k), 1, 1).data); }"""
    px: list[int] = await page.evaluate(js, [x, y])
    return px


async def settled(page: Any) -> None:
    """Until the overlay page's picture is still (its frame loop stopped: nothing moves)."""
    await page.wait_for_function("() => { const c = window.euchreOverlay.current(); return c !== null && c.done; }", timeout=5_000)


def near(px: list[int], colour: tuple[int, int, int], tol: int = 6) -> bool:
    return px[3] == 255 and all(abs(a - b) <= tol for a, b in zip(px, colour))


def write_png(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> Path:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, "PNG")
    path.write_bytes(buf.getvalue())
    return path


async def test_a_photo_uploaded_in_the_studio_shows_on_the_preview_name_plate(browser: Any, server: Server, tmp_path: Path) -> None:
    studio = await Studio.open(browser, server)
    preview = await overlay_page(browser, server, "preview")
    x, y = badge_centre(default_view())
    assert not near(await rgb_at(preview, x, y), GREEN)
    await studio.page.click("#tabs button:text-is('Match')")
    photo = write_png(tmp_path / "ann.png", (30, 40), GREEN)
    await studio.page.set_input_files("#panel .field[data-path='match.players.0.photo'] input[type=file]", str(photo))

    async def shown() -> bool:
        return near(await rgb_at(preview, x, y), GREEN)

    await until(shown, timeout=5.0)
    # the page got it from the public route (it has no token)
    doc = await server.api("GET", "/api/channels/t1/settings")
    assert doc["match"]["players"][0]["photo"].endswith(".png")
    assert studio.errors == [] and studio.dialogs == []


async def test_a_logo_slot_placed_in_the_editor_shows_on_the_preview(browser: Any, server: Server, tmp_path: Path) -> None:
    studio = await Studio.open(browser, server)
    preview = await overlay_page(browser, server, "preview")
    page = studio.page
    w, h = EXTRA_SIZES[ExtraType.LOGO]
    # the editor adds the slot where the server finds free space: top right, under the title
    at = place_extra(default_views()["preview"], ExtraType.LOGO)
    assert at.fits and at.x > 1920 / 2 and at.y < 1080 / 2
    band = (at.x + w / 2, at.y + 3)  # in the slot, above the fitted 2:1 image
    # what is there before, once the page is still (alpha 4 there then): read while the first
    # scene still moved in, it was 0 once in a run, and the test failed
    await settled(preview)
    under = await rgb_at(preview, *band)
    await page.click("#elements button:text-is('+ Logo slot')")
    await page.locator("#overlay .box[data-id='logo']").wait_for()
    await page.click("#elements li[data-id='logo'] .name")
    logo = write_png(tmp_path / "sponsor.png", (64, 32), MAGENTA)
    await page.set_input_files("#panel .field[data-path$='extras.0.image'] input[type=file]", str(logo))
    doc = await server.api("GET", "/api/channels/t1/settings")
    for _ in range(50):
        extras = (doc["outputs"]["preview"]["view"] or {}).get("extras") or []
        if extras and extras[0].get("image"):
            break
        await asyncio.sleep(0.05)
        doc = await server.api("GET", "/api/channels/t1/settings")
    slot = doc["outputs"]["preview"]["view"]["extras"][0]
    assert slot["type"] == "logo" and slot["image"] and (slot["x"], slot["y"]) == (at.x, at.y)
    cx, cy = slot["x"] + w * slot["scale"] / 2, slot["y"] + h * slot["scale"] / 2

    async def shown() -> bool:
        return near(await rgb_at(preview, cx, cy), MAGENTA)

    await until(shown, timeout=5.0)
    # fitted keeping the aspect: 2:1 in 320x180 leaves the top and bottom 10 px empty
    await settled(preview)
    assert await rgb_at(preview, *band) == under
    assert studio.errors == [] and studio.dialogs == []
