"""Images in the broadcast: player photos and flags on the name plates, logo and sponsor slots,
the stinger transition, and match team names on the scorebug; the public read-only route the
OBS page loads images from.  Renderer and server in process (the browser side is in
test_studio_images_browser.py)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from engine.load import load_game
from engine.state import GameState, StepKind
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from renderer.extras import EXTRA_SIZES, build_broadcast_scene
from renderer.matchdata import MatchData
from renderer.raster import Assets, raster, to_rgba
from renderer.table import PLATE_H, PLATE_X, PLATE_Y
from renderer.timing import Timing
from renderer.view import Extra, ExtraType, View, default_view
from tests.support import AUTH, game

GREEN = (10, 200, 30)
MAGENTA = (220, 20, 200)


def png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGBA", size, (*colour, 255)).save(buf, "PNG")
    return buf.getvalue()


def image_id(data: bytes) -> str:
    return hashlib.md5(data).hexdigest() + ".png"


PHOTO = png((24, 32), GREEN)
LOGO = png((64, 32), MAGENTA)  # 2:1, in a 320x180 slot: 320x160, centred
PHOTO_ID, LOGO_ID = image_id(PHOTO), image_id(LOGO)


@pytest.fixture(scope="module")
def steps() -> tuple[GameState, ...]:
    return load_game(json.dumps(game(11, deals=2)), source="t.egn").timeline.steps


@pytest.fixture(scope="module")
def assets() -> Assets:
    a = Assets.load()
    a.add_image(PHOTO_ID, PHOTO)
    a.add_image(LOGO_ID, LOGO)
    return a


def rgb(frame: np.ndarray, x: float, y: float) -> tuple[int, ...]:
    return tuple(int(v) for v in frame[int(round(y)), int(round(x)), :3])


def badge_centre(view: View, seat: int = 0) -> tuple[float, float]:
    """Where seat 0's (south's) plate photo lands in the view: renderer.photo's badge."""
    hand = next(e for e in view.elements if e.type.value == "hand-south")
    d = PLATE_H - 8
    cx, cy = PLATE_X + 14 + d / 2, PLATE_Y + 4 + d / 2
    return hand.x + cx * hand.scale, hand.y + cy * hand.scale


def test_team_names_from_match_data_go_on_the_scorebug(steps: tuple[GameState, ...]) -> None:
    st = steps[5]
    match = MatchData.model_validate({"teams": [{"name": "Orde\u00ae Me Up"}, {"name": "Left Bowers"}]})
    named = build_broadcast_scene(st, default_view(), match=match)
    plain = build_broadcast_scene(st, default_view())
    score_texts = lambda s: [op[5] for op in s.ops if op[0] == "t"]  # noqa: E731
    assert "ORDE\u00ae ME UP" in score_texts(named) and "LEFT BOWERS" in score_texts(named)
    # without team names: the fallback built from the players' whole names (never a fragment)
    fallback = [t for t in score_texts(plain) if st.players[0].split()[0].upper() in t and " & " in t]
    assert fallback and "ORDE\u00ae ME UP" not in score_texts(plain)
    # an empty team name falls back for that team only
    half = MatchData.model_validate({"teams": [{"name": ""}, {"name": "Left Bowers"}]})
    mixed = score_texts(build_broadcast_scene(st, default_view(), match=half))
    assert fallback[0] in mixed and "LEFT BOWERS" in mixed


def test_a_players_photo_is_drawn_on_the_name_plate(steps: tuple[GameState, ...], assets: Assets) -> None:
    st = steps[5]
    view = default_view()
    match = MatchData.model_validate({"players": [{"photo": PHOTO_ID}, {}, {}, {}]})
    scene = build_broadcast_scene(st, view, match=match)
    assert scene.images == [PHOTO_ID]
    assert [op for op in scene.ops if op[0] == "im"] == [["im", PHOTO_ID, PLATE_X + 14, PLATE_Y + 4, PLATE_H - 8, PLATE_H - 8, "cover"]]
    x, y = badge_centre(view)
    frame = to_rgba(raster(scene, 5.0, assets))
    assert rgb(frame, x, y) == GREEN
    without = to_rgba(raster(build_broadcast_scene(st, view), 5.0, assets))
    assert rgb(without, x, y) != GREEN
    # an executor that lacks the image draws the badge's team colour and nothing else
    bare = to_rgba(raster(scene, 5.0, Assets.load()))
    assert rgb(bare, x, y) != GREEN and bare[int(y), int(x), 3] == 255


def test_the_player_intro_shows_the_photo_in_its_badge(steps: tuple[GameState, ...], assets: Assets) -> None:
    st = steps[5]
    view = View(extras=(Extra(id="intro", type=ExtraType.PLAYER_INTRO, x=100, y=800),))
    match = MatchData.model_validate({"players": [{"photo": PHOTO_ID}, {}, {}, {}], "intro": 0})
    frame = to_rgba(raster(build_broadcast_scene(st, view, match=match), 5.0, assets))
    assert rgb(frame, 100 + 82, 800 + 66) == GREEN  # the badge's centre
    initials = to_rgba(raster(build_broadcast_scene(st, view, match=match.model_copy(update={"players": ()})), 5.0, assets))
    assert rgb(initials, 100 + 82, 800 + 66) != GREEN


