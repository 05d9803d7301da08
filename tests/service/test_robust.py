"""Bad input never blanks or corrupts a channel; no task, socket or watcher outlives its
channel or the server; SQLite keeps every accepted write under concurrent requests; the
OBS page keeps to Chrome 127 and never parses text as HTML."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import WSCloseCode, WSMsgType

from engine.generate import generate_game
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service.feed import actions_of
from overlay.service.keys import HUB
from overlay.service.routes.pages import STATIC
from tests.support import AUTH, empty_game, make_channel

async def snapshot(client: Any, cid: str = "c") -> tuple[Any, ...]:
    info = await (await client.get(f"/api/channels/{cid}", headers=AUTH)).json()
    state = await (await client.get(f"/api/channels/{cid}/state")).json()
    return info["game"]["digest"], info["game"]["steps"], state["state"]


@pytest.mark.parametrize(
    "how, body, needles",
    [
        ("PUT", b"{}", ["channel c", "/fileType", "missing"]),
        ("PUT", b'{"fileType": "Euchre Game Notation"}', ["channel c", "/version"]),
        ("UPLOAD", b"{}", ["upload", "/fileType"]),
        ("UPLOAD", b'{"fileType": "Euchre Game Notation", "version": "1.4", "metadata": {}, "deals": []}', ["upload", "players"]),
    ],
)
async def test_lenient_loads_never_blank_a_channel(client: Any, how: str, body: bytes, needles: list[str]) -> None:
    await make_channel(client, "c", generate_game(3, deals=1))
    before = await snapshot(client)
    if how == "PUT":
        r = await client.put("/api/channels/c/game?strict=0", data=body, headers=AUTH)
    else:
        r = await client.post("/api/channels/c/game", data=body, headers=AUTH)
    assert r.status == 400
    refusal = await r.json()
    assert refusal["kind"] == "schema" and all(n in refusal["error"] for n in needles), refusal
    assert await snapshot(client) == before


FINISHED = generate_game(21)  # played to the end of the game


@pytest.mark.parametrize(
    "frame, status, kind, needle",
    [
        ("{broken", 400, "validation", "Invalid JSON"),
        ("null", 400, "validation", "object"),
        ('{"type": "action"}', 400, "validation", "action -> action: Field required"),
        ('{"type": "nonsense", "x": 1}', 400, "validation", "type"),
        ('{"type": "game"}', 400, "bad_request", "needs 'document' or 'data'"),
        ('{"type": "game", "document": {}}', 400, "schema", "channel c: /fileType"),
        ('{"type": "game", "data": "\\u00e9\\u00e9", "base64": true}', 400, "bad_request", "base64"),
        (b"\x00\x00\x00", 400, "codec", "channel c"),
        (b"\x02", 400, "schema", "channel c"),
        (b"\xff" * 64, 400, "codec", "channel c"),
        ('{"type": "action", "action": {"seq": 1, "kind": "card", "card": "Jd"}}', 400, "rule", "channel c: deal"),
        ('{"type": "action", "action": {"seq": 1, "kind": "call", "call": "Pass"}}', 400, "action", "after the play has started"),
        ('{"type": "action", "action": {"seq": 4, "kind": "call", "call": "Pass", "alone": "no"}}', 400, "validation", "channel 'c': action 4: alone: Input should be a valid boolean"),
        # an action without the envelope, as POST …/actions takes it
        ('{"seq": 4, "kind": "call", "call": "Pass", "alone": "no"}', 400, "validation", "channel 'c': action 4: alone: Input should be a valid boolean"),
        ('{"seq": 1, "kind": "call", "call": "Pass"}', 400, "action", "after the play has started"),
        ('{"seq": 1, "kind": "deal"}', 400, "validation", "channel 'c': action 1: kind: Input should be"),
    ],
)
async def test_feed_socket_refuses_bad_frames_and_keeps_going(
    client: Any, frame: str | bytes, status: int, kind: str, needle: str
) -> None:
    await make_channel(client, "c", FINISHED)
    before = await snapshot(client)
    ws = await client.ws_connect("/api/channels/c/feed", headers=AUTH)
    if isinstance(frame, bytes):
        await ws.send_bytes(frame)
    else:
        await ws.send_str(frame)
    refusal = await ws.receive_json(timeout=5)
    assert (refusal["type"], refusal["status"], refusal["kind"]) == ("refused", status, kind), refusal
    assert needle in refusal["error"], refusal
    assert await snapshot(client) == before
    # the socket still works: the same game again is acknowledged (unchanged)
    await ws.send_json({"type": "game", "document": FINISHED})
    ack = await ws.receive_json(timeout=5)
    assert ack["type"] == "ack" and ack["changed"] is False
    await ws.close()


async def test_an_action_of_the_wrong_shape_names_its_channel_and_seq_on_every_route(client: Any) -> None:
    """A malformed action (a string for a flag, an unknown field) is refused with the channel
    and the action's seq in its text, by the actions route, the logger page's route and the
    feed socket alike, and the channel's feed log keeps that seq for the studio."""
    await make_channel(client, "c", empty_game(generate_game(3, deals=1)))
    bad = {"seq": 1, "kind": "new_deal", "dealer": 0, "upCard": "9s", "alone": "yes"}
    r = await client.post("/api/channels/c/actions", json=bad, headers=AUTH)
    body = await r.json()
    assert r.status == 400 and body["kind"] == "validation", body
    assert body["error"] == "channel 'c': action 1: alone: Input should be a valid boolean" and body["errors"] == [{"loc": ["alone"], "msg": "Input should be a valid boolean"}]
    r = await client.post("/api/channels/c/logger/actions", json={**bad, "seq": 2, "alone": None, "note": 1}, headers={**AUTH, "X-Logger": "p"})
    assert r.status == 400 and (await r.json())["error"] == "channel 'c': action 2: note: Extra inputs are not permitted"
    r = await client.post("/api/channels/c/actions", json={**bad, "seq": "3"}, headers=AUTH)  # no usable seq: the channel only
    assert (await r.json())["error"].startswith("channel 'c': seq: Input should be a valid integer; alone:")
    ws = await client.ws_connect("/api/channels/c/feed", headers=AUTH)
    await ws.send_json({"type": "action", "action": {**bad, "seq": 4}})
    refusal = await ws.receive_json(timeout=5)
    assert (refusal["seq"], refusal["kind"]) == (4, "validation") and refusal["error"].startswith("channel 'c': action 4: alone:"), refusal
    await ws.close()
    feed = (await (await client.get("/api/channels/c", headers=AUTH)).json())["feed"]
    assert [x["seq"] for x in feed["refusals"]] == [4, None, 2, 1] and feed["accepted"] == 1  # (the PUT)
    assert (await client.post("/api/channels/c/actions", json={**bad, "alone": None}, headers=AUTH)).status == 200  # nothing was taken


