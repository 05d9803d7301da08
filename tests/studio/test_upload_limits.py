"""Issue 22 item 7: uploads are decoded, not only sniffed.

Before the fix only the first bytes were checked: a 3-byte "JPEG" was stored, a PNG of a few
kB declaring 15000x15000 px was stored (and took ``render`` to 1.98 GB), and a full disk
answered 500.  Now the header's size is read first (more than 16 Mpx: 413), every frame must
decode (400), and a full disk is a 507 as for the database's writes."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from tests.support import AUTH, TOKEN
from tests.service.test_store_durability import fill, small_tmpfs


def encode(img: Image.Image, fmt: str, **kw: Any) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def animation(size: tuple[int, int], frames: int) -> bytes:
    shots = [Image.new("P", size, i) for i in range(frames)]
    return encode(shots[0], "GIF", save_all=True, append_images=shots[1:])


MAX_PIXELS = 16_000_000  # the documented cap (docs/studio.md)
GOOD = encode(Image.new("RGB", (64, 48), (200, 30, 30)), "PNG")


# the images are made when their test runs (a lambda each), not when the file is collected: the
# 15000x15000 PNG alone takes a quarter of a second to encode, in every pytest-xdist worker
@pytest.mark.parametrize(
    "name, make, status, says",
    [
        ("3-byte jpeg", lambda: b"\xff\xd8\xff", 400, "does not decode"),
        ("truncated png", lambda: GOOD[: len(GOOD) // 2], 400, "does not decode"),
        ("jpeg header only", lambda: encode(Image.new("RGB", (32, 32)), "JPEG")[:200], 400, "does not decode"),
        ("15000x15000 png", lambda: encode(Image.new("1", (15000, 15000)), "PNG"), 413, "pixel cap"),
        ("gif of 20 1000x1000 frames", lambda: animation((1000, 1000), 20), 413, "frames"),
    ],
)
async def test_an_image_that_does_not_decode_or_is_too_big_is_refused(client: Any, name: str, make: Callable[[], bytes], status: int, says: str) -> None:
    r = await client.post(f"/studio/api/uploads?name={name}", data=make(), headers=AUTH)
    body = await r.json()
    assert r.status == status and says in body["error"], body
    assert len(body["error"]) < 600


@pytest.mark.parametrize(
    "make",
    [
        lambda: encode(Image.new("1", (4000, 4000)), "PNG"),  # exactly the cap
        lambda: encode(Image.new("RGB", (640, 480), (1, 2, 3)), "JPEG"),
        lambda: encode(Image.new("RGBA", (300, 200)), "WEBP"),
        lambda: animation((100, 100), 5),
    ],
    ids=["png-at-the-cap", "jpeg", "webp", "gif-of-5-frames"],
)
async def test_good_images_up_to_the_cap_are_stored(client: Any, make: Callable[[], bytes]) -> None:
    assert 4000 * 4000 == MAX_PIXELS
    r = await client.post("/studio/api/uploads", data=make(), headers=AUTH)
    assert r.status == 201, await r.text()


async def test_a_full_disk_answers_507(aiohttp_client: Any, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "fs") as fs:
        client = await aiohttp_client(create_app(ServerSettings(data_dir=fs / "data", token=TOKEN, demo=False)))
        filler = fill(fs)
        big = encode(Image.effect_noise((600, 600), 80).convert("RGB"), "PNG")
        r = await client.post("/studio/api/uploads?name=photo.png", data=big, headers=AUTH)
        body = await r.json()
        assert r.status == 507 and "full" in body["error"] and body["kind"] == "store_full", body
        assert not list((fs / "data" / "uploads").glob(".upload-*")), "a half-written file was left"
        filler.unlink()
        r = await client.post("/studio/api/uploads?name=photo.png", data=big, headers=AUTH)
        assert r.status == 201, await r.text()
        await client.close()
