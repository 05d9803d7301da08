"""A match logged at one table: once a game is over the logger starts the next one (same
players, rules and title), the channel's game becomes a match in progress, and actions go
into its last game, through a restart, an edit and the download."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient

from engine.generate import generate_game
from engine.load import load_any
from overlay.service.feed import actions_of, load_bytes, next_game_bytes, push_action, replay_log
from overlay.service.protocol import ActionIn
from tests.logger.test_api import A, page
from tests.support import AUTH, empty_game, make_channel

#: two short games (two deals each) at the same table
FIRST = generate_game(3, ruleset={"num_deals": 2}, title="Semi-final")
SECOND = generate_game(4, ruleset={"num_deals": 2}, players=FIRST["metadata"]["players"], title="Semi-final")
#: the first game's winner (the team of seats 0 and 2: 0), and so the second game's label
WON = load_any(json.dumps(FIRST).encode(), source="first").timeline.steps[-1].winner  # type: ignore[union-attr]
SECOND_LABEL = "Game 2 \u00b7 match " + ("1\u20130" if WON == 0 else "0\u20131")


def acts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in a.items() if v is not None} for a in actions_of(doc)]


async def log(client: TestClient[Any, Any], actions: list[dict[str, Any]], first_seq: int, headers: dict[str, str] = A) -> dict[str, Any]:
    """Send ``actions`` from ``first_seq`` on through the logger's route; the last answer."""
    body: dict[str, Any] = {}
    for seq, act in enumerate(actions, first_seq):
        r = await client.post("/api/channels/t1/logger/actions", data=json.dumps({**act, "seq": seq}), headers=headers)
        assert r.status == 200, (seq, act, await r.text())
        body = await r.json()
    return body


async def next_game(client: TestClient[Any, Any], seq: int, headers: dict[str, str] = A) -> Any:
    return await client.post("/api/channels/t1/logger/next-game", data=json.dumps({"seq": seq}), headers=headers)


async def test_the_next_game_makes_a_match_and_the_logger_writes_its_last_game(client: TestClient[Any, Any]) -> None:
    await make_channel(client, "t1", empty_game(FIRST))
    one = acts(FIRST)
    # not before the game is over: said, and nothing changes
    half = await log(client, one[:10], 1)
    r = await next_game(client, 10)
    assert r.status == 422 and "the game is not over yet" in (await r.json())["error"]
    last = await log(client, one[10:], 11)
    assert last["view"]["state"]["gameOver"] and last["view"]["choices"]["choices"] == []
    assert half["view"]["game"] is None and half["view"]["matchScore"] == [0, 0]
    # the games won at this table, the game just over counted: what decides a next game
    assert last["view"]["matchScore"] == ([1, 0] if WON == 0 else [0, 1])
    seq = len(one)
    # a page that saw an older seq is told to look again
    r = await next_game(client, seq - 1)
    assert r.status == 409 and (await r.json())["kind"] == "stale"
    r = await next_game(client, seq)
    assert r.status == 201, await r.text()
    body = await r.json()
    assert body["ack"]["changed"] and body["view"]["seq"] == seq
    assert body["view"]["game"] == {"number": 2, "label": SECOND_LABEL}
    assert body["view"]["state"] is None and body["view"]["choices"]["phase"] == "deal"
    assert body["view"]["players"] == FIRST["metadata"]["players"] and body["view"]["deals"] == 0
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["match"] and [g["label"] for g in info["game"]["games"]] == ["Game 1", SECOND_LABEL]
    first_steps = info["game"]["games"][0]["steps"]
    # the second game, logged action by action after the first: seq goes on counting
    two = acts(SECOND)
    end = await log(client, two, seq + 1)
    assert end["view"]["state"]["gameOver"] and end["view"]["deals"] == 2
    won_two = load_any(json.dumps(SECOND).encode(), source="second").timeline.steps[-1].winner  # type: ignore[union-attr]
    assert end["view"]["matchScore"] == [(WON == 0) + (won_two == 0), (WON == 1) + (won_two == 1)]
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["seq"] == seq + len(two)
    assert [(g["firstStep"], g["deals"]) for g in info["game"]["games"]] == [(0, 2), (first_steps, 2)]
    # the outputs play the second game as its own: its title says which game, its score starts at 0
    state = await (await client.get("/api/channels/t1/state?output=preview", headers=AUTH)).json()
    assert state["games"] == 2
    r = await client.post("/api/channels/t1/control/seek", json={"op": "seek", "game": 2, "deal": 1}, headers=AUTH)
    assert r.status == 200, await r.text()
    state = await (await client.get("/api/channels/t1/state?output=preview", headers=AUTH)).json()
    assert state["game"] == 1 and state["gameTitle"] == f"Semi-final \u2014 {SECOND_LABEL}" and state["state"]["score"] == [0, 0]
    # the download is the match, and it replays to the same two games
    r = await client.get("/api/channels/t1/logger/game", headers=A)
    assert 't1.emn' in r.headers["Content-Disposition"]
    match = load_any(await r.read(), source="t1.emn")
    assert [len(g.timeline.deals) for g in match.games] == [2, 2]  # type: ignore[union-attr]
    assert match.games[1].timeline.steps[-1].score == load_any(json.dumps(SECOND).encode(), source="s").timeline.steps[-1].score  # type: ignore[union-attr]


