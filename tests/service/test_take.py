"""TAKE with a transition (issue 23 item 5), in process against the real service: the
program and clean pages get the mix or wipe as their scene (renderer/take.py), so every
output that draws the page's messages (the page, inject) shows it; paused, the two pictures
hold still while the take runs on a clock of its own; a cut, or a take that has run its
course, is the new layout alone; a transition that is not cut/mix/wipe is refused."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from renderer.raster import raster
from renderer.scene import Scene
from tests.support import AUTH, FakeClock, game, make_channel, scene_msg

pytestmark = pytest.mark.fake_clock

SIZE = "width=1280&height=720"


async def _setup(client: Any) -> Any:
    """Channel t1 with a game, paused mid-game; the preview shows a layout with the score
    bugs moved; a program page connected (its first scene read)."""
    await make_channel(client, "t1", game(5, deals=2))
    r = await client.post("/api/channels/t1/control", json={"op": "seek", "step": 12}, headers=AUTH)
    assert r.status == 200, await r.text()
    assert (await client.post("/api/channels/t1/control", json={"op": "pause"}, headers=AUTH)).status == 200
    await _moved_preview(client)
    ws = await client.ws_connect(f"/ws/overlay/t1?output=program&{SIZE}")
    return ws


async def _moved_preview(client: Any) -> None:
    """The preview's layout: the default one with the score bugs moved right."""
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    view = schema["defaults"]["views"]["preview"]
    for e in view["elements"]:
        if e["type"] in ("ns-score", "ew-score"):
            e["x"] += 700
    r = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "outputs": {"preview": {"view": view}}}, headers=AUTH)
    assert r.status == 200, await r.text()


def _px(scene: dict[str, Any], t: float) -> np.ndarray:
    return np.asarray(raster(Scene.from_json(scene), t).toarray(), dtype=np.float64)


def _off(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).mean())


async def test_a_mix_on_a_paused_program_runs_on_its_own_clock(client: Any, clock: FakeClock) -> None:
    ws = await _setup(client)
    before = await scene_msg(ws)
    assert before["rate"] == 0  # paused
    r = await client.post("/studio/api/channels/t1/take?transition=mix&duration=0.8", headers=AUTH)
    assert r.status == 200, await r.text()
    msg = await scene_msg(ws)
    assert msg["step"] == before["step"] and msg["age"] == 0 and msg["rate"] == 1  # the take's own clock
    old = _px(before["scene"], before["age"])
    assert _off(_px(msg["scene"], 0.0), old) < 0.05  # starts on the picture that was on air
    mid = _px(msg["scene"], 0.4)
    end = _px(msg["scene"], 0.8)
    assert _off(mid, old) > 0.3 and _off(mid, end) > 0.3  # a mix, neither picture alone
    assert _off(end, old) > 0.3
    # a page joining once the take has run its course gets the new layout alone, still
    clock.t += 1.0
    late = await client.ws_connect(f"/ws/overlay/t1?output=program&{SIZE}")
    snap = await scene_msg(late)
    assert snap["rate"] == 0 and not any(op[0] == "ly" for op in snap["scene"]["ops"])
    assert _off(_px(snap["scene"], snap["age"]), end) < 0.05
    await late.close()
    await ws.close()


async def test_the_clean_output_takes_too_and_shows_no_hole_card(client: Any) -> None:
    await _setup(client)
    clean = await client.ws_connect(f"/ws/overlay/t1?output=clean&{SIZE}")
    first = await scene_msg(clean)
    r = await client.post("/studio/api/channels/t1/take?transition=wipe", headers=AUTH)
    assert r.status == 200, await r.text()
    msg = await scene_msg(clean)
    assert msg["rate"] == 1 and any(op[0] == "cl" for op in msg["scene"]["ops"])  # the wipe's moving clip

    def faces(scene: dict[str, Any]) -> set[str]:
        return {op[1] for ops in [scene["ops"], *scene["defs"].values()] for op in ops if op[0] == "sp"}

    # the take draws no card face the clean output did not show before or after it
    state = await (await client.get("/api/channels/t1/state?output=clean", headers=AUTH)).json()
    assert faces(msg["scene"]) <= faces(first["scene"]) | faces(await _settled(client)), state["step"]
    await clean.close()