async def test_huge_feed_frame_closes_with_1009_and_the_channel_keeps_its_game(client: Any) -> None:
    await make_channel(client, "c", generate_game(3, deals=1))
    before = await snapshot(client)
    ws = await client.ws_connect("/api/channels/c/feed", headers=AUTH)
    with pytest.raises((ConnectionError, aiohttp.ClientError)):
        await ws.send_bytes(b"{" * (12 * 1024 * 1024))  # over the socket's cap
        await ws.receive(timeout=5)
        await ws.send_bytes(b"{")
    assert ws.closed or (await ws.receive(timeout=5)).type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.ERROR)
    # 1009 when the client reads the close frame; 1006 when the server hung up mid-send
    assert ws.close_code in (WSCloseCode.MESSAGE_TOO_BIG, WSCloseCode.ABNORMAL_CLOSURE)
    assert await snapshot(client) == before
    ws = await client.ws_connect("/api/channels/c/feed", headers=AUTH)
    await ws.send_json({"type": "action", "action": {"seq": 1, "kind": "new_deal", "dealer": 0, "upCard": "9s"}})
    refusal_or_ack = await ws.receive_json(timeout=5)
    assert refusal_or_ack["type"] in ("ack", "refused")
    await ws.close()


def _channel_tasks(cid: str) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name() in (f"pump:{cid}", f"follow:{cid}") and not t.done()]


async def test_delete_closes_feeds_and_stops_the_watcher(client: Any, tmp_path: Path) -> None:
    doc = generate_game(5, deals=1)
    await make_channel(client, "c", doc)
    path = tmp_path / "followed.egn"
    path.write_text(json.dumps(doc))
    r = await client.post("/api/channels/c/follow", json={"path": str(path)}, headers=AUTH)
    assert r.status == 200
    # re-following swaps the watcher: the old one must finish too
    r = await client.post("/api/channels/c/follow", json={"path": str(path)}, headers=AUTH)
    assert r.status == 200
    feed = await client.ws_connect("/api/channels/c/feed", headers=AUTH)
    page = await client.ws_connect("/ws/overlay/c")
    ch = client.server.app[HUB].get("c")
    watchers = [ch.follow.task, *ch.follow.stopped]
    assert len(_channel_tasks("c")) >= 2
    r = await client.delete("/api/channels/c", headers=AUTH)
    assert r.status == 200
    for ws in (feed, page):
        while (msg := await ws.receive(timeout=5)).type == WSMsgType.TEXT:
            assert json.loads(msg.data)["type"] in ("bye", "scene")
        assert msg.type == WSMsgType.CLOSE and msg.data == WSCloseCode.GOING_AWAY and msg.extra == "channel deleted"
    assert _channel_tasks("c") == [] and all(t is not None and t.done() for t in watchers)
    assert not ch.ingest.feeds and not ch.fanout.pages
    # a request that still holds the deleted channel cannot write to the store
    with pytest.raises(Exception) as exc:
        ch.ingest.put_game(json.dumps(generate_game(6, deals=1)).encode(), source="late.egn")
    assert "deleted" in str(exc.value)


