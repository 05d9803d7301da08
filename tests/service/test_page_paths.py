"""Page URLs as people type them (issue 23 item 8): every variant answers the transparent
player, never a text 404 that OBS would draw over the programme; and the studio's own
frames are counted apart from the OBS pages."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support import AUTH, game, make_channel


def config_of(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="overlay-config">(.*?)</script>', html, re.S)
    assert m is not None, html[:300]
    cfg: dict[str, Any] = json.loads(m.group(1))
    return cfg


@pytest.mark.parametrize(
    "path, channel, note",
    [
        ("/overlay/live1", "live1", None),
        ("/overlay/live1/", "live1", None),
        ("/Overlay/live1", "live1", "/Overlay/ is read as /overlay/"),
        ("/OVERLAY/live1/", "live1", "/OVERLAY/ is read as /overlay/"),
        ("/overlays/live1", "live1", "/overlays/ is read as /overlay/"),
        ("/overlays/live1/?output=clean", "live1", "/overlays/ is read as /overlay/"),
        ("/overlay/live1/program", "live1", "'program'"),
        ("/overlay/nosuch/", "nosuch", "no channel 'nosuch'"),
        ("/overlay", "", "no channel in the URL"),
        ("/overlay/", "", "no channel in the URL"),
        ("/Overlays/", "", "no channel in the URL"),
    ],
)
async def test_every_typed_page_path_serves_the_transparent_player(client: Any, path: str, channel: str, note: str | None) -> None:
    await make_channel(client, "live1", doc=game())
    r = await client.get(path)
    assert r.status == 200, await r.text()
    assert r.content_type == "text/html"
    html = await r.text()
    assert "background: transparent" in html and '<canvas id="stage"' in html
    cfg = config_of(html)
    assert cfg["channel"] == channel
    if note is None:
        assert cfg["problem"] is None
    else:
        assert note in cfg["problem"]
    if "output=clean" in path:
        assert cfg["output"] == "clean"


async def test_a_typed_path_to_a_missing_channel_is_listed_as_waiting(client: Any) -> None:
    await make_channel(client, "live1", doc=game())
    assert (await client.get("/Overlay/liv1/")).status == 200
    status = await (await client.get("/api/status", headers=AUTH)).json()
    assert [w["channel"] for w in status["waitingPages"]] == ["liv1"]


async def test_the_studios_frames_are_counted_apart_from_obs_pages(client: Any) -> None:
    await make_channel(client, "live1", doc=game())
    html = await (await client.get("/overlay/live1?monitor=1")).text()
    socket = config_of(html)["socket"]
    assert socket.endswith("&monitor=1")
    studio = await client.ws_connect(socket)
    obs = await client.ws_connect("/ws/overlay/live1?output=program")
    for ws in (studio, obs):
        assert (await ws.receive_json(timeout=5))["type"] in ("scene", "hello", "snapshot")
    info = await (await client.get("/api/channels/live1", headers=AUTH)).json()
    assert info["pages"]["program"] == 1 and info["monitors"] == 1
    await studio.close()
    await obs.close()