async def _settled(client: Any) -> dict[str, Any]:
    ws = await client.ws_connect(f"/ws/overlay/t1?output=clean&{SIZE}")
    msg = await scene_msg(ws)
    await ws.close()
    return dict(msg["scene"])


async def test_a_cut_and_the_channel_default(client: Any) -> None:
    ws = await _setup(client)
    await scene_msg(ws)
    r = await client.post("/studio/api/channels/t1/take?transition=cut", headers=AUTH)
    assert r.status == 200
    cut = await scene_msg(ws)
    assert cut["rate"] == 0 and not any(op[0] in ("ly", "cl") for op in cut["scene"]["ops"])
    # the channel's own TAKE transition (timing.take) is what a bare TAKE, a view link and a
    # Stream Deck take use
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    wide = {**schema["defaults"]["views"]["preview"], "id": "v1", "name": "Wide"}
    r = await client.patch(
        "/api/channels/t1/settings",
        json={"revision": doc["revision"], "timing": {"take": {"style": "mix", "run_time": 0.5}}, "views": [wide]},
        headers=AUTH,
    )
    assert r.status == 200, await r.text()
    await scene_msg(ws)  # (the timing change redraws)
    assert (await client.post("/studio/api/channels/t1/view/1?output=program", headers=AUTH)).status == 200
    mixed = await scene_msg(ws)
    incoming = [op for op in mixed["scene"]["ops"] if op[0] == "ly" and op[2] == "plus"]
    assert len(incoming) == 1 and mixed["scene"]["tracks"][incoming[0][1]["k"]][-1][0] == pytest.approx(0.5)
    await ws.close()


@pytest.mark.parametrize("query, words", [("transition=fade", "cut, mix, wipe or stinger"), ("transition=mix&duration=0", "duration"), ("duration=9", "at most 5")])
async def test_a_transition_it_does_not_know_is_refused(client: Any, query: str, words: str) -> None:
    await make_channel(client, "t1", game(5, deals=1))
    r = await client.post(f"/studio/api/channels/t1/take?{query}", headers=AUTH)
    assert r.status == 400
    assert words in (await r.json())["error"]


async def test_a_take_while_playing_sits_on_the_steps_clock(client: Any, clock: FakeClock) -> None:
    await make_channel(client, "t1", game(5, deals=2))
    await client.post("/api/channels/t1/control", json={"op": "seek", "step": 3}, headers=AUTH)
    await client.post("/api/channels/t1/control", json={"op": "play"}, headers=AUTH)
    await _moved_preview(client)
    ws = await client.ws_connect(f"/ws/overlay/t1?output=program&{SIZE}")
    first = await scene_msg(ws)
    assert first["rate"] == 1
    clock.t += 0.1
    r = await client.post("/studio/api/channels/t1/take?transition=mix&duration=0.6", headers=AUTH)
    assert r.status == 200
    msg = await scene_msg(ws)
    # the step's own age and rate: its animation goes on under the take
    assert msg["step"] == first["step"] and msg["rate"] == 1 and msg["age"] == pytest.approx(first["age"] + 0.1, abs=1e-3)
    incoming = [op for op in msg["scene"]["ops"] if op[0] == "ly" and op[2] == "plus"]
    assert len(incoming) == 1
    track = msg["scene"]["tracks"][incoming[0][1]["k"]]  # the new picture comes in from the take on
    assert track[0][0] == pytest.approx(msg["age"], abs=1e-3) and track[-1][0] == pytest.approx(msg["age"] + 0.6, abs=1e-3)
    await ws.close()


def test_take_settings_round_trip() -> None:
    from renderer.timing import TakeTransition, Timing

    t = Timing.model_validate({"take": {"style": "wipe", "run_time": 1.2}})
    assert t.take == TakeTransition(style="wipe", run_time=1.2)
    assert json.loads(t.model_dump_json())["take"]["style"] == "wipe"
