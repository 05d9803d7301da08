"""The overlay service in process (pytest-aiohttp): every endpoint, bad input and auth."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSCloseCode, WSMsgType, web

from engine.codec import encode_condensed
from engine.generate import generate_game
from overlay.app import create_app
from overlay.config import ServerSettings
from overlay.keys import HUB, TOKEN, TOKEN_CREATED

TOKEN_VALUE = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN_VALUE}"}


def game(seed: int = 7, deals: int = 2) -> dict[str, Any]:
    return generate_game(seed, deals=deals)


def actions_of(doc: dict[str, Any], *, deals: int | None = None) -> list[dict[str, Any]]:
    """The logger actions that write ``doc`` deal by deal (seq from 1)."""
    out: list[dict[str, Any]] = []
    for deal in doc["deals"][:deals]:
        init = deal["initialState"]
        out.append({"kind": "new_deal", "dealer": init["dealer"], "upCard": init["upCard"], "playerCards": init.get("playerCards")})
        for phase in deal["phases"]:
            if phase["type"] == "EUCHRE_BIDDING":
                calls = phase["calls"]
                for i, call in enumerate(calls):
                    a: dict[str, Any] = {"kind": "call", "call": call}
                    if i == len(calls) - 1 and phase.get("isAlone") is not None:
                        a["alone"] = phase["isAlone"]
                    out.append(a)
                if "discard" in phase:
                    out.append({"kind": "discard", "card": phase["discard"]})
            else:
                for trick in phase["tricks"]:
                    out.extend({"kind": "card", "card": c} for c in trick)
    for i, a in enumerate(out, 1):
        a["seq"] = i
    return out


def empty_game(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}


@pytest.fixture
def settings(tmp_path: Path) -> ServerSettings:
    return ServerSettings(data_dir=tmp_path, token=TOKEN_VALUE, demo=False)


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    return await aiohttp_client(create_app(settings))


async def make_channel(client: Any, cid: str = "t1", doc: dict[str, Any] | None = None) -> None:
    r = await client.post("/api/channels", json={"id": cid}, headers=AUTH)
    assert r.status == 201, await r.text()
    if doc is not None:
        r = await client.put(f"/api/channels/{cid}/game", data=json.dumps(doc), headers=AUTH)
        assert r.status == 200, await r.text()


async def scene_msg(ws: Any, timeout: float = 3.0) -> dict[str, Any]:
    while True:
        msg = await ws.receive(timeout=timeout)
        assert msg.type == WSMsgType.TEXT, msg
        data = json.loads(msg.data)
        if data["type"] == "scene":
            return data


# --------------------------------------------------------------------------- auth


PROTECTED = [
    ("GET", "/api/status"),
    ("GET", "/api/channels"),
    ("POST", "/api/channels"),
    ("GET", "/api/channels/t1"),
    ("DELETE", "/api/channels/t1"),
    ("PUT", "/api/channels/t1/game"),
    ("POST", "/api/channels/t1/game"),
    ("POST", "/api/channels/t1/load"),
    ("POST", "/api/channels/t1/actions"),
    ("GET", "/api/channels/t1/feed"),
    ("POST", "/api/channels/t1/follow"),
    ("DELETE", "/api/channels/t1/follow"),
    ("POST", "/api/channels/t1/control"),
    ("POST", "/api/channels/t1/control/play"),
    ("GET", "/api/channels/t1/settings"),
    ("PUT", "/api/channels/t1/settings"),
    ("GET", "/api/channels/t1/status"),
]


@pytest.mark.parametrize("method, path", PROTECTED)
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"X-Token": "nope"}])
async def test_control_and_feed_need_the_token(client: Any, method: str, path: str, headers: dict[str, str]) -> None:
    await make_channel(client)
    r = await client.request(method, path, headers=headers)
    assert r.status == 401
    body = await r.json()
    assert body["kind"] == "unauthorized" and "token" in body["error"]


@pytest.mark.parametrize(
    "how",
    [{"headers": AUTH}, {"headers": {"X-Token": TOKEN_VALUE}}, {"params": {"token": TOKEN_VALUE}}],
)
async def test_token_accepted_three_ways(client: Any, how: dict[str, Any]) -> None:
    r = await client.get("/api/channels", **how)
    assert r.status == 200
    assert (await r.json()) == {"channels": []}


@pytest.mark.parametrize(
    "path, kind",
    [
        ("/overlay/t1", "text/html"),
        ("/overlay/t1?output=clean&width=3840&height=2160", "text/html"),
        ("/api/channels/t1/state", "application/json"),
        ("/api/channels/t1/state?output=preview", "application/json"),
        ("/static/overlay.js", "application/javascript"),
        ("/fonts/bold.ttf", "font/ttf"),
        ("/", "text/plain"),
    ],
)
async def test_read_only_endpoints_need_no_token(client: Any, path: str, kind: str) -> None:
    await make_channel(client, doc=game())
    r = await client.get(path)
    assert r.status == 200, await r.text()
    assert r.content_type == kind
    assert len(await r.read()) > 0


async def test_token_created_on_first_start_and_kept(tmp_path: Path) -> None:
    s = ServerSettings(data_dir=tmp_path, demo=False)
    app1 = create_app(s)
    assert app1[TOKEN_CREATED] and len(app1[TOKEN]) >= 24
    app2 = create_app(s)
    assert not app2[TOKEN_CREATED] and app2[TOKEN] == app1[TOKEN]


# --------------------------------------------------------------------------- channels


async def test_channel_create_list_get_delete(client: Any) -> None:
    await make_channel(client, "alpha")
    r = await client.post("/api/channels", json={"id": "alpha"}, headers=AUTH)
    assert r.status == 409 and "already exists" in (await r.json())["error"]
    r = await client.get("/api/channels", headers=AUTH)
    assert [c["id"] for c in (await r.json())["channels"]] == ["alpha"]
    r = await client.get("/api/channels/alpha", headers=AUTH)
    info = await r.json()
    assert info["game"] is None and info["playhead"]["steps"] == 0
    r = await client.delete("/api/channels/alpha", headers=AUTH)
    assert r.status == 200
    for path in ("/api/channels/alpha", "/api/channels/alpha/settings"):
        r = await client.get(path, headers=AUTH)
        assert r.status == 404 and "alpha" in (await r.json())["error"]
    r = await client.get("/overlay/alpha")
    assert r.status == 404


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"id": "bad id!"}, "id"),
        ({"id": ""}, "id"),
        ({}, "id"),
        ({"id": "ok", "unknown": 1}, "unknown"),
        ({"id": "ok", "settings": {"outputs": {"program": {"delay": -1}}}}, "delay"),
    ],
)
async def test_channel_create_refuses_bad_input(client: Any, body: dict[str, Any], needle: str) -> None:
    r = await client.post("/api/channels", json=body, headers=AUTH)
    assert r.status == 400
    assert needle in (await r.json())["error"]


async def test_channel_create_refuses_non_json(client: Any) -> None:
    r = await client.post("/api/channels", data=b"{nope", headers=AUTH)
    assert r.status == 400 and "not JSON" in (await r.json())["error"]


# --------------------------------------------------------------------------- whole games


async def test_put_game_is_idempotent_and_state_follows(client: Any) -> None:
    doc = game()
    await make_channel(client, doc=doc)
    r = await client.put("/api/channels/t1/game", data=json.dumps(doc), headers=AUTH)
    ack = await r.json()
    assert ack["changed"] is False and ack["steps"] > 50  # same bytes as make_channel: nothing new
    # same game in another encoding: accepted, nothing to animate
    r = await client.put("/api/channels/t1/game", data=encode_condensed(doc), headers=AUTH)
    assert r.status == 200 and (await r.json())["changed"] is False
    r = await client.get("/api/channels/t1/state")
    state = await r.json()
    assert state["steps"] == ack["steps"] and state["state"]["players"] == doc["metadata"]["players"]


async def test_put_binary_game(client: Any) -> None:
    await make_channel(client)
    r = await client.put("/api/channels/t1/game", data=encode_condensed(game(3, 1)), headers=AUTH)
    assert r.status == 200, await r.text()
    assert (await r.json())["changed"] is True


@pytest.mark.parametrize(
    "data, status, needles",
    [
        (b"{not json", 400, ["t1.egn", "line 1", "column 2"]),
        (b"", 400, ["empty"]),
        (json.dumps({"fileType": "Euchre Game Notation", "version": "1.4", "metadata": {}, "deals": []}).encode(), 400, ["t1.egn", "players"]),
        (b"\x01\xff\xff\xff", 400, ["t1.egn"]),
    ],
)
async def test_put_game_refusals_keep_last_good_state(client: Any, data: bytes, status: int, needles: list[str]) -> None:
    doc = game()
    await make_channel(client, doc=doc)
    before = await (await client.get("/api/channels/t1/state")).json()
    r = await client.put("/api/channels/t1/game", data=data, headers=AUTH)
    assert r.status == status
    body = await r.json()
    for needle in needles:
        assert needle in body["error"], body
    after = await (await client.get("/api/channels/t1/state")).json()
    assert after["steps"] == before["steps"] and after["state"]["players"] == before["state"]["players"]


async def test_schema_refusal_names_the_place(client: Any) -> None:
    doc = game()
    doc["deals"][1]["phases"][0]["calls"][0] = "Bogus"
    await make_channel(client)
    r = await client.put("/api/channels/t1/game", data=json.dumps(doc), headers=AUTH)
    assert r.status == 400
    body = await r.json()
    assert body["error"].startswith("t1.egn: deal 1") and "'Bogus'" in body["error"]
    assert body["place"]["deal"] == 1


async def test_input_over_8_mib_is_refused(client: Any) -> None:
    await make_channel(client)
    r = await client.put("/api/channels/t1/game", data=b" " * (8 * 1024 * 1024 + 1), headers=AUTH)
    assert r.status == 413
    assert "8388608" in (await r.json())["error"]


async def test_correction_cuts_and_reports_it(client: Any) -> None:
    doc = game()
    await make_channel(client, doc=doc)
    r = await client.post("/api/channels/t1/control", json={"op": "seek", "step": 40}, headers=AUTH)
    assert r.status == 200
    fixed = json.loads(json.dumps(doc))
    fixed["metadata"]["players"][0] = "Corrected Name"
    r = await client.put("/api/channels/t1/game", data=json.dumps(fixed), headers=AUTH)
    ack = await r.json()
    assert ack["changed"] and ack["correction"]
    state = await (await client.get("/api/channels/t1/state")).json()
    assert state["state"]["players"][0] == "Corrected Name"


async def test_upload_and_load_by_path(client: Any, tmp_path: Path) -> None:
    await make_channel(client)
    path = tmp_path / "final.egnb"
    path.write_bytes(encode_condensed(game(11, 1)))
    r = await client.post("/api/channels/t1/load", json={"path": str(path)}, headers=AUTH)
    assert r.status == 200, await r.text()
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["source"] == "final.egnb"
    r = await client.post("/api/channels/t1/load", json={"path": str(tmp_path / "missing.egn")}, headers=AUTH)
    assert r.status == 404 and "missing.egn" in (await r.json())["error"]
    # multipart upload, detected by content whatever the name says
    from aiohttp import FormData

    form = FormData()
    form.add_field("file", json.dumps(game(12, 1)).encode(), filename="upload.bin", content_type="application/octet-stream")
    r = await client.post("/api/channels/t1/game", data=form, headers=AUTH)
    assert r.status == 200, await r.text()
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["source"] == "upload.bin" and info["playhead"]["step"] == 0


# --------------------------------------------------------------------------- single actions


async def test_actions_build_the_same_game_as_a_put(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, "whole", doc=doc)
    await make_channel(client, "live", doc=empty_game(doc))
    for a in actions_of(doc):
        r = await client.post("/api/channels/live/actions", json=a, headers=AUTH)
        assert r.status == 200, (a, await r.text())
        ack = await r.json()
        assert ack["seq"] == a["seq"] and ack["expected"] == a["seq"] + 1 and not ack["duplicate"]
    whole = await (await client.get("/api/channels/whole/state")).json()
    live = await (await client.get("/api/channels/live/state")).json()
    assert live["steps"] == whole["steps"]
    r = await client.post("/api/channels/live/control", json={"op": "seek", "step": whole["steps"] - 1}, headers=AUTH)
    r = await client.post("/api/channels/whole/control", json={"op": "seek", "step": whole["steps"] - 1}, headers=AUTH)
    live = await (await client.get("/api/channels/live/state")).json()
    whole = await (await client.get("/api/channels/whole/state")).json()
    assert live["state"]["score"] == whole["state"]["score"]
    assert live["state"]["tricks"] == whole["state"]["tricks"]


async def test_new_cards_animate_when_hands_are_unknown(client: Any) -> None:
    """Without playerCards the engine works hands out from later plays; a new card fills in
    earlier steps' hands, which must not count as a correction (that would jump, not animate)."""
    doc = game(6, 1)
    for deal in doc["deals"]:
        deal["initialState"].pop("playerCards", None)
    await make_channel(client, "live", doc=empty_game(doc))
    corrections = []
    for a in actions_of(doc):
        a.pop("playerCards", None)
        r = await client.post("/api/channels/live/actions", json=a, headers=AUTH)
        assert r.status == 200, (a, await r.text())
        if (await r.json())["correction"]:
            corrections.append(a)
    # the dealer's discard names a card the pick-up step showed as unknown: that one is a correction
    assert [a["kind"] for a in corrections] in ([], ["discard"])


