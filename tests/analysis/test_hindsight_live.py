"""Hindsight on the live service (``overlay.service.analysis``): hands rebuilt from a deal's play reach
an output only once the game version it shows holds the whole play (a delayed output later
than preview), an output whose view hides hole cards only from the deal's last card on, the
clean output never; the message carries ``hands`` and ``reason``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from engine.generate import generate_game
from engine.hindsight import played_out
from engine.state import GameState, StepKind
from overlay.service.analysis import WITHHELD
from overlay.service.keys import ANALYSIS, HUB
from renderer.view import Perspective, default_view
from tests.support import AUTH, FakeClock
from tests.analysis.test_hindsight import stripped

SIZE = (1280, 720)
DELAY = 5.0


async def _analysed(client: Any, ch: Any, output: str, step: int) -> dict[str, Any]:
    """The analysis message ``output`` of ``ch`` gets for ``step`` now (through the app's pool)."""
    live = client.server.app[ANALYSIS]
    key = (ch.id, f"{output}@{SIZE[0]}x{SIZE[1]}")
    slot = live.pool.latest.get(key)
    if slot is not None:
        slot.sent = None
    live.after_scene(ch, output, SIZE, step, lambda text: None)
    await asyncio.gather(*list(live.tasks))
    slot = live.pool.latest[key]
    assert slot.sent is not None and slot.sent[1] == step
    msg: dict[str, Any] = json.loads(slot.sent[3])
    return msg


async def _channel(client: Any, settings: dict[str, Any]) -> Any:
    r = await client.post("/api/channels", json={"id": "h", "settings": settings}, headers=AUTH)
    assert r.status == 201, await r.text()
    return client.server.app[HUB].get("h")


async def _put(client: Any, doc: dict[str, Any]) -> None:
    r = await client.put("/api/channels/h/game", data=json.dumps(doc), headers=AUTH)
    assert r.status == 200, await r.text()


def _first_card_of_last_deal(steps: Any) -> int:
    last = steps[-1].deal
    return next(i for i, s in enumerate(steps) if s.deal == last and s.kind is StepKind.CARD)


@pytest.mark.fake_clock
async def test_a_delayed_output_gets_hindsight_only_once_its_version_holds_the_play(client: Any, clock: FakeClock, live_analysis: None) -> None:
    """A live deal fed trick by trick: preview gets the rebuilt hands as soon as the feed
    completes the deal, the program output ``DELAY`` seconds later (it analyses the version it
    shows), the clean output never."""
    ch = await _channel(client, {"outputs": {"program": {"delay": DELAY, "width": SIZE[0], "height": SIZE[1]}}})
    full = stripped(generate_game(1, deals=2))
    cut = json.loads(json.dumps(full))
    cut["deals"][-1]["phases"][-1]["tricks"] = cut["deals"][-1]["phases"][-1]["tricks"][:2]
    start = clock.t
    await _put(client, cut)
    r = await client.post("/api/channels/h/control", json={"op": "live"}, headers=AUTH)
    assert r.status == 200
    clock.t = start + 10.0
    step = _first_card_of_last_deal(ch.shown(ch.revision).steps)
    for output in ("preview", "program"):
        a = (await _analysed(client, ch, output, step))["analysis"]
        assert a["hands"] is None and a["ddTricks"] is None and "not played" in a["reason"], (output, a)
    await _put(client, full)  # the feed completes the deal
    now = (await _analysed(client, ch, "preview", step))["analysis"]
    assert now["hands"] == "reconstructed" and now["ddTricks"] is not None and now["reason"] is None
    late = (await _analysed(client, ch, "program", step))["analysis"]
    assert late["hands"] is None and late["ddTricks"] is None, "the delayed output saw the play before its time"
    clean = (await _analysed(client, ch, "clean", step))["analysis"]
    assert clean["estimate"] and clean["hands"] is None and clean["ddTricks"] is None and clean["best"] is None
    clock.t = start + 10.0 + DELAY + 0.5
    later = (await _analysed(client, ch, "program", step))["analysis"]
    assert later["hands"] == "reconstructed" and later["ddTricks"] == now["ddTricks"]
    clean = (await _analysed(client, ch, "clean", step))["analysis"]
    assert clean["estimate"] and clean["hands"] is None and clean["ddTricks"] is None


async def test_an_output_that_hides_hole_cards_gets_hindsight_from_the_last_card(client: Any, live_analysis: None) -> None:
    """Program drawn with hands face down until played: a step before the deal's last card is
    analysed from public information (with the reason why), the last card on from the rebuilt
    hands; preview (every hand face up) gets them at once; clean never."""
    view = default_view().model_copy(update={"perspective": Perspective.PLAYED}).model_dump(mode="json")
    ch = await _channel(client, {"outputs": {"program": {"view": view, "width": SIZE[0], "height": SIZE[1]}}})
    await _put(client, stripped(generate_game(1, deals=1)))
    await client.post("/api/channels/h/control/pause", headers=AUTH)
    steps: list[GameState] = list(ch.shown(ch.revision).steps)
    mid = _first_card_of_last_deal(steps)
    last = next(i for i, s in enumerate(steps) if played_out(s))
    hidden = (await _analysed(client, ch, "program", mid))["analysis"]
    assert hidden["estimate"] and hidden["ddTricks"] is None and hidden["best"] is None and hidden["hands"] is None
    assert hidden["reason"] == WITHHELD
    shown = (await _analysed(client, ch, "preview", mid))["analysis"]
    assert shown["hands"] == "reconstructed" and shown["ddTricks"] is not None
    end = await _analysed(client, ch, "program", last)
    assert end["analysis"]["hands"] == "reconstructed" and end["analysis"]["ddTricks"] is not None and not end["analysis"]["estimate"]
    assert "HINDSIGHT" in json.dumps(end["layer"])
    for step in (mid, last):
        clean = (await _analysed(client, ch, "clean", step))["analysis"]
        assert clean["estimate"] and clean["hands"] is None and clean["ddTricks"] is None and clean["reason"] is None


async def test_hands_added_to_a_live_file_are_not_a_correction(client: Any) -> None:
    """A logger that adds the hands a deal was dealt changes no action: the feed takes it as
    the same game (no jump), though the analysis now calls those hands recorded."""
    full = generate_game(1, deals=2)
    await _channel(client, {})
    await _put(client, stripped(full))
    r = await client.put("/api/channels/h/game", data=json.dumps(full), headers=AUTH)
    assert r.status == 200, await r.text()
    assert (await r.json())["correction"] is False
