"""Broadcast delay across corrections, in process with an injected clock: a delayed output shows
exactly what preview showed ``delay`` seconds earlier, even when the game was corrected in between."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.generate import generate_game
from overlay.service.director import Director
from overlay.service.keys import HUB
from tests.support import AUTH, FakeClock

#: the service runs on the hand-moved ``clock`` fixture
pytestmark = pytest.mark.fake_clock

DELAY = 5.0
SIZE = (1280, 720)


def _comparable(text: str) -> dict[str, Any]:
    """A scene or state message without the fields that name the output or count messages."""
    msg = json.loads(text)
    for key in ("seq", "output", "snapshot", "delay"):
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
        state_now = await (await client.get("/api/channels/d/state?output=preview", headers=AUTH)).text()
        preview[offset] = (_comparable(ch.fanout.scene_text("preview", SIZE, clock.t, snapshot=False)[0]), _comparable(state_now))
        if offset >= DELAY:
            program_scene = _comparable(ch.fanout.scene_text("program", SIZE, clock.t, snapshot=False)[0])
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