async def test_action_duplicates_ignored_gaps_refused(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    acts = actions_of(doc)
    for a in acts[:3]:
        assert (await client.post("/api/channels/t1/actions", json=a, headers=AUTH)).status == 200
    r = await client.post("/api/channels/t1/actions", json=acts[1], headers=AUTH)
    assert r.status == 200 and (await r.json())["duplicate"] is True
    r = await client.post("/api/channels/t1/actions", json=acts[5], headers=AUTH)
    assert r.status == 409
    body = await r.json()
    assert body["expected"] == 4 and body["kind"] == "sequence_gap"
    r = await client.post("/api/channels/t1/actions", json=acts[3], headers=AUTH)
    assert r.status == 200 and (await r.json())["steps"] == 4  # deal start + 3 calls


@pytest.mark.parametrize(
    "bad, needles",
    [
        ({"kind": "call", "call": "Zz"}, ["deal 0"]),
        ({"kind": "card", "card": "9x9"}, ["card"]),
        ({"kind": "new_deal"}, ["dealer"]),
        ({"kind": "jump"}, ["kind"]),
        ({"kind": "call"}, ["call"]),
    ],
)
async def test_bad_actions_are_refused_with_the_place(client: Any, bad: dict[str, Any], needles: list[str]) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    first = actions_of(doc)[0]
    assert (await client.post("/api/channels/t1/actions", json=first, headers=AUTH)).status == 200
    before = await (await client.get("/api/channels/t1/state")).json()
    r = await client.post("/api/channels/t1/actions", json={"seq": 2, **bad}, headers=AUTH)
    assert r.status == 400, await r.text()
    body = await r.json()
    for needle in needles:
        assert needle in body["error"], body
    after = await (await client.get("/api/channels/t1/state")).json()
    assert after == before
    # the refused number is still the one expected
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["seq"] == 1


async def test_illegal_card_is_refused_by_the_engine(client: Any) -> None:
    doc = game(5, 1)
    acts = actions_of(doc)
    await make_channel(client, doc=empty_game(doc))
    first_card = next(i for i, a in enumerate(acts) if a["kind"] == "card")
    for a in acts[:first_card]:
        assert (await client.post("/api/channels/t1/actions", json=a, headers=AUTH)).status == 200
    leader_card = acts[first_card]["card"]
    # a card from another seat's hand (the last card of the deal) cannot be led now
    wrong = next(a["card"] for a in reversed(acts) if a["kind"] == "card" and a["card"] != leader_card)
    r = await client.post("/api/channels/t1/actions", json={"seq": first_card + 1, "kind": "card", "card": wrong}, headers=AUTH)
    assert r.status == 400, await r.text()
    body = await r.json()
    assert body["error"].startswith("t1.egn: deal 0") and repr(wrong) in body["error"]
    assert body["kind"] == "rule"


async def test_undo_is_a_correction(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    acts = actions_of(doc)
    for a in acts[:4]:
        await client.post("/api/channels/t1/actions", json=a, headers=AUTH)
    r = await client.post("/api/channels/t1/control", json={"op": "live"}, headers=AUTH)
    before = (await (await client.get("/api/channels/t1/state")).json())["steps"]
    r = await client.post("/api/channels/t1/actions", json={"seq": 5, "kind": "undo"}, headers=AUTH)
    ack = await r.json()
    assert ack["correction"] and ack["steps"] == before - 1
    # undo everything, including the deal itself (seq 8); then there is nothing to undo
    for seq in range(6, 9):
        r = await client.post("/api/channels/t1/actions", json={"seq": seq, "kind": "undo"}, headers=AUTH)
        assert r.status == 200, await r.text()
    assert (await r.json())["steps"] == 0
    r = await client.post("/api/channels/t1/actions", json={"seq": 9, "kind": "undo"}, headers=AUTH)
    assert r.status == 400 and "send new_deal first" in (await r.json())["error"]


async def test_actions_need_a_game(client: Any) -> None:
    await make_channel(client)
    r = await client.post("/api/channels/t1/actions", json={"seq": 1, "kind": "call", "call": "Pass"}, headers=AUTH)
    assert r.status == 400 and "no game" in (await r.json())["error"]


async def test_feed_socket(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client)
    ws = await client.ws_connect("/api/channels/t1/feed", headers=AUTH)
    await ws.send_json({"type": "game", "document": empty_game(doc)})
    ack = await ws.receive_json(timeout=5)
    assert ack["type"] == "ack" and ack["steps"] == 0
    acts = actions_of(doc)
    await ws.send_json({"type": "action", "action": acts[0]})
    assert (await ws.receive_json(timeout=5))["steps"] == 1
    await ws.send_json({"type": "action", "action": acts[0]})
    assert (await ws.receive_json(timeout=5))["duplicate"] is True
    await ws.send_json({"type": "action", "action": acts[4]})
    refused = await ws.receive_json(timeout=5)
    assert refused == {**refused, "type": "refused", "status": 409, "expected": 2, "seq": 5}
    await ws.send_bytes(encode_condensed(doc))
    ack = await ws.receive_json(timeout=5)
    assert ack["type"] == "ack" and ack["steps"] > 20
    await ws.send_str("{broken")
    refused = await ws.receive_json(timeout=5)
    assert refused["type"] == "refused" and refused["status"] == 400
    await ws.send_json({"type": "game", "data": "!!", "base64": True})
    assert (await ws.receive_json(timeout=5))["error"] == "game 'data' is not valid base64"
    await ws.close()


async def test_follow_a_file_ignores_half_written_saves(client: Any, tmp_path: Path) -> None:
    doc = game(9, 1)
    path = tmp_path / "logger.egn"
    text = json.dumps(doc)
    path.write_text(text[: len(text) // 2])
    await make_channel(client)
    r = await client.post("/api/channels/t1/follow", json={"path": str(path)}, headers=AUTH)
    assert r.status == 200
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"] is None and "logger.egn: line 1, column" in info["followError"]
    await asyncio.sleep(0.3)  # the watcher is running
    path.write_text(text)
    for _ in range(100):
        info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
        if info["game"] is not None:
            break
        await asyncio.sleep(0.05)
    assert info["game"] is not None and info["followError"] is None
    r = await client.delete("/api/channels/t1/follow", headers=AUTH)
    assert (await r.json()) == {"follow": None}
    r = await client.post("/api/channels/t1/follow", json={"path": str(tmp_path / "nope" / "x.egn")}, headers=AUTH)
    assert r.status == 404


# --------------------------------------------------------------------------- control


@pytest.mark.parametrize(
    "body, check",
    [
        ({"op": "pause"}, {"playing": False}),
        ({"op": "play"}, {"playing": True}),
        ({"op": "toggle"}, {"playing": False}),
        ({"op": "speed", "speed": 2.5}, {"speed": 2.5}),
        ({"op": "loop", "value": True}, {"loop": True}),
        ({"op": "auto", "value": False}, {"auto": False}),
        ({"op": "next"}, {"auto": False, "hold": 1}),
        ({"op": "step"}, {"step": 1, "playing": False}),
        ({"op": "back"}, {"step": 0, "playing": False}),
        ({"op": "seek", "step": 10}, {"step": 10}),
        ({"op": "seek", "deal": 1}, {"playing": True}),
        ({"op": "live"}, {"auto": True, "playing": True}),
    ],
)
async def test_control_ops(client: Any, body: dict[str, Any], check: dict[str, Any]) -> None:
    await make_channel(client, doc=game())
    r = await client.post("/api/channels/t1/control", json=body, headers=AUTH)
    assert r.status == 200, await r.text()
    ph = await r.json()
    assert {k: ph[k] for k in check} == check


async def test_control_by_path_for_stream_decks(client: Any) -> None:
    await make_channel(client, doc=game())
    r = await client.post("/api/channels/t1/control/seek?step=5", headers=AUTH)
    assert r.status == 200 and (await r.json())["hold"] == 5
    r = await client.post("/api/channels/t1/control/speed", params={"speed": "0.5", "token": TOKEN_VALUE})
    assert (await r.json())["speed"] == 0.5


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"op": "seek"}, "seek needs"),
        ({"op": "seek", "deal": 99}, "no deal 99"),
        ({"op": "seek", "step": 10_000}, "no step 10000"),
        ({"op": "speed"}, "speed needs"),
        ({"op": "speed", "speed": 0}, "speed"),
        ({"op": "loop"}, "loop needs"),
        ({"op": "rewind"}, "op"),
        ([1, 2], "JSON object"),
    ],
)
async def test_control_refusals(client: Any, body: Any, needle: str) -> None:
    await make_channel(client, doc=game())
    r = await client.post("/api/channels/t1/control", json=body, headers=AUTH)
    assert r.status == 400
    assert needle in (await r.json())["error"]


