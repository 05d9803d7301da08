"""Broadcast delay across corrections, and matches, in process with an injected clock.

A delayed output must show exactly what preview showed ``delay`` seconds earlier, even when
the game was corrected in between; a match plays its games in order and says which is on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.generate import generate_game
from overlay.app import create_app
from overlay.config import ServerSettings
from overlay.director import Director
from overlay.keys import HUB

TOKEN = "versions-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DELAY = 5.0
SIZE = (1280, 720)


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def client(aiohttp_client: Any, tmp_path: Path, clock: FakeClock) -> Any:
    settings = ServerSettings(data_dir=tmp_path, token=TOKEN, demo=False, clock=clock)
    return await aiohttp_client(create_app(settings))


def _comparable(text: str) -> dict[str, Any]:
    """A scene or state message without the fields that name the output or count messages."""
    msg = json.loads(text)
    for key in ("seq", "output", "snapshot"):
        msg.pop(key, None)
    return msg


async def _put(client: Any, doc: dict[str, Any]) -> dict[str, Any]:
    r = await client.put("/api/channels/d/game", data=json.dumps(doc), headers=AUTH)
    assert r.status == 200, await r.text()
    body: dict[str, Any] = await r.json()
    return body


async def test_delayed_output_replays_preview_across_corrections(client: Any, clock: FakeClock) -> None:
    settings = {"outputs": {"program": {"delay": DELAY, "width": SIZE[0], "height": SIZE[1]}}}
    r = await client.post("/api/channels", json={"id": "d", "settings": settings}, headers=AUTH)
    assert r.status == 201, await r.text()
    full = generate_game(11, deals=3)
    two = {**full, "deals": full["deals"][:2]}
    one = {**full, "deals": full["deals"][:1]}
    corrected = json.loads(json.dumps(two))
    # a correction to a past action: the dealer of deal 1 is someone else (replays differently)
    corrected["deals"][1]["initialState"]["dealer"] = (two["deals"][1]["initialState"]["dealer"] + 1) % 4
    ch = client.server.app[HUB].get("d")

    # the script: (clock offset, document) -- appends, a correction, an undo of a deal
    script = {0.0: two, 3.0: full, 6.5: corrected, 9.0: one, 9.25: full}
    preview: dict[float, tuple[dict[str, Any], dict[str, Any]]] = {}
    acks = []
    start = clock.t
    for i in range(0, 81):  # 20 s in quarter seconds
        offset = i * 0.25
        clock.t = start + offset
        if offset in script:
            acks.append(await _put(client, script[offset]))
            if offset == 0.0:
                r = await client.post("/api/channels/d/control", json={"op": "live"}, headers=AUTH)
                assert r.status == 200
        state_now = await (await client.get("/api/channels/d/state?output=preview")).text()
        preview[offset] = (_comparable(ch.scene_text("preview", SIZE, clock.t, snapshot=False)[0]), _comparable(state_now))
        if offset >= DELAY:
            program_scene = _comparable(ch.scene_text("program", SIZE, clock.t, snapshot=False)[0])
            program_state = _comparable(await (await client.get("/api/channels/d/state?output=program")).text())
            then_scene, then_state = preview[offset - DELAY]
            assert program_state == then_state, f"program at +{offset}s differs from preview at +{offset - DELAY}s"
            assert program_scene == then_scene, f"program scene at +{offset}s differs from preview at +{offset - DELAY}s"
    assert [a["correction"] for a in acks] == [False, False, True, True, False]
    # the correction really changed what preview showed, and program showed it 5 s later only
    before = preview[6.25][1]["state"]
    after = preview[6.5][1]["state"]
    assert before != after
    # memory stays bounded: versions older than the delay window are dropped
    clock.t = start + 40.0
    await _put(client, two)
    assert set(ch.versions) <= {ch.revision - 1, ch.revision}
    assert len(ch.director.history) <= 3


async def test_no_delay_keeps_only_the_live_version(client: Any, clock: FakeClock) -> None:
    r = await client.post("/api/channels", json={"id": "d"}, headers=AUTH)
    assert r.status == 201
    doc = generate_game(5, deals=2)
    ch = client.server.app[HUB].get("d")
    for i in range(12):
        clock.t += 2.0
        await _put(client, {**doc, "deals": doc["deals"][: 1 + i % 2]})
    assert list(ch.versions) == [ch.revision]


def test_director_evaluates_the_past_with_the_durations_then() -> None:
    d = Director([1.0, 1.0], now=0.0, version=1)
    d.pause(0.0)
    d.timeline_changed(10.0, [3.0, 3.0, 3.0], first_changed=0, version=2)
    past, now = d.position(5.0), d.position(10.0)
    assert (past.version, past.duration) == (1, 1.0)
    assert (now.version, now.duration) == (2, 3.0)
    assert d.oldest_version == 1


# --------------------------------------------------------------------------- matches


def match_doc(seeds: tuple[int, ...] = (1, 2, 3), *, deals: int = 2) -> dict[str, Any]:
    games = [generate_game(s, deals=deals) for s in seeds]
    names = sorted({n for g in games for n in g["metadata"]["players"]})
    return {
        "fileType": "Euchre Match Notation",
        "version": "1.0",
        "metadata": {"title": "Test match", "players": [{"id": f"p{i}", "name": n} for i, n in enumerate(names)]},
        "games": [
            {"gameIndex": i, "players": [f"p{names.index(n)}" for n in g["metadata"]["players"]], "gameData": g}
            for i, g in enumerate(games)
        ],
    }


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
    state = await (await client.get("/api/channels/m/state?output=preview")).json()
    assert state["game"] == 0 and state["state"]["players"] == doc["games"][0]["gameData"]["metadata"]["players"]
    r = await client.post("/api/channels/m/control", json={"op": "step"}, headers=AUTH)
    state = await (await client.get("/api/channels/m/state?output=preview")).json()
    assert state["game"] == 1 and state["gameTitle"] == "Generated game 2 \u2014 Game 2 of 3"
    assert state["state"]["players"] == doc["games"][1]["gameData"]["metadata"]["players"]
    assert state["state"]["step"] == 0 and state["step"] == games[1]["firstStep"]

    # seek by (game, deal) and (game, step)
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 2, "deal": 1}, headers=AUTH)
    ph = await r.json()
    assert ph["game"] == 2 and ph["step"] > games[2]["firstStep"]
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 1, "step": 3}, headers=AUTH)
    assert (await r.json())["step"] == games[1]["firstStep"] + 3
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 0}, headers=AUTH)
    assert (await r.json())["step"] == 0

    # the scene carries the game's title (renderer.build_scene title=; drawn by a title element)
    from renderer.view import default_view

    view = default_view().model_dump(mode="json")
    view["elements"].append({"id": "title", "type": "title", "x": 900.0, "y": 20.0})
    current = await (await client.get("/api/channels/m/settings", headers=AUTH)).json()
    current["outputs"]["preview"]["view"] = view
    r = await client.put("/api/channels/m/settings", json=current, headers=AUTH)
    assert r.status == 200, await r.text()
    ch = client.server.app[HUB].get("m")
    r = await client.post("/api/channels/m/control", json={"op": "seek", "game": 2, "step": 0}, headers=AUTH)
    scene = json.loads(ch.scene_text("preview", SIZE, clock.t, snapshot=True)[0])
    assert (scene["game"], scene["games"], scene["gameTitle"]) == (2, 3, "Generated game 3 \u2014 Game 3 of 3")
    assert "GAME 3 OF 3" in json.dumps(scene["scene"], ensure_ascii=False)


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"op": "seek", "game": 7}, "no game 7 in the match (games: 0, 1, 2)"),
        ({"op": "seek", "game": 1, "deal": 9}, "no deal 9 (game 1 of the match has 2)"),
        ({"op": "seek", "game": 1, "step": 999}, "no step 999 in game 1"),
    ],
)
async def test_match_seek_refusals(client: Any, body: dict[str, Any], needle: str) -> None:
    await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    await client.put("/api/channels/m/game", data=json.dumps(match_doc()), headers=AUTH)
    r = await client.post("/api/channels/m/control", json=body, headers=AUTH)
    assert r.status == 400 and needle in (await r.json())["error"]


async def test_match_refuses_single_actions_and_plain_games_say_game_zero(client: Any) -> None:
    await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    await client.put("/api/channels/m/game", data=json.dumps(match_doc()), headers=AUTH)
    r = await client.post("/api/channels/m/actions", json={"seq": 1, "kind": "card", "card": "Jd"}, headers=AUTH)
    assert r.status == 400 and "holds a match (3 games)" in (await r.json())["error"]
    await client.post("/api/channels", json={"id": "g"}, headers=AUTH)
    await client.put("/api/channels/g/game", data=json.dumps(generate_game(3, deals=1)), headers=AUTH)
    state = await (await client.get("/api/channels/g/state")).json()
    assert (state["game"], state["games"], state["gameTitle"]) == (0, 1, "Generated game 3")
    info = await (await client.get("/api/channels/g", headers=AUTH)).json()
    assert info["game"]["match"] is False and info["game"]["games"] == []


async def test_match_survives_a_restart(aiohttp_client: Any, tmp_path: Path) -> None:
    settings = ServerSettings(data_dir=tmp_path, token=TOKEN, demo=False)
    client = await aiohttp_client(create_app(settings))
    await client.post("/api/channels", json={"id": "m"}, headers=AUTH)
    r = await client.post("/api/channels/m/game", data=json.dumps(match_doc()), headers=AUTH)
    assert r.status == 200
    await client.post("/api/channels/m/control", json={"op": "seek", "game": 1}, headers=AUTH)
    await client.close()
    client = await aiohttp_client(create_app(settings))
    state = await (await client.get("/api/channels/m/state")).json()
    assert state["game"] == 1 and state["games"] == 3
