"""Every refusal is a 4xx with a bounded message (issue 9 items 4-6, issue 10 item 3): deep
JSON, an unknown charset, huge bodies; the same seq with other content; strict types on
the wire; illegal actions refused with the engine's place, and a real table's mistakes (a
renege) accepted with the engine's warning in the ack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cards import card_name, effective_suit
from engine.generate import generate_game
from engine.load import load_game
from overlay.cli import main
from overlay.service.feed import actions_of
from tests.support import AUTH, empty_game, game, make_channel

DEEP = "[" * 1000 + "]" * 1000

#: every route that reads a JSON body: (method, path)
JSON_ROUTES = [
    ("POST", "/api/channels"),
    ("POST", "/api/channels/t1/actions"),
    ("POST", "/api/channels/t1/control"),
    ("POST", "/api/channels/t1/control/seek"),
    ("POST", "/api/channels/t1/load"),
    ("POST", "/api/channels/t1/follow"),
    ("PUT", "/api/channels/t1/settings"),
    ("PUT", "/api/channels/t1/game"),
    ("POST", "/api/channels/t1/game"),
]


async def state_of(client: Any) -> tuple[Any, ...]:
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    return info["game"] and info["game"]["digest"], info["game"] and info["game"]["seq"], info["settingsRevision"]


@pytest.mark.parametrize("method, path", JSON_ROUTES)
@pytest.mark.parametrize(
    "body, content_type, status",
    [
        (DEEP, "application/json", 400),
        ('{"a": ' * 1000 + "1" + "}" * 1000, "application/json", 400),
        ('{"seq": 1}', "application/json; charset=bogus", 415),
        (b'{"id": "\xff\xfe"}', "application/json", 400),
    ],
)
async def test_bad_bodies_are_4xx_and_change_nothing(
    client: Any, method: str, path: str, body: Any, content_type: str, status: int
) -> None:
    await make_channel(client, doc=game(7, 1))
    before = await state_of(client)
    r = await client.request(method, path, data=body, headers={**AUTH, "Content-Type": content_type})
    # the game routes read bytes (no charset): an engine refusal, still a 4xx
    assert 400 <= r.status < 500, (r.status, await r.text())
    if not path.endswith("/game"):
        assert r.status == status, await r.text()
    assert "error" in await r.json()
    assert await state_of(client) == before


@pytest.mark.parametrize(
    "encode",
    [lambda t: b"\xef\xbb\xbf" + t.encode(), lambda t: t.encode("utf-16"), lambda t: t.encode("utf-16-le")],
    ids=["utf-8-bom", "utf-16", "utf-16-le-no-bom"],
)
async def test_a_json_body_as_notepad_or_powershell_saved_it_is_read(client: Any, encode: Any) -> None:
    """``curl --data-binary @look.json`` of a file Notepad saved (a UTF-8 byte-order mark) or
    Windows PowerShell wrote (UTF-16) is read as the plain file (it was refused: "unexpected
    UTF-8 BOM"); UTF-16 without its mark is not text the server can tell, and is refused."""
    await make_channel(client, doc=game(7, 1))
    revision = (await state_of(client))[2]
    body = encode(json.dumps({"revision": revision, "title": "Finals — table 1"}))
    r = await client.patch("/api/channels/t1/settings", data=body, headers={**AUTH, "Content-Type": "application/json"})
    if body.startswith((b"\xef\xbb\xbf", b"\xff\xfe")):
        assert r.status == 200, await r.text()
        assert (await r.json())["title"] == "Finals — table 1"
    else:
        assert r.status == 400 and (await state_of(client))[2] == revision


@pytest.mark.parametrize("method, path", JSON_ROUTES)
async def test_errors_quote_a_bounded_excerpt(client: Any, method: str, path: str) -> None:
    await make_channel(client, doc=game(7, 1))
    huge = json.dumps({"seq": 1, "kind": "call", "call": "x" * 6_000_000})
    r = await client.request(method, path, data=huge, headers=AUTH)
    assert 400 <= r.status < 500
    assert len(await r.read()) < 4096


async def test_same_seq_other_content_is_a_conflict(client: Any) -> None:
    doc = game(5, 1)
    acts = actions_of(doc)
    await make_channel(client, doc=empty_game(doc))
    for a in acts[:3]:
        assert (await client.post("/api/channels/t1/actions", json=a, headers=AUTH)).status == 200
    same = await client.post("/api/channels/t1/actions", json=acts[2], headers=AUTH)
    assert same.status == 200 and (await same.json())["duplicate"] is True
    other = {"seq": 3, "kind": "undo"}
    r = await client.post("/api/channels/t1/actions", json=other, headers=AUTH)
    assert r.status == 409, await r.text()
    body = await r.json()
    assert body["seq"] == 3 and body["accepted"]["kind"] == acts[2]["kind"]
    assert '"undo"' in body["error"] and json.dumps(acts[2]["kind"]) in body["error"]


@pytest.mark.parametrize("seq", [True, "2", 2.0, None, -1])
async def test_seq_has_a_strict_type(client: Any, seq: Any) -> None:
    doc = game(5, 1)
    await make_channel(client, doc=empty_game(doc))
    a = actions_of(doc)[0]
    assert (await client.post("/api/channels/t1/actions", json=a, headers=AUTH)).status == 200
    r = await client.post("/api/channels/t1/actions", json={"seq": seq, "kind": "call", "call": "Pass"}, headers=AUTH)
    assert r.status == 400 and (await r.json())["kind"] == "validation"
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["seq"] == 1


def _renege(doc: dict[str, Any]) -> tuple[int, str] | None:
    """(index of the first card action, a card the next seat holds off the led suit while
    holding the led suit) or None: a renege the engine can see (hands are known)."""
    tl = load_game(json.dumps(doc), source="x.egn").timeline
    acts = actions_of(doc)
    first = next(i for i, a in enumerate(acts) if a["kind"] == "card")
    st = next(s for s in tl.steps if s.kind.value == "card")
    assert st.trick is not None
    seat = (st.trick.seats[-1] + 1) % 4
    led = effective_suit(st.trick.cards[0], st.trump)
    hand = st.hands[seat]
    off = [c for c in hand if effective_suit(c, st.trump) != led]
    if off and any(effective_suit(c, st.trump) == led for c in hand):
        return first, card_name(off[0])
    return None


async def test_a_renege_is_recorded_with_the_engines_warning(client: Any) -> None:
    doc, found = next((d, f) for d in (generate_game(s, deals=1) for s in range(1, 80)) if (f := _renege(d)))
    first, card = found
    acts = actions_of(doc)
    await make_channel(client, doc=empty_game(doc))
    for a in acts[: first + 1]:
        assert (await client.post("/api/channels/t1/actions", json=a, headers=AUTH)).status == 200
    r = await client.post("/api/channels/t1/actions", json={"seq": first + 2, "kind": "card", "card": card}, headers=AUTH)
    assert r.status == 200, await r.text()
    ack = await r.json()
    assert len(ack["warnings"]) == 1 and "renege" in ack["warnings"][0] and ack["warnings"][0].startswith("channel t1: deal 0")
    # the same card again is not a table's mistake: refused with the engine's place
    again = acts[first]["card"]
    r = await client.post("/api/channels/t1/actions", json={"seq": first + 3, "kind": "card", "card": again}, headers=AUTH)
    assert r.status == 400 and "already played" in (await r.json())["error"]


def _deal_actions(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return actions_of(doc, deals=1)


@pytest.mark.parametrize(
    "name, needle",
    [
        ("twenty_identical_cards", "dealt twice"),
        ("up_card_in_a_hand", "dealt twice: seat"),
        ("new_deal_with_two_cards_played", "not over (8 calls, 2 cards played)"),
        ("second_new_deal", "not over (0 calls, 0 cards played)"),
        ("discard_after_round_two", "after a round-2 call"),
        ("card_during_the_bidding", "before trump was made"),
        ("eighth_pass_stick_the_dealer", "stick the dealer: dealer"),
    ],
)
async def test_illegal_actions_are_refused_with_the_place(client: Any, name: str, needle: str) -> None:
    doc = generate_game(7, deals=2)
    acts = _deal_actions(doc)
    first = acts[0]
    pc = first["playerCards"]
    await make_channel(client, doc=empty_game(doc))
    sent: list[dict[str, Any]] = []
    if name == "twenty_identical_cards":
        bad = {**first, "playerCards": [[pc[0][0]] * 5] * 4}
    elif name == "up_card_in_a_hand":
        bad = {**first, "upCard": pc[1][0]}
    elif name == "new_deal_with_two_cards_played":
        k = next(i for i, a in enumerate(acts) if a["kind"] == "card")
        sent = acts[: k + 2]
        bad = {**first, "seq": k + 3}
    elif name == "second_new_deal":
        sent = [first]
        bad = {**first, "seq": 2}
    elif name == "card_during_the_bidding":
        sent = [first, {"seq": 2, "kind": "call", "call": "Pass"}]
        bad = {"seq": 3, "kind": "card", "card": pc[(first["dealer"] + 1) % 4][0]}
    elif name == "discard_after_round_two":
        sent = [first] + [{"seq": i, "kind": "call", "call": "Pass"} for i in range(2, 6)]
        suit = next(s for s in "cdhs" if s != first["upCard"][1])
        sent.append({"seq": 6, "kind": "call", "call": suit})
        bad = {"seq": 7, "kind": "discard", "card": pc[first["dealer"]][0]}
    else:  # the generated games stick the dealer: the dealer's pass in round 2 is refused
        sent = [first] + [{"seq": i, "kind": "call", "call": "Pass"} for i in range(2, 9)]
        bad = {"seq": 9, "kind": "call", "call": "Pass"}
    for a in sent:
        r = await client.post("/api/channels/t1/actions", json=a, headers=AUTH)
        assert r.status == 200, (a, await r.text())
    before = await state_of(client)
    r = await client.post("/api/channels/t1/actions", json=bad, headers=AUTH)
    assert r.status == 400, await r.text()
    body = await r.json()
    assert body["error"].startswith("channel t1: deal 0") and needle in body["error"], body
    assert await state_of(client) == before


def test_inspect_strict_refuses_duplicate_cards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = generate_game(7, deals=1)
    hands = doc["deals"][0]["initialState"]["playerCards"]
    hands[1][0] = hands[0][0]
    path = tmp_path / "dup.egn"
    path.write_text(json.dumps(doc))
    assert main(["inspect", str(path), "--strict"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("euchre-overlay: dup.egn: deal 0") and "dealt twice" in err[0]
    assert main(["inspect", str(path)]) == 0  # lenient: reported, replayed


@pytest.mark.parametrize(
    "method, path, body, content_type",
    [
        ("POST", "/api/channels/t1/game", b"{broken", "multipart/form-data; boundary=x"),
        ("POST", "/api/channels/t1/game", b"{broken", "multipart/form-data"),
        ("POST", "/api/channels/t1/load", json.dumps({"path": "/tmp/a\u0000b"}).encode(), "application/json"),
        ("POST", "/api/channels/t1/follow", json.dumps({"path": "x\u0000"}).encode(), "application/json"),
    ],
)
async def test_what_the_fuzz_found_is_refused(client: Any, method: str, path: str, body: bytes, content_type: str) -> None:
    """Cases ``bench faults`` answered with 500 once: a broken multipart body, a NUL in a path."""
    await make_channel(client, doc=game(7, 1))
    before = await state_of(client)
    r = await client.request(method, path, data=body, headers={**AUTH, "Content-Type": content_type})
    assert r.status == 400, await r.text()
    assert await state_of(client) == before