# --------------------------------------------------------------------------- settings


async def test_settings_revisions(client: Any) -> None:
    await make_channel(client, doc=game())
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    assert doc["revision"] == 1
    doc["outputs"]["program"]["delay"] = 30
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 200 and (await r.json())["revision"] == 2
    # a second writer still holding revision 1 is refused with the current document
    doc["title"] = "stale"
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 409
    body = await r.json()
    assert body["kind"] == "stale_revision" and body["current"]["revision"] == 2
    assert body["current"]["outputs"]["program"]["delay"] == 30


@pytest.mark.parametrize(
    "patch, needle",
    [
        ({"outputs": {"program": {"view": {"width": 10}}}}, "width"),
        ({"timing": {"card": {"run_time": -1}}}, "run_time"),
        ({"outputs": {"program": {"width": 100}}}, "width"),
        ({"outputs": {"studio": {}}}, "studio"),
    ],
)
async def test_settings_refusals(client: Any, patch: dict[str, Any], needle: str) -> None:
    await make_channel(client)
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    r = await client.put("/api/channels/t1/settings", json={**doc, **patch}, headers=AUTH)
    assert r.status == 400
    assert needle in (await r.json())["error"]


async def test_timing_change_retimes_the_director(client: Any) -> None:
    await make_channel(client, doc=game())
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    doc["timing"] = {"card": {"run_time": 0.1, "hold": 0.1, "ease": "out"}}
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 200
    ch = client.server.app[HUB].get("t1")
    assert 0.2 in ch.director.durations


