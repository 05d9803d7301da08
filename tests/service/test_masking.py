"""Issue 22 item 2: no message of an output that hides hands carries a card not yet public.

Before the fix the clean output's state named the dealer's discard in ``action.card`` (its
``discard`` was masked, the action was not), and a program output drawn with the hands face
down sent every hole card in its state, its analysis (``best``, each card's value) and the
best-play marks of its analysis layer.  Here every step of several generated games is walked
on a fake clock, with analysis on; every message of the clean output and of a delayed program
output (HTTP state, state socket, page socket scene, analysis message and layer) is searched
for a card not public at the step the message names.  The oracle is this file's own, from the
games' actions: a card is public once played in the deal, the deal's up-card from its start;
the dealer's discard never is; a program drawn ``focus`` shows that seat's hand besides.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from engine.cards import card_name
from engine.generate import generate_game
from engine.load import load_game
from engine.state import GameState, StepKind
from overlay.service.keys import HUB
from renderer.view import Perspective, default_view
from tests.support import AUTH, FakeClock

DELAY = 2.0
SIZE = "width=1280&height=720"
#: a card name (EGN notation, the deck of the generated games)
CARD = re.compile(r"^[9TJQKA][cdhs]$")
#: a card face sprite in a scene's defs (``f:Ks:o@...``, ``f:Js:R:o@...``)
SPRITE = re.compile(r"^f:([^:]+):")
#: a card written in a text op: rank and suit symbol
TEXT_CARD = re.compile(r"(?<![A-Za-z0-9])(10|[9TJQKA])\s?([\u2660\u2665\u2666\u2663])")
SYMBOL = {"\u2660": "s", "\u2665": "h", "\u2666": "d", "\u2663": "c"}

#: (seed, the program's perspective, its focus seat): several games, each hiding hands its way
GAMES = [(3, Perspective.PLAYED, 0), (8, Perspective.FOCUS, 1), (21, Perspective.NONE, 0)]


def _public(steps: Sequence[GameState], at: int, focus: int | None) -> set[str]:
    """The cards an output may show at step ``at`` (from the actions, not the state's fields)."""
    st = steps[at]
    first = next(i for i, s in enumerate(steps) if s.deal == st.deal)
    shown = {"Xx"}
    if st.up_card is not None:
        shown.add(card_name(st.up_card))
    for s in steps[first : at + 1]:
        act = s.action
        if s.kind is StepKind.CARD and act is not None and act.card is not None:
            shown.add(card_name(act.card))
        if focus is not None and s.kind is StepKind.DISCARD and s.dealer == focus and act is not None and act.card is not None:
            shown.add(card_name(act.card))
    if focus is not None and focus < len(st.hands):
        shown.update(card_name(c) for c in st.hands[focus])
    return shown


def _cards(value: Any) -> Iterator[str]:
    """Every card a JSON message names: card strings, face sprites (dict keys included),
    cards written in texts."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _cards(k)
            yield from _cards(v)
    elif isinstance(value, list):
        for v in value:
            yield from _cards(v)
    elif isinstance(value, str):
        if CARD.match(value):
            yield value
        sprite = SPRITE.match(value)
        if sprite:
            yield sprite.group(1)
        for rank, suit in TEXT_CARD.findall(value):
            yield ("T" if rank == "10" else rank) + SYMBOL[suit]


class Watch:
    """One socket's messages, read in the background and checked as they come."""

    def __init__(self, ws: Any, name: str, check: Any) -> None:
        self.ws, self.name, self.check = ws, name, check
        self.seen: list[dict[str, Any]] = []
        self.failed: AssertionError | None = None
        self.arrived = asyncio.Event()  # set for each message read (and when reading stops)
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            async for msg in self.ws:
                data = json.loads(msg.data)
                try:
                    self.check(self.name, data)
                except AssertionError as exc:
                    self.failed = exc
                    return
                self.seen.append(data)
                self.arrived.set()
        finally:
            self.arrived.set()

    async def until(self, kind: str, step: int, timeout: float = 60.0) -> None:
        """Wait for a message of ``kind`` at ``step`` (each message looked at once)."""
        looked = 0
        async with asyncio.timeout(timeout):
            while True:
                if self.failed is not None:
                    raise self.failed
                if any(m.get("type") == kind and m.get("step") == step for m in self.seen[looked:]):
                    return
                looked = len(self.seen)
                self.arrived.clear()
                if self.task.done() and self.failed is None:
                    raise AssertionError(f"{self.name}: the socket closed before a {kind} message at step {step}")
                await self.arrived.wait()

    async def close(self) -> None:
        await self.ws.close()
        self.task.cancel()


@pytest.mark.slow
@pytest.mark.fake_clock
async def test_no_clean_or_delayed_program_message_carries_a_card_not_yet_public(client: Any, clock: FakeClock, live_analysis: None) -> None:
    checked: dict[str, int] = {}
    for seed, perspective, focus in GAMES:
        doc = generate_game(seed, deals=2)
        steps = load_game(json.dumps(doc), source="g").timeline.steps
        cid = f"g{seed}"
        view = default_view().model_copy(update={"perspective": perspective, "focus_seat": focus}).model_dump(mode="json")
        settings = {"outputs": {"program": {"delay": DELAY, "view": view}}, "analysis": {"enabled": True, "clean": "public"}}
        r = await client.post("/api/channels", json={"id": cid, "settings": settings}, headers=AUTH)
        assert r.status == 201, await r.text()
        r = await client.put(f"/api/channels/{cid}/game", data=json.dumps(doc), headers=AUTH)
        assert r.status == 200, await r.text()
        await client.post(f"/api/channels/{cid}/control/pause", headers=AUTH)
        shows = {"clean": None, "program": focus if perspective is Perspective.FOCUS else None}

        def check(where: str, msg: dict[str, Any], output: str | None = None) -> None:
            out = output or msg.get("output")
            step = msg.get("step")
            if out not in shows or step is None or msg.get("type") == "bye":
                return
            allowed = _public(steps, step, shows[out])
            leaked = sorted(set(_cards(msg)) - allowed)
            assert not leaked, f"game {seed}, {where} ({out}), step {step} ({steps[step].kind.value}): {leaked} not public"
            checked[where] = checked.get(where, 0) + 1

        watches = []
        for output in shows:
            page = await client.ws_connect(f"/ws/overlay/{cid}?output={output}&{SIZE}")
            state = await client.ws_connect(f"/api/channels/{cid}/state/ws?output={output}")
            watches += [Watch(page, "page socket", check), Watch(state, "state socket", check)]
        ch = client.server.app[HUB].get(cid)
        try:
            for step in range(len(steps)):
                r = await client.post(f"/api/channels/{cid}/control/seek?step={step}", headers=AUTH)
                assert r.status == 200, await r.text()
                clock.t += DELAY + 0.25  # the program output shows this step now
                ch.poke()
                for output in shows:
                    r = await client.get(f"/api/channels/{cid}/state?output={output}")
                    body = await r.json()
                    assert body["step"] == step
                    check("HTTP state", body)
                for w in watches:
                    await w.until("state" if w.name == "state socket" else "scene", step)
                for w in watches[::2]:
                    await w.until("analysis", step)
        finally:
            for w in watches:
                await w.close()
    assert checked.get("page socket", 0) > 200 and checked.get("HTTP state", 0) > 200, checked
