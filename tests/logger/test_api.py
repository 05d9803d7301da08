"""The logger's routes (overlay/service/routes/logger.py): its page, the engine's choices,
actions under one holder with the feed's seq rules, edits that re-check the deal, and the
hold on a channel's logger (one page at a time, taken over explicitly)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from engine.generate import generate_game
from overlay.service.feed import actions_of
from overlay.service.routes.logger import LEASE
from tests.support import AUTH, FakeClock, empty_game, make_channel

DOC = generate_game(3, deals=2)
ACTS = [{k: v for k, v in a.items() if v is not None} for a in actions_of(DOC)]


def page(lid: str, name: str = "North tablet", auth: dict[str, str] = AUTH) -> dict[str, str]:
    return {**auth, "X-Logger": lid, "X-Logger-Name": name}


A = page("page-a", "North%20tablet")
B = page("page-b", quote("Scorer\u2019s phone"))  # the page percent-encodes its name


async def post(client: Any, action: dict[str, Any], headers: dict[str, str] = A) -> Any:
    return await client.post("/api/channels/t1/logger/actions", data=json.dumps(action), headers=headers)


@pytest.fixture
async def table(client: Any) -> Any:
    await make_channel(client, "t1", empty_game(DOC))
    return client


async def test_the_page_is_served_with_its_own_scripts_only(client: Any) -> None:
    r = await client.get("/logger/anything")
    assert r.status == 200 and r.content_type == "text/html"
    text = await r.text()
    assert '<script type="module" src="/static/logger/logger.js"></script>' in text
    assert "script-src 'self'" in r.headers["Content-Security-Policy"] and "frame-src 'self'" in r.headers["Content-Security-Policy"]
    for name in ("logger.js", "outbox.js", "table.js", "logger.css"):
        assert (await client.get(f"/static/logger/{name}")).status == 200, name


async def test_choices_need_the_token_or_the_channels_feed_key(table: Any) -> None:
    client = table
    assert (await client.get("/api/channels/t1/choices")).status == 401
    await make_channel(client, "t2")
    made = await (await client.post("/api/channels/t1/feed-keys", json={"label": "tablet"}, headers=AUTH)).json()
    other = await (await client.post("/api/channels/t2/feed-keys", json={"label": "tablet"}, headers=AUTH)).json()
    key = {"Authorization": f"Bearer {made['key']}"}
    r = await client.get("/api/channels/t1/choices", headers=page("k", auth=key))
    assert r.status == 200
    view = await r.json()
    assert view["choices"]["phase"] == "deal" and view["seq"] == 0 and view["expected"] == 1
    assert len(view["choices"]["choices"]) == 24 and view["players"] == DOC["metadata"]["players"]
    assert (await client.get("/api/channels/t1/choices", headers=page("k", auth={"Authorization": f"Bearer {other['key']}"}))).status == 403
    # a key of the channel goes no further than the logger's routes
    assert (await client.get("/api/channels/t1/settings", headers=key)).status == 403


async def test_a_channel_without_a_game_says_what_to_do(client: Any) -> None:
    await make_channel(client, "t1")
    r = await client.get("/api/channels/t1/choices", headers=A)
    assert r.status == 422
    assert "PUT a game with its players first" in (await r.json())["error"]


async def test_actions_follow_the_feeds_seq_rules_and_answer_with_the_view(table: Any) -> None:
    client = table
    first = {"seq": 1, **ACTS[0]}
    r = await post(client, first)
    assert r.status == 200, await r.text()
    body = await r.json()
    assert body["ack"]["seq"] == 1 and not body["ack"]["duplicate"]
    assert body["view"]["seq"] == 1 and body["view"]["choices"]["phase"] == "bidding"
    assert body["view"]["state"]["upCard"] == ACTS[0]["upCard"]
    again = await (await post(client, first)).json()  # an answer lost, the action sent again
    assert again["ack"]["duplicate"] and again["view"]["seq"] == 1
    r = await post(client, {"seq": 1, "kind": "call", "call": "Pass"})  # another action under seq 1
    assert r.status == 409
    r = await post(client, {"seq": 3, "kind": "call", "call": "Pass"})
    assert r.status == 409 and (await r.json())["kind"] == "sequence_gap"
    r = await post(client, {"seq": 2, "kind": "card", "card": "Jh"})  # the engine refuses
    assert r.status == 400 and "before trump was made" in (await r.json())["error"]
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["feed"]["refused"] == 3 and info["game"]["seq"] == 1
    r = await post(client, {"seq": 2, "kind": "undo"})
    assert (await r.json())["view"]["choices"]["phase"] == "deal"


async def test_a_whole_game_logged_through_the_route_is_the_game(table: Any) -> None:
    client = table
    for seq, act in enumerate(ACTS, 1):
        r = await post(client, {"seq": seq, **act})
        assert r.status == 200, (seq, act, await r.text())
        view = (await r.json())["view"]
        if seq < len(ACTS):
            nxt = ACTS[seq]
            offered = [c["action"] for c in view["choices"]["choices"]]
            want = {k: v for k, v in nxt.items() if k != "seq" and not (k == "alone" and nxt.get("call") == "Pass")}
            if nxt["kind"] != "new_deal":  # the hands come with the deal, entered on the page
                assert want in offered, (seq, want)
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["deals"] == 2


async def test_one_page_holds_the_logger_and_another_takes_over_explicitly(table: Any, clock: FakeClock) -> None:
    client = table
    r = await client.get("/api/channels/t1/logger", headers=A)
    assert await r.json() == {"holder": None, "you": False}
    assert (await post(client, {"seq": 1, **ACTS[0]})).status == 200  # the first to write holds it
    held = await (await client.get("/api/channels/t1/choices", headers=B)).json()
    assert held["you"] is False and held["holder"]["name"] == "North tablet" and held["holder"]["via"] == "token"
    r = await post(client, {"seq": 2, **ACTS[1]}, B)
    assert r.status == 409
    refusal = await r.json()
    assert refusal["kind"] == "logger_held" and refusal["holder"]["name"] == "North tablet"
    assert (await client.post("/api/channels/t1/logger", json={}, headers=B)).status == 409
    r = await client.post("/api/channels/t1/logger", json={"force": True}, headers=B)
    assert r.status == 200 and (await r.json())["you"] is True
    assert (await post(client, {"seq": 2, **ACTS[1]}, B)).status == 200
    r = await post(client, {"seq": 3, **ACTS[2]}, A)  # the first page finds it taken
    assert r.status == 409 and (await r.json())["holder"]["name"] == "Scorer\u2019s phone"
    assert (await (await client.delete("/api/channels/t1/logger", headers=A)).json()) == {"released": False}
    assert (await (await client.delete("/api/channels/t1/logger", headers=B)).json()) == {"released": True}
    assert (await post(client, {"seq": 3, **ACTS[2]}, A)).status == 200


@pytest.mark.fake_clock
async def test_a_holder_not_heard_from_lets_the_next_page_in(table: Any, clock: FakeClock) -> None:
    client = table
    assert (await post(client, {"seq": 1, **ACTS[0]})).status == 200
    clock.t += LEASE - 1
    assert (await post(client, {"seq": 2, **ACTS[1]}, B)).status == 409
    assert (await client.get("/api/channels/t1/choices", headers=A)).status == 200  # heard from: the lease runs again
    clock.t += LEASE - 1
    assert (await post(client, {"seq": 2, **ACTS[1]}, B)).status == 409
    clock.t += LEASE
    assert (await post(client, {"seq": 2, **ACTS[1]}, B)).status == 200


async def test_a_logger_request_names_its_page(table: Any) -> None:
    r = await table.post("/api/channels/t1/logger/actions", data=json.dumps({"seq": 1, **ACTS[0]}), headers=AUTH)
    assert r.status == 400 and "X-Logger" in (await r.json())["error"]


async def test_an_edit_replaces_an_action_and_rechecks_what_follows(table: Any) -> None:
    client = table
    hand = [
        {"seq": 1, "kind": "new_deal", "dealer": 3, "upCard": "9h"},
        *({"seq": 2 + i, "kind": "call", "call": "Pass"} for i in range(4)),
        {"seq": 6, "kind": "call", "call": "c", "alone": False},
        *({"seq": 7 + i, "kind": "card", "card": c} for i, c in enumerate(["Ah", "9s", "Th", "Qh", "Kh"])),
    ]
    for a in hand:
        assert (await post(client, a)).status == 200
    view = await (await client.get("/api/channels/t1/choices?at=7", headers=A)).json()
    assert view["at"] == 7 and view["choices"]["seat"] == 1
    assert view["dealActions"][7]["label"].endswith("plays 9\u2660")
    r = await client.post("/api/channels/t1/logger/edit", json={"seq": 11, "at": 7, "action": {"kind": "card", "card": "Kh"}}, headers=A)
    assert r.status == 400
    assert "after the edit, action 10" in (await r.json())["error"] and "no longer fits" in (await r.json())["error"]
    r = await client.post("/api/channels/t1/logger/edit", json={"seq": 10, "at": 7, "action": {"kind": "card", "card": "Ts"}}, headers=A)
    assert r.status == 409 and (await r.json())["kind"] == "stale_edit"
    r = await client.post("/api/channels/t1/logger/edit", json={"seq": 11, "at": 7, "action": {"kind": "card", "card": "Ts"}}, headers=A)
    assert r.status == 200, await r.text()
    body = await r.json()
    assert body["ack"]["correction"] and body["view"]["seq"] == 11
    assert body["view"]["state"]["tricks"][0]["cards"] == ["Ah", "Ts", "Th", "Qh"]
    again = await client.post("/api/channels/t1/logger/edit", json={"seq": 11, "at": 7, "action": {"kind": "card", "card": "Ts"}}, headers=A)
    assert (await again.json())["ack"]["changed"] is False  # sent twice: the same game
    assert (await post(client, {"seq": 12, "kind": "card", "card": "9s"})).status == 200  # the feed goes on


async def test_hands_entered_at_a_deal_start_go_with_the_up_card(table: Any) -> None:
    hands = DOC["deals"][0]["initialState"]["playerCards"]
    q = "|".join(",".join(h) for h in hands)
    view = await (await table.get(f"/api/channels/t1/choices?dealer=2&hands={q}", headers=A)).json()
    ups = [c["action"] for c in view["choices"]["choices"]]
    assert len(ups) == 4 and all(a["dealer"] == 2 and a["playerCards"] == hands for a in ups)
    r = await table.get("/api/channels/t1/choices?hands=Ah|Ah", headers=A)
    assert r.status == 400 and "seat 0's hand and seat 1's" in (await r.json())["error"]
    assert (await table.get("/api/channels/t1/choices?dealer=x", headers=A)).status == 400