async def test_shutdown_leaves_no_channel_tasks(aiohttp_client: Any, settings: ServerSettings, tmp_path: Path) -> None:
    client = await aiohttp_client(create_app(settings))
    doc = generate_game(5, deals=1)
    path = tmp_path / "followed.egn"
    path.write_text(json.dumps(doc))
    for cid in ("a", "b"):
        await make_channel(client, cid, doc)
        r = await client.post(f"/api/channels/{cid}/follow", json={"path": str(path)}, headers=AUTH)
        assert r.status == 200
    feed = await client.ws_connect("/api/channels/a/feed", headers=AUTH)
    assert _channel_tasks("a") and _channel_tasks("b")
    await client.close()
    assert feed.closed or (await feed.receive(timeout=5)).type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.TEXT)
    assert _channel_tasks("a") == [] and _channel_tasks("b") == []


async def test_concurrent_writes_all_land_in_sqlite(aiohttp_client: Any, settings: ServerSettings) -> None:
    """Loggers on three channels, operators racing on settings and the playhead, at once;
    after a restart every acknowledged write is there and every refused one is not."""
    client = await aiohttp_client(create_app(settings))
    docs = {cid: generate_game(seed, deals=2) for cid, seed in (("x", 1), ("y", 2), ("z", 3))}
    for cid, doc in docs.items():
        await make_channel(client, cid, empty_game(doc))

    async def logger(cid: str) -> int:
        acked = 0
        for action in actions_of(docs[cid])[:40]:
            r = await client.post(f"/api/channels/{cid}/actions", json=action, headers=AUTH)
            assert r.status == 200, await r.text()
            acked = action["seq"]
        return acked

    async def settings_writer(cid: str, title: str) -> int:
        current = await (await client.get(f"/api/channels/{cid}/settings", headers=AUTH)).json()
        r = await client.put(f"/api/channels/{cid}/settings", json={**current, "title": title}, headers=AUTH)
        return r.status

    async def controller(cid: str) -> None:
        for op in ("pause", "play", "live", "pause"):
            r = await client.post(f"/api/channels/{cid}/control/{op}", headers=AUTH)
            assert r.status == 200

    results = await asyncio.gather(
        *(logger(cid) for cid in docs),
        *(settings_writer(cid, f"{cid}-{i}") for cid in docs for i in range(6)),
        *(controller(cid) for cid in docs),
        *(client.post("/api/channels", json={"id": "dup"}, headers=AUTH) for _ in range(5)),
    )
    acked = results[:3]
    statuses = results[3:21]
    creates = [r.status for r in results[-5:]]
    assert sorted(creates) == [201, 409, 409, 409, 409]
    # every writer read a revision; the first write of each revision wins, the rest are stale
    assert all(s in (200, 409) for s in statuses)
    live = {cid: await (await client.get(f"/api/channels/{cid}", headers=AUTH)).json() for cid in docs}
    await client.close()

    client = await aiohttp_client(create_app(settings))
    for cid, n in zip(docs, acked):
        assert n == 40
        info = await (await client.get(f"/api/channels/{cid}", headers=AUTH)).json()
        assert info["game"]["digest"] == live[cid]["game"]["digest"]
        assert info["game"]["seq"] == 40 and info["settingsRevision"] == live[cid]["settingsRevision"]
        wins = sum(1 for s in statuses[list(docs).index(cid) * 6 : list(docs).index(cid) * 6 + 6] if s == 200)
        assert info["settingsRevision"] == 1 + wins
    assert "dup" in [c["id"] for c in (await (await client.get("/api/channels", headers=AUTH)).json())["channels"]]


# --------------------------------------------------------------------------- the OBS page

#: APIs newer than Chrome 127 (OBS's browser) that a page must not call
NEWER_THAN_127 = [
    r"Promise\.try", r"RegExp\.escape", r"Uint8Array\.fromBase64", r"\.toBase64\(", r"Math\.sumPrecise",
    r"Error\.isError", r"Float16Array", r"\.getOrInsert", r"URL\.parse", r"CSS\.supports\(.*anchor",
]
#: ways of turning text into markup (player names must only ever be drawn on the canvas)
HTML_SINKS = [r"\.innerHTML", r"\.outerHTML", r"insertAdjacentHTML", r"document\.write", r"createContextualFragment", r"DOMParser"]


@pytest.mark.parametrize("name", ["overlay.js", "player.js"])
def test_page_scripts_keep_to_chrome_127_and_never_parse_html(name: str) -> None:
    text = (STATIC / name).read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    found = [p for p in NEWER_THAN_127 + HTML_SINKS if re.search(p, code)]
    assert found == [], f"{name} uses {found}"