async def test_an_edit_in_the_matchs_last_game_leaves_the_first_alone(client: TestClient[Any, Any]) -> None:
    await make_channel(client, "t1", empty_game(FIRST))
    one = acts(FIRST)
    await log(client, one, 1)
    assert (await next_game(client, len(one))).status == 201
    two = acts(SECOND)
    await log(client, two[:3], len(one) + 1)  # the up-card and two calls of game 2's first deal
    before = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    view = await (await client.get("/api/channels/t1/choices?at=1", headers=A)).json()
    other = next(c["action"] for c in view["choices"]["choices"] if c["action"] != {k: v for k, v in two[1].items() if k != "alone" or v})
    r = await client.post("/api/channels/t1/logger/edit", data=json.dumps({"seq": len(one) + 3, "at": 1, "action": other}), headers=A)
    assert r.status == 200, await r.text()
    after = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert after["game"]["match"] and after["game"]["games"][0] == before["game"]["games"][0]
    assert after["game"]["seq"] == before["game"]["seq"]


async def test_a_second_page_cannot_start_the_next_game_and_a_plain_feed_can_log_it(client: TestClient[Any, Any]) -> None:
    await make_channel(client, "t1", empty_game(FIRST))
    one = acts(FIRST)
    await log(client, one, 1)
    r = await next_game(client, len(one), headers=page("page-b", "Other"))
    assert r.status == 409 and (await r.json())["kind"] == "logger_held"
    assert (await next_game(client, len(one))).status == 201
    # POST …/actions (a scripted logger) writes into the match's last game as the page does
    r = await client.post("/api/channels/t1/actions", json={**acts(SECOND)[0], "seq": len(one) + 1}, headers=AUTH)
    assert r.status == 200, await r.text()
    view = await (await client.get("/api/channels/t1/choices", headers=A)).json()
    assert view["state"]["upCard"] == acts(SECOND)[0]["upCard"] and view["game"]["number"] == 2


def test_a_stored_match_and_its_logged_actions_replay_to_the_same_match() -> None:
    """A restart (or another process of a cluster) reads the stored snapshot and pushes the
    logged actions after it: into the match's last game."""
    one = load_bytes(json.dumps(FIRST).encode(), source="live: semi")
    match = load_bytes(next_game_bytes(one, date="2026-12-06T10:00:00Z"), source="live: semi")
    assert match.match and [p.label for p in match.parts] == ["Game 1", SECOND_LABEL]
    logged = [(n, json.dumps({**a, "seq": n})) for n, a in enumerate(acts(SECOND), 1)]
    game = match
    for _, text in logged:
        game, _ = push_action(game, ActionIn.model_validate_json(text), source="live: semi")
    replayed, seq, why = replay_log(match, logged, source="live: semi")
    assert why is None and seq == len(logged) and replayed is not None
    assert replayed.steps == game.steps and replayed.document == game.document
    # the stored bytes are the match's: loaded again, the same games
    again = load_bytes(game.data, source="live: semi")
    assert again.match and again.steps == game.steps
    assert [p.first_step for p in again.parts] == [p.first_step for p in game.parts]
