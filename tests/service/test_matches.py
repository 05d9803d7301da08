"""Match files on a channel, in process with an injected clock: the games play in order and every
message says which game is on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.generate import generate_game
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service.keys import HUB
from tests.support import AUTH, FakeClock, match_doc

#: the service runs on the hand-moved ``clock`` fixture
pytestmark = pytest.mark.fake_clock
SIZE = (1280, 720)


async def test_match_plays_its_games_in_order(client: Any, clock: FakeClock) -> None:
    r = await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    assert r.status == 201
    doc = match_doc()
    r = await client.put("/api/channels/m/game", data=json.dumps(doc), headers=AUTH)
    assert r.status == 200, await r.text()
    info = await (await client.get("/api/channels/m", headers=AUTH)).json()
    games = info["game"]["games"]
    assert info["game"]["match"] is True and [g["label"] for g in games] == ["Game 1 of 3", "Game 2 of 3", "Game 3 of 3"]
    assert info["game"]["steps"] == sum(g["steps"] for g in games)
    assert [g["firstStep"] for g in games] == [0, games[0]["steps"], games[0]["steps"] + games[1]["steps"]]

    # play to the end of game 1: the next step is game 2's first deal
    r = await client.post("/api/channels/m/control", json={"op": "pause"}, headers=AUTH)
    r = await client.post("/api/channels/m/control", json={"op": "seek", "step": games[1]["firstStep"] - 1}, headers=AUTH)
    ph = await r.json()
    assert (ph["game"], ph["games"]) == (0, 3)
    state = await (await client.get("/api/channels/m/state?output=preview", headers=AUTH)).json()
    assert state["game"] == 0 and state["state"]["players"] == doc["games"][0]["gameData"]["metadata"]["players"]
    r = await client.post("/api/channels/m/control", json={"op": "step"}, headers=AUTH)
    state = await (await client.get("/api/channels/m/state?output=preview", headers=AUTH)).json()
    assert state["game"] == 1 and state["gameTitle"] == "Generated game 2 \u2014 Game 2 of 3"
    assert state["state"]["players"] == doc["games"][1]["gameData"]["metadata"]["players"]
    assert state["state"]["step"] == 0 and state["step"] == games[1]["firstStep"]

    # seek by (game, deal) and (game, step)
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 3, "deal": 2}, headers=AUTH)
    ph = await r.json()
    assert ph["game"] == 2 and ph["step"] > games[2]["firstStep"]
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 2, "step": 3}, headers=AUTH)
    assert (await r.json())["step"] == games[1]["firstStep"] + 3
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 1}, headers=AUTH)
    assert (await r.json())["step"] == 0

    # the scene carries the game's title (renderer.build_scene title=; drawn by a title element)
    from renderer.view import default_view

    view = default_view().model_dump(mode="json")
    view["elements"].append({"id": "title-2", "type": "title", "x": 900.0, "y": 20.0})
    current = await (await client.get("/api/channels/m/settings", headers=AUTH)).json()
    current["outputs"]["preview"]["view"] = view
    r = await client.put("/api/channels/m/settings", json=current, headers=AUTH)
    assert r.status == 200, await r.text()
    ch = client.server.app[HUB].get("m")
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 3, "step": 0}, headers=AUTH)
    scene = json.loads(ch.fanout.scene_text("preview", SIZE, clock.t, snapshot=True)[0])
    assert (scene["game"], scene["games"], scene["gameTitle"]) == (2, 3, "Generated game 3 \u2014 Game 3 of 3")
    assert "GAME 3 OF 3" in json.dumps(scene["scene"], ensure_ascii=False)


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"op": "seek", "game": 7}, "no game 7 in the match (games: 1, 2, 3)"),
        ({"op": "seek", "game": 2, "deal": 9}, "no deal 9 (game 2 of the match has deals 1..2)"),
        ({"op": "seek", "game": 2, "step": 999}, "no step 999 in game 2"),
    ],
)
async def test_match_seek_refusals(client: Any, body: dict[str, Any], needle: str) -> None:
    await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    await client.put("/api/channels/m/game", data=json.dumps(match_doc()), headers=AUTH)
    r = await client.post("/api/channels/m/control", json=body, headers=AUTH)
    assert r.status == 400 and needle in (await r.json())["error"]


async def test_a_match_takes_single_actions_into_its_last_game_and_plain_games_say_game_zero(client: Any) -> None:
    await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    await client.put("/api/channels/m/game", data=json.dumps(match_doc()), headers=AUTH)
    # the engine judges the action in the match's last game (games[2], deals[1]: the file's indices, as its errors count)
    r = await client.post("/api/channels/m/actions", json={"seq": 1, "kind": "card", "card": "Jd"}, headers=AUTH)
    assert r.status == 400 and (await r.json())["error"].startswith("channel m game 2: deal 1, phase 1 (TRICK_PLAY), trick 5")
    await client.post("/api/channels", json={"id": "g"}, headers=AUTH)
    await client.put("/api/channels/g/game", data=json.dumps(generate_game(3, deals=1)), headers=AUTH)
    state = await (await client.get("/api/channels/g/state")).json()
    assert (state["game"], state["games"], state["gameTitle"]) == (0, 1, "Generated game 3")
    info = await (await client.get("/api/channels/g", headers=AUTH)).json()
    assert info["game"]["match"] is False and info["game"]["games"] == []


async def test_match_survives_a_restart(aiohttp_client: Any, settings: ServerSettings) -> None:
    client = await aiohttp_client(create_app(settings))
    await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    r = await client.post("/api/channels/m/game", data=json.dumps(match_doc()), headers=AUTH)
    assert r.status == 200
    await client.post("/api/channels/m/control", json={"op": "seek", "game": 2}, headers=AUTH)  # games count from 1
    await client.close()
    client = await aiohttp_client(create_app(settings))
    state = await (await client.get("/api/channels/m/state")).json()
    assert state["game"] == 1 and state["games"] == 3
