"""Games in from the studio, in process: replace or append a game (.egn, .egnb, .emn), the
match that appending makes, the engine's errors and problems with their place, the waiting
pages; and the composition itself (studio.games) without a server."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest

from engine.codec import encode_condensed
from engine.errors import SchemaError
from engine.ruleset import PRESETS
from studio.games import Held, NewGameRefused, append_games, games_of, new_game
from tests.support import AUTH, game, make_channel, match_doc

URL = "/studio/api/channels/t1/game"


async def send(client: Any, data: bytes, *, mode: str = "replace", name: str = "finals.egn", status: int = 200) -> dict[str, Any]:
    r = await client.post(URL, params={"mode": mode, "name": name}, data=data, headers=AUTH)
    body: dict[str, Any] = await r.json()
    assert r.status == status, body
    return body


async def info(client: Any) -> dict[str, Any]:
    body: dict[str, Any] = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    return body


def egn(seed: int, deals: int = 2) -> bytes:
    return json.dumps(game(seed, deals=deals)).encode()


@pytest.mark.parametrize(
    "data, name, games",
    [
        (egn(3), "finals.egn", 0),
        (encode_condensed(game(3, deals=2)), "finals.egnb", 0),
        (json.dumps(match_doc((1, 2, 3))).encode(), "night.emn", 3),
    ],
)
async def test_a_file_replaces_the_game_from_its_first_step(client: Any, data: bytes, name: str, games: int) -> None:
    await make_channel(client, "t1", doc=game(9, deals=1))
    await client.post("/api/channels/t1/control/seek", json={"step": 5}, headers=AUTH)
    body = await send(client, data, name=name)
    assert body["mode"] == "replace" and body["ack"]["changed"] is True
    now = await info(client)
    assert now["game"]["source"] == name and now["playhead"]["step"] == 0
    assert len(now["game"]["games"]) == games and now["game"]["match"] is (games > 0)


async def test_appending_makes_a_match_and_the_channel_plays_on_where_it_was(client: Any) -> None:
    first = game(3, deals=2)
    await make_channel(client, "t1", doc=first)
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    await client.post("/api/channels/t1/control/seek", json={"step": 7}, headers=AUTH)
    steps = (await info(client))["game"]["steps"]
    body = await send(client, egn(4), mode="append", name="second.egn")
    assert body["ack"]["correction"] is False
    now = await info(client)
    assert now["playhead"]["step"] == 7, "the steps it had are the same steps: no jump"
    assert now["game"]["match"] is True and [g["label"] for g in now["game"]["games"]] == ["Game 1 of 2", "Game 2 of 2"]
    assert now["game"]["games"][1]["firstStep"] == steps
    assert now["game"]["source"] == "channel t1 + second.egn"
    # a match appended to the match: its games follow
    await send(client, json.dumps(match_doc((5, 6))).encode(), mode="append", name="more.emn")
    now = await info(client)
    assert [g["label"] for g in now["game"]["games"]] == [f"Game {i} of 4" for i in range(1, 5)]
    assert now["playhead"]["step"] == 7


async def test_append_to_an_empty_channel_loads(client: Any) -> None:
    await make_channel(client, "t1")
    await send(client, egn(3), mode="append", name="first.egn")
    now = await info(client)
    assert now["game"]["source"] == "first.egn" and now["game"]["match"] is False


async def test_the_engines_refusal_names_its_place_and_the_channel_keeps_its_game(client: Any) -> None:
    await make_channel(client, "t1", doc=game(3))
    body = await send(client, b'{"fileType": 3', name="broken.egn", status=400)
    assert body["error"].startswith("broken.egn: line 1, column 15") and body["place"]["source"] == "broken.egn"
    body = await send(client, b'{"fileType": 3', mode="append", name="broken.egn", status=400)
    assert body["place"]["source"] == "broken.egn"
    assert (await info(client))["game"]["source"] == "channel t1"


async def test_problems_of_a_loaded_game_come_with_their_place(client: Any) -> None:
    await make_channel(client, "t1")
    bad = game(5, deals=2)
    tricks = bad["deals"][1]["phases"][-1]["tricks"]
    tricks[2][1] = tricks[0][0]
    body = await send(client, json.dumps(bad).encode(), name="bad.egn")
    first = body["problems"][0]
    assert first["deal"] == 1 and first["phaseType"] == "TRICK_PLAY" and first["trick"] == 2 and first["card"] == 1
    assert first["message"].startswith("bad.egn: deal 1, phase 1 (TRICK_PLAY), trick 2, card 1:")
    report = await (await client.get(URL, headers=AUTH)).json()
    assert report["problems"] == body["problems"] and report["problemCount"] >= 1 and report["allowDirs"] == []


@pytest.mark.parametrize("params, status", [({"mode": "insert"}, 400), ({}, 400)])
async def test_bad_requests_are_refused(client: Any, params: dict[str, str], status: int) -> None:
    await make_channel(client, "t1", doc=game(3))
    r = await client.post(URL, params=params, data=b"" if not params else egn(3), headers=AUTH)
    assert r.status == status
    r = await client.post("/studio/api/channels/nope/game", data=egn(3), headers=AUTH)
    assert r.status == 404


async def test_the_game_routes_need_the_token(client: Any) -> None:
    await make_channel(client, "t1", doc=game(3))
    for method, path in (("GET", URL), ("POST", URL), ("GET", "/studio/api/waiting")):
        assert (await client.request(method, path, data=egn(3))).status == 401


async def test_waiting_pages_are_listed_with_their_age(client: Any) -> None:
    await client.get("/overlay/tabel1")
    body = await (await client.get("/studio/api/waiting", headers=AUTH)).json()
    (w,) = body["waiting"]
    assert w["channel"] == "tabel1" and w["requests"] == 1 and 0 <= w["age"] < 5 and "no channel" in w["error"]
    # the studio's own frames (monitor=1), page or socket, are not OBS pages waiting
    await client.get("/overlay/gone?output=program&monitor=1")
    await client.get("/ws/overlay/gone?output=preview&monitor=1")
    body = await (await client.get("/studio/api/waiting", headers=AUTH)).json()
    assert [w["channel"] for w in body["waiting"]] == ["tabel1"]


@pytest.mark.parametrize(
    "host, network, addresses",
    [("127.0.0.1", False, []), ("localhost", False, []), ("::1", False, []), ("10.1.2.3", True, ["10.1.2.3"]), ("studio-laptop", True, ["studio-laptop"])],
)
def test_where_other_devices_reach_the_server(host: str, network: bool, addresses: list[str]) -> None:
    from overlay.service.network import listens_on_network, network_addresses

    assert listens_on_network(host) is network and network_addresses(host) == addresses


def test_a_server_on_every_address_names_the_machines_own() -> None:
    import ipaddress

    from overlay.service.network import network_addresses

    for host in ("0.0.0.0", "::"):
        for a in network_addresses(host):
            ip = ipaddress.ip_address(a)
            assert ip.version == 4 and not (ip.is_loopback or ip.is_unspecified or ip.is_link_local), a


async def test_reach_says_whether_a_tablet_can_reach_the_server(aiohttp_client: Any, settings: Any, tmp_path: Any) -> None:
    import dataclasses

    from overlay.service.app import create_app
    from overlay.service.network import network_addresses

    local = await aiohttp_client(create_app(settings))  # serve's default, 127.0.0.1
    assert (await local.get("/studio/api/reach")).status == 401
    assert await (await local.get("/studio/api/reach", headers=AUTH)).json() == {"network": False, "addresses": []}
    everywhere = await aiohttp_client(create_app(dataclasses.replace(settings, host="0.0.0.0", data_dir=tmp_path / "other")))
    body = await (await everywhere.get("/studio/api/reach", headers=AUTH)).json()
    assert body == {"network": True, "addresses": network_addresses("0.0.0.0")}


async def test_a_qr_code_of_a_link_is_an_svg(client: Any) -> None:
    import segno

    link = "http://192.168.1.20:8765/logger/t1#key=efk_0123456789abcdefghijklmnopqrstuv"
    assert (await client.post("/studio/api/qr", json={"text": link})).status == 401
    r = await client.post("/studio/api/qr", json={"text": link}, headers=AUTH)
    assert r.status == 200 and r.content_type == "image/svg+xml"
    svg = await r.text()
    want = io.BytesIO()
    segno.make(link, error="m").save(want, kind="svg", scale=6, border=4, dark="#000", light="#fff", xmldecl=False)
    assert svg == want.getvalue().decode() and svg.startswith("<svg")
    for bad in ({"text": ""}, {"text": 5}, {"text": "x" * 1001}, [1]):
        r = await client.post("/studio/api/qr", json=bad, headers=AUTH)
        assert r.status == 400 and (await r.json())["field"] == "text"


# --------------------------------------------------------------------------- a new live game


NAMES = ["Ada Quill", "Bram Oduya", "Cleo Marsh", "Dev Patil"]


async def test_a_new_live_game_has_its_players_and_the_logger_can_record_into_it(client: Any) -> None:
    await make_channel(client, "t1", doc=game(3))
    form = {"title": "Final table", "players": NAMES, "preset": "british", "target": 7, "std": False}
    r = await client.post(f"{URL}/new", json=form, headers=AUTH)
    body = await r.json()
    assert r.status == 200, body
    assert body["game"]["metadata"]["ruleset"] == {"winning_score": 7, "joker": True, "std": False}
    ch = await info(client)
    assert ch["game"]["title"] == "Final table" and ch["game"]["deals"] == 0 and ch["game"]["source"] == "live: Final table"
    # the logger's choices now come from the new game's rules: 25 up-cards with the joker
    r = await client.get("/api/channels/t1/choices", headers={**AUTH, "X-Logger": "studio-test"})
    view = await r.json()
    assert r.status == 200, view
    assert view["players"] == NAMES and len(view["choices"]["choices"]) == 25
    # and the first action of the deal is taken
    up = next(c for c in view["choices"]["choices"] if c["action"].get("upCard"))
    r = await client.post("/api/channels/t1/actions", json={"seq": 1, **up["action"]}, headers=AUTH)
    assert r.status == 200, await r.text()
    assert (await info(client))["game"]["deals"] == 1
    # the form's report lists the presets it may take
    report = await (await client.get(URL, headers=AUTH)).json()
    assert report["presets"] == list(PRESETS)


@pytest.mark.parametrize(
    "form, field",
    [
        ({"players": NAMES[:3]}, "players"),
        ({"players": [*NAMES[:3], " "]}, "players[3]"),
        ({"players": NAMES, "preset": "mars"}, "preset"),
        ({"players": NAMES, "target": 0}, "target"),
        ({"players": NAMES, "deals": True}, "deals"),
        ({"players": NAMES, "std": "yes"}, "std"),
        ({"players": NAMES, "title": "x" * 500}, "title"),
        ([], "form"),
    ],
)
async def test_a_new_game_form_is_refused_with_its_field_and_the_channel_keeps_its_game(client: Any, form: Any, field: str) -> None:
    await make_channel(client, "t1", doc=game(3))
    before = (await info(client))["game"]
    r = await client.post(f"{URL}/new", json=form, headers=AUTH)
    body = await r.json()
    assert r.status == 400 and body["field"] == field and body["error"].startswith(f"new game: {field}:"), body
    assert (await info(client))["game"] == before
    assert (await client.post(f"{URL}/new", json={"players": NAMES})).status == 401


def test_a_new_game_writes_only_the_rules_that_differ_from_egns_defaults() -> None:
    plain = new_game({"players": NAMES}, date="2026-12-03T20:00:00Z")
    assert "ruleset" not in plain["metadata"] and "title" not in plain["metadata"] and plain["deals"] == []
    fixed = new_game({"players": NAMES, "preset": "new-zealand", "deals": 8}, date="2026-12-03T20:00:00Z")
    assert fixed["metadata"]["ruleset"] == {"min_rank": 7, "num_deals": 8}
    with pytest.raises(NewGameRefused):
        new_game({"players": NAMES, "deals": 0}, date="")


# --------------------------------------------------------------------------- composition


def test_a_name_twice_at_one_table_gets_two_match_players() -> None:
    g = game(3)
    g["metadata"]["players"] = ["Bot", "Ann", "Bot", "Cy"]
    doc = json.loads(append_games(None, json.dumps(g).encode(), source="bots.egn"))
    (entry,) = doc["games"]
    assert len(set(entry["players"])) == 4
    assert [p["name"] for p in doc["metadata"]["players"]] == ["Bot", "Ann", "Bot", "Cy"]


def test_the_same_players_keep_their_ids_from_game_to_game() -> None:
    one, two = game(3), game(4)
    two["metadata"]["players"] = list(reversed(one["metadata"]["players"]))
    held = Held(document=one, match=False, source="one.egn")
    doc = json.loads(append_games(held, json.dumps(two).encode(), source="two.egn"))
    a, b = doc["games"]
    assert b["players"] == list(reversed(a["players"])) and len(doc["metadata"]["players"]) == 4
    assert games_of(Held(document=doc, match=True, source="x.emn")) == [one, json.loads(json.dumps(two))]


def test_appending_to_a_match_keeps_what_the_match_says_of_itself() -> None:
    """Its id, date, format and result stay (they were dropped: a best-of-3 lost its format);
    its players are made again from the games."""
    m = match_doc((1, 2))
    m["metadata"].update({"matchId": "sf-1", "date": "2026-12-06", "matchFormat": {"type": "BEST_OF_N", "target": 3}, "result": {"status": "IN_PROGRESS"}})
    doc = json.loads(append_games(Held(document=m, match=True, source="sf.emn"), egn(5), source="third.egn"))
    assert len(doc["games"]) == 3 and doc["metadata"]["title"] == "Test match"
    assert {k: doc["metadata"][k] for k in ("matchId", "date", "matchFormat", "result")} == {
        "matchId": "sf-1", "date": "2026-12-06", "matchFormat": {"type": "BEST_OF_N", "target": 3}, "result": {"status": "IN_PROGRESS"}}


def test_a_game_without_four_seats_cannot_join_a_match() -> None:
    three = copy.deepcopy(game(3))
    held = Held(document={**three, "metadata": {**three["metadata"], "players": ["A", "B", "C"]}}, match=False, source="three.egn")
    with pytest.raises(SchemaError) as err:
        append_games(held, egn(4), source="four.egn")
    assert str(err.value).startswith("three.egn") and "four-seat games; this game has 3 players" in str(err.value)