def test_a_logo_slot_fits_its_image_inside_the_box_keeping_the_aspect(steps: tuple[GameState, ...], assets: Assets) -> None:
    st = steps[5]
    w, h = EXTRA_SIZES[ExtraType.LOGO]
    view = View(extras=(Extra(id="sponsor", type=ExtraType.LOGO, x=1400, y=300, image=LOGO_ID),))  # the slot alone
    scene = build_broadcast_scene(st, view)
    assert scene.images == [LOGO_ID]
    box = next(e for e in scene.elements if e["id"] == "sponsor")
    assert (box["w"], box["h"]) == (w, h)
    frame = to_rgba(raster(scene, 5.0, assets))
    assert rgb(frame, 1400 + w / 2, 300 + h / 2) == MAGENTA
    # 2:1 in 320x180: 320x160 from y = 310 to 470; the 10 px bands above and below are empty
    assert rgb(frame, 1400 + w / 2, 300 + 12) == MAGENTA and frame[300 + 5, 1400 + 160, 3] == 0
    assert frame[int(300 + h - 5), 1400 + 160, 3] == 0
    # an empty slot draws nothing (the editor still shows its box)
    empty = view.model_copy(update={"extras": (Extra(id="sponsor", type=ExtraType.LOGO, x=1400, y=300),)})
    assert {op[0] for op in build_broadcast_scene(st, empty).ops} <= {"s", "r", "tr", "sc"}


def test_the_stinger_covers_the_change_of_deal_at_half_time(steps: tuple[GameState, ...], assets: Assets) -> None:
    second = next(s for s in steps if s.kind is StepKind.DEAL_START and s.deal == 1)
    stinger = Timing.model_validate({"transition": {"style": "stinger", "run_time": 0.8, "image": LOGO_ID}})
    scene = build_broadcast_scene(second, timing=stinger)
    cut = build_broadcast_scene(second)
    assert build_broadcast_scene(steps[0], timing=stinger).dumps() == build_broadcast_scene(steps[0]).dumps()  # not before deal 1
    mid = to_rgba(raster(scene, 0.4, assets))
    assert (mid[..., 3] == 255).all(), "the stinger covers the whole canvas at half time"
    assert rgb(mid, 960, 540 - 40) == MAGENTA  # its image in the middle
    quarter = to_rgba(raster(scene, 0.2, assets))
    assert (quarter[:, 1900, 3] < 255).any() and (quarter[:, 20, 3] == 255).all()  # coming in from the left
    assert np.array_equal(to_rgba(raster(scene, 0.8, assets)), to_rgba(raster(cut, 0.8, assets)))  # gone after its run
    # in the theme's colours only, without an image
    plain = Timing.model_validate({"transition": {"style": "stinger", "run_time": 0.8}})
    assert build_broadcast_scene(second, timing=plain).images == []


def test_a_caller_loads_a_scenes_images_from_the_uploads_into_assets(steps: tuple[GameState, ...], tmp_path: Path) -> None:
    from studio.uploads import read_images, store_image

    folder = tmp_path / "uploads"
    assert store_image(folder, PHOTO) == PHOTO_ID
    match = MatchData.model_validate({"players": [{"photo": PHOTO_ID}, {"photo": LOGO_ID}, {}, {}]})
    scene = build_broadcast_scene(steps[5], default_view(), match=match)
    found = read_images(folder, scene.images)
    assert found == {PHOTO_ID: PHOTO}  # the logo was never stored: left out, drawn as nothing
    a = Assets.load()
    for k, v in found.items():
        a.add_image(k, v)
    x, y = badge_centre(default_view())
    assert rgb(to_rgba(raster(scene, 5.0, a)), x, y) == GREEN
    with pytest.raises(ValueError, match="md5"):
        a.add_image(LOGO_ID, PHOTO)  # an id names its content


# --------------------------------------------------------------------------- the media route


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    return await aiohttp_client(create_app(settings))


async def test_uploaded_images_are_served_read_only_without_the_token(client: Any, settings: ServerSettings) -> None:
    r = await client.post("/studio/api/uploads?name=me.png", data=PHOTO)
    assert r.status == 401  # uploading needs the token
    r = await client.post("/studio/api/uploads?name=me.png", data=PHOTO, headers=AUTH)
    assert r.status == 201
    name = (await r.json())["id"]
    assert name == PHOTO_ID
    got = await client.get(f"/media/{name}")  # no token: the OBS page loads it so
    assert got.status == 200 and await got.read() == PHOTO
    assert got.headers["Content-Type"] == "image/png" and got.headers["X-Content-Type-Options"] == "nosniff"
    for method in ("PUT", "POST", "DELETE"):
        assert (await client.request(method, f"/media/{name}", data=b"x")).status == 405
    # only content ids of the checked image types, only from the uploads folder
    (Path(settings.data_dir) / "uploads" / ("0" * 32 + ".svg")).write_text("<svg onload=alert(1)>")
    (Path(settings.data_dir) / ("1" * 32 + ".png")).write_bytes(PHOTO)
    for bad in ("overlay.sqlite3", "..%2Foverlay.sqlite3", "0" * 32 + ".svg", "1" * 32 + ".png", "2" * 32 + ".png", name.upper()):
        assert (await client.get(f"/media/{bad}")).status == 404, bad
