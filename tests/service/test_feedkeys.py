"""Feed keys in process (pytest-aiohttp): a logger's key posts actions, opens the feed socket
and PUTs the game of its own channel, and reaches nothing else; it is stored hashed, shown
once, revocable (open sockets too), and dies with its channel.  The channel keeps what its
logger did: the last message taken and the refusals with their text."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from aiohttp import WSMsgType

from overlay.service.feed import actions_of
from overlay.service.feedkeys import MAX_KEYS
from overlay.service.config import ServerSettings
from tests.support import AUTH, FakeClock, empty_game, game, make_channel

DOC = game(5, 1)
ACTS = actions_of(DOC)


async def new_key(client: Any, channel: str = "t1", label: str = "north tablet") -> dict[str, Any]:
    r = await client.post(f"/api/channels/{channel}/feed-keys", json={"label": label}, headers=AUTH)
    assert r.status == 201, await r.text()
    body: dict[str, Any] = await r.json()
    return body


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def logger(client: Any) -> tuple[Any, str]:
    """Channels ``t1`` (empty game with players) and ``t2``; a feed key of ``t1``."""
    await make_channel(client, "t1", doc=empty_game(DOC))
    await make_channel(client, "t2", doc=empty_game(DOC))
    return client, (await new_key(client))["key"]


async def test_a_key_is_shown_once_listed_without_it_and_stored_as_a_hash(client: Any, settings: ServerSettings) -> None:
    await make_channel(client)
    made = await new_key(client)
    assert made["key"].startswith("efk_") and made["label"] == "north tablet"
    listed = await (await client.get("/api/channels/t1/feed-keys", headers=AUTH)).json()
    assert listed == {"channel": "t1", "keys": [{"id": made["id"], "label": "north tablet", "created": made["created"]}]}
    db = sqlite3.connect(settings.db_path)
    stored = " ".join(str(v) for (v,) in db.execute("SELECT value FROM meta"))
    db.close()
    secret = made["key"].split("_", 2)[2]  # (the secret itself may hold "_")
    assert secret not in stored and made["id"] in stored


@pytest.mark.parametrize("how", ["bearer", "x-token", "query"])
async def test_a_key_posts_actions_and_puts_the_game_of_its_channel(logger: tuple[Any, str], how: str) -> None:
    client, key = logger
    kw: dict[str, Any] = {"params": {"token": key}} if how == "query" else {"headers": bearer(key) if how == "bearer" else {"X-Token": key}}
    for a in ACTS[:3]:
        r = await client.post("/api/channels/t1/actions", json=a, **kw)
        assert r.status == 200, await r.text()
    r = await client.put("/api/channels/t1/game", data=json.dumps(DOC), **kw)
    assert r.status == 200, await r.text()
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["steps"] > 20
    # the set-up's PUT (with the token) counts too: it came through the feed's route
    assert info["feed"]["accepted"] == 5 and info["feed"]["lastVia"] == key.split("_")[1]


async def test_a_key_feeds_through_the_socket(logger: tuple[Any, str]) -> None:
    client, key = logger
    ws = await client.ws_connect("/api/channels/t1/feed", headers=bearer(key))
    await ws.send_json({"type": "action", "action": ACTS[0]})
    ack = await ws.receive_json(timeout=5)
    assert ack["type"] == "ack" and ack["steps"] == 1
    await ws.close()


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("POST", "/api/channels/t2/actions", ACTS[0]),  # another channel's feed
        ("PUT", "/api/channels/t2/game", DOC),
        ("GET", "/api/channels/t1/settings", None),  # settings, control, everything else
        ("PATCH", "/api/channels/t1/settings", {"revision": 1, "title": "x"}),
        ("POST", "/api/channels/t1/control/play", None),
        ("POST", "/api/channels/t1/game", DOC),  # loading a different game is the producer's
        ("POST", "/api/channels/t1/load", {"path": "/etc/hosts"}),
        ("POST", "/api/channels/t1/follow", {"path": "/tmp/x.egn"}),
        ("DELETE", "/api/channels/t1", None),
        ("GET", "/api/channels/t1", None),
        ("GET", "/api/channels", None),
        ("GET", "/api/status", None),
        ("POST", "/api/channels/t1/feed-keys", {}),  # a key cannot make keys
        ("GET", "/api/channels/t1/state?output=preview", None),
        ("GET", "/studio/api/schema", None),
        ("POST", "/studio/api/channels/t1/take", None),
    ],
)
async def test_a_key_reaches_nothing_else(logger: tuple[Any, str], method: str, path: str, body: Any) -> None:
    client, key = logger
    before = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    r = await client.request(method, path, headers=bearer(key), data=None if body is None else json.dumps(body))
    assert r.status in (401, 403), (r.status, await r.text())
    assert (await client.get("/api/channels/t1/settings", headers=AUTH)).status == 200
    assert (await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()) == before
    assert (await client.get("/api/channels/t1", headers=AUTH)).status == 200


async def test_a_key_of_another_channel_is_refused_with_a_reason(logger: tuple[Any, str]) -> None:
    client, key = logger
    r = await client.post("/api/channels/t2/actions", json=ACTS[0], headers=bearer(key))
    assert r.status == 403
    assert "not a current key of channel 't2'" in (await r.json())["error"]
    r = await client.get("/api/channels/t1/settings", headers=bearer(key))
    assert r.status == 403 and "feed key" in (await r.json())["error"]


async def test_a_revoked_key_is_refused_and_its_open_socket_ends(logger: tuple[Any, str]) -> None:
    client, key = logger
    made = await (await client.get("/api/channels/t1/feed-keys", headers=AUTH)).json()
    ws = await client.ws_connect("/api/channels/t1/feed", headers=bearer(key))
    await ws.send_json({"type": "action", "action": ACTS[0]})
    assert (await ws.receive_json(timeout=5))["type"] == "ack"
    r = await client.delete(f"/api/channels/t1/feed-keys/{made['keys'][0]['id']}", headers=AUTH)
    assert r.status == 200
    r = await client.post("/api/channels/t1/actions", json=ACTS[1], headers=bearer(key))
    assert r.status == 403
    await ws.send_json({"type": "action", "action": ACTS[1]})
    refused = await ws.receive_json(timeout=5)
    assert refused["type"] == "refused" and refused["status"] == 403 and "revoked" in refused["error"]
    assert (await ws.receive(timeout=5)).type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING)
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["steps"] == 1, "nothing after the revocation was taken"
    r = await client.delete(f"/api/channels/t1/feed-keys/{made['keys'][0]['id']}", headers=AUTH)
    assert r.status == 404


async def test_keys_die_with_their_channel(logger: tuple[Any, str]) -> None:
    client, key = logger
    assert (await client.delete("/api/channels/t1", headers=AUTH)).status == 200
    await make_channel(client, "t1", doc=empty_game(DOC))
    r = await client.post("/api/channels/t1/actions", json=ACTS[0], headers=bearer(key))
    assert r.status == 403
    assert (await (await client.get("/api/channels/t1/feed-keys", headers=AUTH)).json())["keys"] == []


async def test_a_channel_holds_a_bounded_number_of_keys_and_labels_are_checked(client: Any) -> None:
    await make_channel(client)
    for _ in range(MAX_KEYS):
        await new_key(client)
    r = await client.post("/api/channels/t1/feed-keys", json={}, headers=AUTH)
    assert r.status == 409 and "revoke one" in (await r.json())["error"]
    for body in ({"label": "x" * 81}, {"label": 3}, {"lable": "x"}, [1]):
        r = await client.post("/api/channels/t1/feed-keys", json=body, headers=AUTH)
        assert r.status == 400, body


@pytest.mark.fake_clock
async def test_the_channel_keeps_its_loggers_last_message_and_refusals(client: Any, clock: FakeClock) -> None:
    await make_channel(client, "t1", doc=empty_game(DOC))
    key = (await new_key(client))["key"]
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["feed"] == {"accepted": 1, "refused": 0, "lastAge": 0, "lastVia": "token", "refusals": []}
    assert info["midDeal"] is False
    r = await client.post("/api/channels/t1/actions", json=ACTS[0], headers=bearer(key))
    assert r.status == 200
    clock.t += 2.5
    r = await client.post("/api/channels/t1/actions", json={**ACTS[1], "seq": 9}, headers=bearer(key))
    assert r.status == 409
    r = await client.post("/api/channels/t1/actions", json={"seq": 2, "kind": "card", "card": "Zz"}, headers=bearer(key))
    assert r.status == 400
    clock.t += 4
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    feed = info["feed"]
    assert feed["accepted"] == 2 and feed["refused"] == 2 and feed["lastAge"] == 6.5
    newest, older = feed["refusals"]
    assert older["seq"] == 9 and older["status"] == 409 and "expected 2" in older["error"] and older["age"] == 4
    assert newest["seq"] == 2 and newest["status"] == 400 and "'Zz'" in newest["error"]
    assert info["midDeal"] is True, "a deal was started and not scored"
    assert info["programAt"]["deal"] == 0 and info["programAt"]["kind"] == "deal_start"
