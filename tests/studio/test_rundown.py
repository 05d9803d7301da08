"""The rundown (issue 23 item 4), in process against the real service: cues stored in the
settings (checked: a view cue names a view, one hotkey per cue), each fired by id from the
studio's API or from its Stream Deck link, GO firing the next; every kind does what it says
on every output (a view by the TAKE transition, intros and statistics with their auto-out,
both off, an alternative line, a stinger over the layout as it is)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.lines import lined_game
from tests.support import AUTH, game, make_channel, scene_msg

SIZE = "width=1280&height=720"


async def _settings(client: Any) -> dict[str, Any]:
    return dict(await (await client.get("/api/channels/t1/settings", headers=AUTH)).json())


async def _patch(client: Any, body: dict[str, Any]) -> Any:
    doc = await _settings(client)
    return await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], **body}, headers=AUTH)


async def _rundown(client: Any, cues: list[dict[str, Any]], **more: Any) -> None:
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    base = schema["defaults"]["views"]["preview"]
    close = json.loads(json.dumps(base))
    for e in close["elements"]:
        if e["type"] in ("ns-score", "ew-score"):
            e["x"] += 700
    views = [{**base, "id": "wide", "name": "Wide"}, {**close, "id": "close", "name": "Close"}]
    r = await _patch(client, {"views": views, "rundown": cues, **more})
    assert r.status == 200, await r.text()


CUES = [
    {"id": "open", "name": "Open", "kind": "view", "view": "close", "transition": "mix", "hotkey": "F1"},
    {"id": "intro", "name": "Intro South", "kind": "intro", "seat": 0, "hotkey": "F2"},
    {"id": "stats", "name": "N/S stats", "kind": "stats", "stats": "team-0"},
    {"id": "off", "name": "Clear", "kind": "hide"},
    {"id": "sting", "name": "Sting", "kind": "stinger"},
]


async def test_cues_are_checked_when_stored(client: Any) -> None:
    await make_channel(client, "t1", game(3, deals=2))
    await _rundown(client, [])
    bad = [
        ([{"id": "a", "kind": "view", "view": "nope"}], "names view 'nope'"),
        ([{"id": "a", "kind": "intro"}], "needs seat"),
        ([{"id": "a", "kind": "hide", "hotkey": "F1"}, {"id": "b", "kind": "stinger", "hotkey": "F1"}], "both take the hotkey F1"),
        ([{"id": "a", "kind": "hide"}, {"id": "a", "kind": "stinger"}], "the id 'a'"),
        ([{"id": "a", "kind": "hide", "hotkey": "Q"}], "F1-F12"),
    ]
    for cues, words in bad:
        r = await _patch(client, {"rundown": cues})
        assert r.status == 400, cues
        assert words in await r.text(), (words, await r.text())


async def test_each_kind_does_what_it_says(client: Any) -> None:
    await make_channel(client, "t1", game(3, deals=2))
    await client.post("/api/channels/t1/control", json={"op": "pause"}, headers=AUTH)
    await _rundown(client, CUES, match={"intro_seconds": 30})
    program = await client.ws_connect(f"/ws/overlay/t1?output=program&{SIZE}")
    await scene_msg(program)

    async def fire(cue: str) -> dict[str, Any]:
        r = await client.post(f"/studio/api/channels/t1/cue/{cue}", headers=AUTH)
        assert r.status == 200, await r.text()
        return dict(await r.json())

    got = await fire("open")
    assert got == {"cue": "open", "name": "Open", "index": 1, "cues": 5, "next": "intro"}
    doc = await _settings(client)
    assert doc["outputs"]["program"]["view"]["id"] == "close"
    assert doc["outputs"]["clean"]["view"]["perspective"] == "played"  # the clean form of it
    msg = await scene_msg(program)
    assert any(op[0] == "ly" and op[2] == "plus" for op in msg["scene"]["ops"])  # the cue's mix
    await fire("intro")
    assert (await _settings(client))["match"]["intro"] == 0
    await fire("stats")
    assert (await _settings(client))["match"]["stats"] == "team-0"
    await fire("off")
    m = (await _settings(client))["match"]
    assert m["intro"] is None and m["stats"] is None
    before = await _settings(client)
    await fire("sting")
    assert (await _settings(client))["revision"] == before["revision"]  # the layout as it is

    def panel(msg: dict[str, Any]) -> bool:  # the stinger's full-canvas panel
        size = [msg["scene"]["w"], msg["scene"]["h"]]
        return any(op[0] == "rr" and op[1:3] == [0, 0] and op[3:5] == size for op in msg["scene"]["ops"])

    for _ in range(8):  # (the scenes of the cues fired before come first)
        sting = await scene_msg(program)
        if panel(sting):
            break
    assert panel(sting) and sting["rate"] == 1
    await program.close()


async def test_go_fires_the_next_cue_until_the_end(client: Any) -> None:
    await make_channel(client, "t1", game(3, deals=2))
    await _rundown(client, CUES[:3])
    fired = []
    for _ in range(3):
        r = await client.post("/studio/api/channels/t1/cue/next", headers=AUTH)
        assert r.status == 200
        fired.append((await r.json())["cue"])
    assert fired == ["open", "intro", "stats"]
    r = await client.post("/studio/api/channels/t1/cue/next", headers=AUTH)
    assert r.status == 400 and "is over" in (await r.json())["error"]
    r = await client.post("/studio/api/channels/t1/cue/nope", headers=AUTH)
    assert r.status == 404 and "open, intro, stats" in (await r.json())["error"]
    # firing one by id puts GO after it
    await client.post("/studio/api/channels/t1/cue/open", headers=AUTH)
    assert (await (await client.post("/studio/api/channels/t1/cue/next", headers=AUTH)).json())["cue"] == "intro"


async def test_a_line_cue_and_the_stream_deck_links(client: Any) -> None:
    await make_channel(client, "t1", lined_game())
    await _rundown(client, [*CUES[:2], {"id": "what-if", "name": "What if", "kind": "line", "deal": 2, "line": 1}])
    body = await (await client.post("/studio/api/channels/t1/control-key", headers=AUTH)).json()
    links = body["links"]
    assert [k for k in links if k.startswith("cue")] == ["cue 1 Open", "cue 2 Intro South", "cue 3 What if", "cue next (GO)"]
    r = await client.get(links["cue 3 What if"])
    assert r.status == 200, await r.text()
    state = await (await client.get(links["state"])).json()
    assert state["line"] is not None and state["cue"] == "what-if" and state["nextCue"] is None
    assert (await client.get(links["cue next (GO)"])).status == 400  # the last one was fired
    assert (await client.get(links["cue 1 Open"])).status == 200
    state = await (await client.get(links["state"])).json()
    assert state["cue"] == "open" and state["nextCue"] == "intro" and state["program"]["name"] == "Close"
    bad = links["cue 1 Open"].replace("key=", "key=x")
    assert (await client.get(bad)).status == 401


@pytest.mark.parametrize("cue", [{"id": "x", "kind": "line", "deal": 9, "line": 1}])
async def test_a_cue_the_game_cannot_play_says_why(client: Any, cue: dict[str, Any]) -> None:
    await make_channel(client, "t1", game(3, deals=2))
    await _rundown(client, [cue])
    r = await client.post("/studio/api/channels/t1/cue/x", headers=AUTH)
    assert r.status in (400, 422)
    assert "deal" in (await r.json())["error"]
