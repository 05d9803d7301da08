"""Show day in the service (issue 10): a wrong URL never goes on air, controls an operator
expects, one deal numbering, the pre-show picture, the state route's outputs, live catch-up."""

from __future__ import annotations

import json
from typing import Any

import pytest

from overlay.service.feed import actions_of
from tests.support import AUTH, TOKEN, Server, empty_game, game, make_channel, scene_msg


def texts(scene: dict[str, Any]) -> list[str]:
    return [op[5] for op in scene["ops"] if op[0] == "t"]


def page_config(html: str) -> dict[str, Any]:
    blob = html.split('<script type="application/json" id="overlay-config">')[1].split("</script>")[0]
    data: dict[str, Any] = json.loads(blob)
    return data


# item 4: a wrong or early URL ----------------------------------------------------------
async def test_a_typo_url_answers_the_empty_player_and_says_why(client: Any) -> None:
    r = await client.get("/overlay/tabel1?output=preview")
    html = await r.text()
    assert r.status == 200 and r.content_type == "text/html"
    cfg = page_config(html)
    assert cfg["channel"] == "tabel1" and cfg["output"] == "preview" and (cfg["width"], cfg["height"]) == (1920, 1080)
    assert "no channel 'tabel1'" in cfg["problem"]
    # the socket is refused (the page retries), and the server's status lists the waiting page
    r = await client.get("/ws/overlay/tabel1")
    assert r.status == 404
    status = await (await client.get("/api/status", headers=AUTH)).json()
    (waiting,) = status["waitingPages"]
    assert waiting["channel"] == "tabel1" and waiting["requests"] == 2 and "tabel1" in waiting["error"]
    # once the channel exists the page's socket connects, and it is no longer waiting
    await make_channel(client, "tabel1", doc=game())
    ws = await client.ws_connect("/ws/overlay/tabel1?output=preview", headers=AUTH)
    assert (await scene_msg(ws))["snapshot"]
    await ws.close()
    status = await (await client.get("/api/status", headers=AUTH)).json()
    assert status["waitingPages"] == []


async def test_waiting_pages_are_bounded(client: Any) -> None:
    for i in range(100):
        await client.get(f"/overlay/typo{i}")
    status = await (await client.get("/api/status", headers=AUTH)).json()
    assert len(status["waitingPages"]) == 64 and status["waitingPages"][-1]["channel"] == "typo99"


@pytest.mark.browser
async def test_a_page_opened_before_its_channel_stays_clear_then_connects(server: Server, browser: Any) -> None:
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    console: list[tuple[str, str]] = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    await page.goto(f"{server.base}/overlay/later?output=preview&width=1280&height=720#token={TOKEN}")
    await page.wait_for_timeout(1500)  # a few refused connection attempts
    png = await page.screenshot(omit_background=True)
    from io import BytesIO

    import numpy as np
    from PIL import Image

    assert np.asarray(Image.open(BytesIO(png)).convert("RGBA"))[..., 3].max() == 0  # nothing on air
    warnings = [t for k, t in console if k == "warning" and "later" in t]
    # what the server said when it answered the page, then the refused socket once (not
    # once per retry)
    assert len(warnings) == 2 and "no channel 'later'" in warnings[0] and "cannot reach" in warnings[1]
    await server.api("POST", "/api/channels", json={"id": "later"})
    await server.api("PUT", "/api/channels/later/game", data=json.dumps(game(5, 1)))
    await page.wait_for_function("window.euchreOverlay.state.connected && window.euchreOverlay.state.drawnStep !== null", timeout=5000)
    assert any("connected to channel" in t for _, t in console)
    await page.close()


# item 5: transport ----------------------------------------------------------------------
@pytest.mark.parametrize("first", ["next", "back", "step", "seek?step=3", "seek?deal=2", "pause"])
async def test_play_plays_after_any_command(client: Any, first: str) -> None:
    await make_channel(client, doc=game())
    await client.post("/api/channels/t1/control/seek?step=5", headers=AUTH)
    r = await client.post(f"/api/channels/t1/control/{first}", headers=AUTH)
    assert r.status == 200, await r.text()
    ph = await (await client.post("/api/channels/t1/control/play", headers=AUTH)).json()
    assert ph["playing"] and ph["auto"] and ph["hold"] is None


@pytest.mark.parametrize(
    "path, check",
    [
        ("speed?value=2", {"speed": 2.0}),
        ("speed?value=0.5", {"speed": 0.5}),
        ("speed?speed=1.5", {"speed": 1.5}),  # the older spelling still works
        ("loop?value=true", {"loop": True}),
        ("loop?value=off", {"loop": False}),
        ("auto?value=false", {"auto": False}),
    ],
)
async def test_one_argument_name(client: Any, path: str, check: dict[str, Any]) -> None:
    await make_channel(client, doc=game())
    ph = await (await client.post(f"/api/channels/t1/control/{path}", headers=AUTH)).json()
    assert {k: ph[k] for k in check} == check