# --------------------------------------------------------------------------- pages and state stream


async def test_page_socket_snapshot_scenes_and_status(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    ws = await client.ws_connect("/ws/overlay/t1?output=preview&width=1280&height=720")
    snap = await scene_msg(ws)
    assert snap["snapshot"] and snap["step"] is None and snap["scene"] is None
    acts = actions_of(doc)
    await client.post("/api/channels/t1/actions", json=acts[0], headers=AUTH)
    msg = await scene_msg(ws)
    assert msg["step"] == 0 and msg["scene"]["w"] == 1280 and msg["scene"]["h"] == 720
    assert msg["rate"] == 1.0 and msg["age"] < 0.2
    await ws.send_json({"type": "drawn", "seq": msg["seq"], "step": 0})
    await ws.send_json({"type": "resync", "reason": "visible"})
    again = await scene_msg(ws)
    assert again["snapshot"] and again["step"] == 0
    st = await (await client.get("/api/channels/t1/status", headers=AUTH)).json()
    page = st["outputs"]["preview"]["pages"][0]
    assert page["lastDrawnStep"] == 0 and page["lagMs"] is not None and page["width"] == 1280
    assert st["outputs"]["program"]["pages"] == []
    await ws.send_str("not json")
    err = await ws.receive_json(timeout=3)
    assert err["type"] == "error"
    await ws.close()
    r = await client.get("/ws/overlay/t1?output=studio")
    assert r.status == 400


async def test_program_delay_runs_behind_preview(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    settings = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    settings["outputs"]["program"]["delay"] = 0.6
    assert (await client.put("/api/channels/t1/settings", json=settings, headers=AUTH)).status == 200
    program = await client.ws_connect("/ws/overlay/t1?output=program")
    preview = await client.ws_connect("/ws/overlay/t1?output=preview")
    await scene_msg(program)
    await scene_msg(preview)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    live = await scene_msg(preview)
    t_live = loop.time() - t0
    delayed = await scene_msg(program)
    while delayed["step"] is None:  # older changes reach the delayed output first
        delayed = await scene_msg(program)
    t_delayed = loop.time() - t0
    assert live["step"] == delayed["step"] == 0
    assert t_live < 0.3 and t_delayed >= 0.55
    await program.close()
    await preview.close()


async def test_state_stream(client: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    ws = await client.ws_connect("/api/channels/t1/state/ws?output=preview")
    first = await ws.receive_json(timeout=3)
    assert first["type"] == "state" and first["state"] is None
    await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    nxt = await ws.receive_json(timeout=3)
    assert nxt["step"] == 0 and nxt["state"]["kind"] == "deal_start"
    await ws.close()


async def test_page_html_is_safe_and_sized(client: Any) -> None:
    await make_channel(client, doc=game())
    html = await (await client.get("/overlay/t1?output=clean&width=1280&height=720")).text()
    assert '"output": "clean"' in html and '"width": 1280' in html and "/static/player.js" in html
    assert "overflow: hidden" in html and "background: transparent" in html
    for query, needle in [("width=100", "width"), ("height=9999", "height"), ("width=abc", "whole number"), ("output=x", "output")]:
        r = await client.get(f"/overlay/t1?{query}")
        assert r.status == 400 and needle in (await r.json())["error"]


async def test_delete_closes_pages(client: Any) -> None:
    await make_channel(client, doc=game())
    ws = await client.ws_connect("/ws/overlay/t1")
    await scene_msg(ws)
    await client.delete("/api/channels/t1", headers=AUTH)
    bye = await ws.receive_json(timeout=3)
    assert bye == {"type": "bye", "reason": "channel deleted"}
    msg = await ws.receive(timeout=3)
    assert msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING)
    assert ws.close_code == WSCloseCode.GOING_AWAY


# --------------------------------------------------------------------------- persistence and the demo


async def test_restart_restores_channels(aiohttp_client: Any, settings: ServerSettings) -> None:
    doc = game(5, 1)
    app = create_app(settings)
    client = await aiohttp_client(app)
    await make_channel(client, doc=empty_game(doc))
    for a in actions_of(doc)[:6]:
        await client.post("/api/channels/t1/actions", json=a, headers=AUTH)
    s = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    s["outputs"]["clean"]["delay"] = 12
    await client.put("/api/channels/t1/settings", json=s, headers=AUTH)
    await client.post("/api/channels/t1/control", json={"op": "seek", "step": 3}, headers=AUTH)
    await client.post("/api/channels/t1/control", json={"op": "pause"}, headers=AUTH)
    await client.close()

    db = sqlite3.connect(settings.db_path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()

    client2 = await aiohttp_client(create_app(settings))
    info = await (await client2.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["seq"] == 6 and info["game"]["steps"] == 6
    assert info["playhead"]["step"] == 3 and info["playhead"]["playing"] is False
    assert info["settingsRevision"] == 2
    assert info["playhead"]["delays"]["clean"] == 12
    r = await client2.post("/api/channels/t1/actions", json=actions_of(doc)[6], headers=AUTH)
    assert r.status == 200 and (await r.json())["seq"] == 7


async def test_fresh_install_serves_the_looping_demo(aiohttp_client: Any, tmp_path: Path) -> None:
    s = ServerSettings(data_dir=tmp_path, token=TOKEN_VALUE, demo=True)
    client = await aiohttp_client(create_app(s))
    info = await (await client.get("/api/channels/demo", headers=AUTH)).json()
    assert info["game"]["steps"] > 100 and info["playhead"]["loop"] is True and info["playhead"]["playing"]
    assert (await client.get("/overlay/demo")).status == 200
    await client.delete("/api/channels/demo", headers=AUTH)
    await client.close()
    # a deleted demo stays deleted: it is only made on a fresh install
    client2 = await aiohttp_client(create_app(s))
    assert (await client2.get("/api/channels/demo", headers=AUTH)).status == 404


async def test_shutdown_closes_sockets_going_away(aiohttp_client: Any, settings: ServerSettings) -> None:
    client = await aiohttp_client(create_app(settings))
    await make_channel(client, doc=game())
    ws = await client.ws_connect("/ws/overlay/t1")
    await scene_msg(ws)
    closing = asyncio.ensure_future(client.server.close())
    while True:
        msg = await ws.receive(timeout=5)
        if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING):
            break
    await closing
    assert ws.close_code == WSCloseCode.GOING_AWAY
    await client.close()


def test_app_keys_are_typed(settings: ServerSettings) -> None:
    app = create_app(settings)
    assert isinstance(app, web.Application)
    assert isinstance(TOKEN, web.AppKey) and isinstance(HUB, web.AppKey)


async def test_bench_pages_get_the_server_stage_times(client: Any) -> None:
    doc = game(4, 1)
    await make_channel(client, doc=empty_game(doc))
    html = await (await client.get("/overlay/t1?output=preview&bench=1")).text()
    assert "&trace=1" in html
    plain = await client.ws_connect("/ws/overlay/t1?output=preview")
    traced = await client.ws_connect("/ws/overlay/t1?output=preview&trace=1")
    await scene_msg(plain)
    await scene_msg(traced)
    r = await client.post("/api/channels/t1/actions", json=actions_of(doc)[0], headers=AUTH)
    assert r.status == 200
    a, b = await scene_msg(plain), await scene_msg(traced)
    assert "trace" not in a and a["step"] == b["step"] == 0
    t = b["trace"]
    assert t["received"] <= t["replayed"] <= t["committed"] <= t["woke"] <= t["built"]


def test_clean_output_hides_hole_cards_and_commentary() -> None:
    from overlay.protocol import ChannelSettings
    from overlay.outputs import RenderSettings
    from renderer.view import ElementType, Perspective

    rs = RenderSettings(ChannelSettings())
    clean, program = rs.view("clean"), rs.view("program")
    assert clean.perspective is Perspective.PLAYED and program.perspective is Perspective.ALL
    notes = [e for e in clean.elements if e.type is ElementType.ANNOTATIONS]
    assert notes and not any(e.visible for e in notes)
