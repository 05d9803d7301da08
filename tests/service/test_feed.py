"""The logger feed in process (pytest-aiohttp): whole games, uploads, single actions, the feed
socket, followed files; every refusal keeps the last good state."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.codec import encode_condensed
from engine.load import MAX_INPUT
from overlay.service.feed import actions_of
from tests.support import AUTH, empty_game, game, make_channel


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
        (b"{not json", 400, ["channel t1: line 1, column 2: expecting property name"]),
        (b"", 400, ["empty"]),
        (json.dumps({"fileType": "Euchre Game Notation", "version": "1.4", "metadata": {}, "deals": []}).encode(), 400, ["channel t1", "players"]),
        (b"\x01\xff\xff\xff", 400, ["channel t1"]),
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
    assert body["error"].startswith("channel t1: deal 1") and "'Bogus'" in body["error"]
    assert body["place"]["deal"] == 1


async def test_input_over_8_mib_is_refused(client: Any) -> None:
    await make_channel(client)
    r = await client.put("/api/channels/t1/game", data=b" " * (MAX_INPUT + 1), headers=AUTH)
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
    assert body["error"].startswith("channel t1: deal 0") and repr(wrong) in body["error"]
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
    # an action as POST …/actions takes it, without the envelope, is the same action
    await ws.send_json(acts[1])
    assert (await ws.receive_json(timeout=5))["steps"] == 2
    await ws.send_json(acts[1])
    assert (await ws.receive_json(timeout=5))["duplicate"] is True
    await ws.send_json(acts[4])
    refused = await ws.receive_json(timeout=5)
    assert refused == {**refused, "type": "refused", "status": 409, "expected": 3, "seq": 5}
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
    # the watcher may not be watching yet: save again until it has read a complete file
    for _ in range(100):
        path.write_text(text)
        info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
        if info["game"] is not None:
            break
        await asyncio.sleep(0.05)  # polling the service, not waiting out a duration
    assert info["game"] is not None and info["followError"] is None
    steps = info["game"]["steps"]
    # the logger's app removes the file (a save by delete and write): the status says it is
    # gone, not a fault of an earlier read, and the channel keeps its game
    path.write_text("{")
    for _ in range(100):
        info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
        if info["followError"] is not None:
            break
        await asyncio.sleep(0.05)
    assert "logger.egn: line 1, column" in info["followError"]
    path.unlink()
    for _ in range(100):
        info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
        if info["followError"] == f"{path}: no such file":
            break
        await asyncio.sleep(0.05)
    assert info["followError"] == f"{path}: no such file" and info["game"]["steps"] == steps
    path.write_text(text)
    for _ in range(100):
        info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
        if info["followError"] is None:
            break
        await asyncio.sleep(0.05)
    assert info["followError"] is None and info["game"]["steps"] == steps
    r = await client.delete("/api/channels/t1/follow", headers=AUTH)
    assert (await r.json()) == {"follow": None}
    r = await client.post("/api/channels/t1/follow", json={"path": str(tmp_path / "nope" / "x.egn")}, headers=AUTH)
    assert r.status == 404


@pytest.mark.parametrize("hands", [True, False], ids=["hands-given", "hands-worked-out"])
async def test_a_new_revision_reuses_only_the_scenes_it_did_not_change(client: Any, hands: bool) -> None:
    """Each action is a new timeline revision; the scene cache finds the scenes of the steps
    the action left alone under the revision before, and draws again only the others.  With
    hands worked out from later plays a new card changes earlier steps' hands: those scenes
    are drawn again.  Every cached scene equals one drawn from scratch."""
    from overlay.service.keys import HUB
    from overlay.service.outputs import render

    doc = game(9, 1)
    if not hands:
        for deal in doc["deals"]:
            deal["initialState"].pop("playerCards", None)
    await make_channel(client, "kin", doc=empty_game(doc))
    ch = client.server.app[HUB].channels["kin"]
    size = (640, 360)

    def scene(step: int) -> str:
        part = ch.game.part_of(step)
        return ch.fanout.cache.get(
            (ch.revision, ch.render.revision, "preview", size, step), ch.game.steps, ch.render, title=part.title
        )

    reused = 0
    for a in actions_of(doc)[:14]:
        if not hands:
            a.pop("playerCards", None)
        for step in range(ch.steps):  # the old revision's scenes are in the cache
            scene(step)
        r = await client.post("/api/channels/kin/actions", json=a, headers=AUTH)
        assert r.status == 200, await r.text()
        builds = ch.fanout.cache.builds
        for step in range(ch.steps):
            fresh = render(
                ch.game.steps[step], view=ch.render.view("preview", step), theme=ch.render.theme,
                timing=ch.render.timing, title=ch.game.part_of(step).title, size=size, match=ch.render.match,
            )
            assert scene(step) == fresh, (a, step)
        reused += ch.steps - (ch.fanout.cache.builds - builds)
    assert reused > 0 if hands else True


async def test_live_catch_up_marks_follow_the_feed(client: Any) -> None:
    """The marks live catch-up never cuts over (deal-scored steps) are carried from action
    to action: after a fed game they are those of the whole game read at once."""
    from overlay.service.keys import HUB
    from overlay.service.outputs import marks_of

    doc = game(5, 3)
    await make_channel(client, "marks", doc=empty_game(doc))
    for a in actions_of(doc):
        r = await client.post("/api/channels/marks/actions", json=a, headers=AUTH)
        assert r.status == 200, await r.text()
    ch = client.server.app[HUB].channels["marks"]
    assert ch.director.times.marks == frozenset(marks_of(ch.game.steps)) and len(ch.director.times.marks) == 3


async def test_a_large_game_is_read_off_the_loop_and_others_are_served_meanwhile(client: Any) -> None:
    """A megabyte PUT (66 deals, laid out with wide indents, as some editors save) is read in
    a worker thread: the loop answers other requests while it is read, and the game lands
    as a small one would; a refused large body still names its place and keeps the game."""
    import threading

    from engine.generate import generate_game
    from overlay.service import feed
    from overlay.service.ingest import THREAD_BODY

    await make_channel(client, doc=game(3, 1))
    doc = generate_game(3, ruleset={"winning_score": 50}, deals=100)
    body = json.dumps(doc, indent=32).encode()
    assert len(body) > max(THREAD_BODY, 1 << 20)
    readers: list[str] = []
    real = feed.load_bytes

    def spy(*args: Any, **kwargs: Any) -> Any:  # our own function, watched: which thread reads
        readers.append(threading.current_thread().name)
        return real(*args, **kwargs)

    feed.load_bytes = spy  # type: ignore[assignment]
    try:
        put = asyncio.ensure_future(client.put("/api/channels/t1/game", data=body, headers=AUTH))
        served = 0
        while not put.done():
            r = await client.get("/api/channels/t1/state")
            assert r.status == 200
            served += 1
        r = await put
    finally:
        feed.load_bytes = real  # type: ignore[assignment]
    assert r.status == 200, await r.text()
    assert readers and all(name != threading.main_thread().name for name in readers)
    assert served >= 1
    state = await (await client.get("/api/channels/t1/state")).json()
    assert state["steps"] == (await r.json())["steps"] > 600
    bad = body.replace(b'"Pass"', b'"Pazz"', 1)
    r = await client.put("/api/channels/t1/game", data=bad, headers=AUTH)
    assert r.status == 400 and "deal" in (await r.text())
    assert (await (await client.get("/api/channels/t1/state")).json())["steps"] == state["steps"]