@pytest.mark.parametrize("path, needle", [("speed", "value"), ("loop", "value"), ("loop?value=maybe", "true/false"), ("speed?value=99", "16")])
async def test_control_refusals_say_what_to_send(client: Any, path: str, needle: str) -> None:
    await make_channel(client, doc=game())
    r = await client.post(f"/api/channels/t1/control/{path}", headers=AUTH)
    assert r.status == 400 and needle in (await r.json())["error"]


# item 6: deal numbers ---------------------------------------------------------------------
async def test_seek_deal_n_shows_deal_n(client: Any) -> None:
    doc = game(7, 3)
    await make_channel(client, doc=doc)
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    await client.post("/api/channels/t1/control/seek?deal=3", headers=AUTH)
    ws = await client.ws_connect("/ws/overlay/t1?output=preview&width=1280&height=720", headers=AUTH)
    msg = await scene_msg(ws)
    await ws.close()
    assert msg["deal"] == 2  # the JSON field: the deal's position from 0
    assert "DEAL 3" in texts(msg["scene"])  # what people see
    state = await (await client.get("/api/channels/t1/state?output=preview", headers=AUTH)).json()
    assert state["state"]["dealNumber"] == doc["deals"][2]["dealNumber"]  # the file's own field, kept
    r = await client.post("/api/channels/t1/control/seek?deal=4", headers=AUTH)
    assert r.status == 400 and "deals 1..3" in (await r.json())["error"]
    r = await client.post("/api/channels/t1/control/seek?deal=0", headers=AUTH)
    assert r.status == 400


# item 2: nothing before the first deal ----------------------------------------------------
async def test_a_channel_with_players_shows_the_pre_show(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    ws = await client.ws_connect("/ws/overlay/t1?output=program&width=1280&height=720")
    snap = await scene_msg(ws)
    words = texts(snap["scene"])
    assert "STARTING SOON" in words and doc["metadata"]["players"][0].upper() in words
    assert {"0"} <= set(words)  # the score bug at 0-0
    await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    msg = await scene_msg(ws)
    assert msg["step"] == 0 and "STARTING SOON" not in texts(msg["scene"])
    await ws.close()


async def test_the_pre_show_shows_the_deck_its_rules_deal(client: Any) -> None:
    """A live game under British rules, before its first deal: the cards-played panel holds
    the joker already (it came with the first deal's picture)."""
    doc = empty_game(game(5, 1))
    doc["metadata"]["ruleset"] = {"joker": True, "min_rank": 7}
    await make_channel(client, doc=doc)
    ws = await client.ws_connect("/ws/overlay/t1?output=program&width=1280&height=720")
    words = texts((await scene_msg(ws))["scene"])
    assert "STARTING SOON" in words and "JOKER" in words and {"7", "8"} <= set(words)
    await ws.close()


async def test_a_channel_with_no_game_stays_empty(client: Any) -> None:
    await make_channel(client)
    ws = await client.ws_connect("/ws/overlay/t1")
    assert (await scene_msg(ws))["scene"] is None
    await ws.close()


# item 7: the state route ------------------------------------------------------------------
@pytest.mark.fake_clock
async def test_state_route_names_its_output_and_delay(client: Any, clock: Any) -> None:
    await make_channel(client, doc=empty_game(game(5, 1)))
    s = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    patch = {"revision": s["revision"], "outputs": {"program": {"delay": 10}}}
    r = await client.patch("/api/channels/t1/settings", json=patch, headers=AUTH)
    assert r.status == 200, await r.text()
    for a in actions_of(game(5, 1))[:3]:
        await client.post("/api/channels/t1/actions", json=a, headers=AUTH)
    clock.t += 5
    default = await (await client.get("/api/channels/t1/state")).json()
    program = await (await client.get("/api/channels/t1/state?output=program")).json()
    preview = await (await client.get("/api/channels/t1/state?output=preview", headers=AUTH)).json()
    assert default == program and program["output"] == "program" and program["delay"] == 10
    assert program["step"] is None  # 10 s behind: before the first deal
    assert preview["output"] == "preview" and preview["delay"] == 0 and preview["step"] is not None
    r = await client.get("/api/channels/t1/state?output=live")
    assert r.status == 400 and "program, preview, clean" in (await r.json())["error"]


# item 1: live catch-up in the service ------------------------------------------------------
@pytest.mark.fake_clock
async def test_a_fast_table_is_followed_within_the_lag_bound(client: Any, clock: Any) -> None:
    doc = game(9, 2)
    await make_channel(client, doc=empty_game(doc))
    from overlay.service.keys import HUB

    ch = client.server.app[HUB].channels["t1"]
    lags = []
    for a in actions_of(doc)[:40]:
        r = await client.post("/api/channels/t1/actions", json=a, headers=AUTH)
        assert r.status == 200
        clock.t += 0.3
        ch.director.catch_up(clock.t)  # what the channel's pump does on every wake
        lags.append(ch.director.lag(clock.t))
    assert max(lags) <= 1.0 + 1e-6  # Timing.live_lag, the default bound
