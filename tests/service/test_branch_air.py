"""Alternative lines on air through the control API (in process, on a fake clock): the line
plays, transport works inside it, ``mainline`` returns where the main line left, a live
feed is held (not lost) while a line is on air, and bad requests are typed 422 refusals."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from engine.analysis import Analyst
from engine.load import load_game
from engine.ruleset import Ruleset
from engine.state import StepKind
from overlay.service.feed import actions_of
from overlay.service.keys import HUB
from tests.lines import lined_game
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from tests.support import AUTH, TOKEN, FakeClock, Server, empty_game, make_channel, match_doc, scene_msg

DOC = lined_game()
TL = load_game(json.dumps(DOC), source="lines.egn").timeline
LINES = [b for b in TL.branches if b.deal == 1]


async def control(client: Any, op: str, **query: Any) -> tuple[int, dict[str, Any]]:
    r = await client.post(f"/api/channels/t1/control/{op}", params={k: str(v) for k, v in query.items()}, headers=AUTH)
    return r.status, await r.json()


async def state(client: Any) -> dict[str, Any]:
    r = await client.get("/api/channels/t1/state?output=preview", headers=AUTH)
    assert r.status == 200, await r.text()
    body: dict[str, Any] = await r.json()
    return body


@pytest.mark.fake_clock
async def test_a_line_plays_from_its_step_and_mainline_returns_where_it_left(client: Any, clock: FakeClock) -> None:
    await make_channel(client, doc=DOC)
    here = TL.deals[0].first_step + 6
    assert (await control(client, "seek", step=here))[0] == 200
    await control(client, "pause")
    before = await state(client)
    status, ph = await control(client, "branch", deal=2, line=2)
    assert status == 200, ph
    line = LINES[1]
    first = line.parent_step + 1
    assert ph["line"] == {"deal": 2, "line": 2, "game": None, "firstStep": first, "steps": first + len(line.steps), "resumeStep": here}
    assert ph["step"] == first and ph["playing"] is False  # paused: the line's first step, complete
    shown = await state(client)
    assert shown["state"]["step"] == first and shown["step"] == first
    assert shown["line"] == {"deal": 2, "line": 2, "game": None}
    assert shown["state"]["action"]["card"] == json.loads(json.dumps(line.steps[0].to_json()))["action"]["card"]
    # step, back and seek move inside the line (seek counts from the line's first step)
    assert (await control(client, "step"))[1]["step"] == first + 1
    assert (await control(client, "back"))[1]["step"] == first
    assert (await control(client, "seek", step=3))[1]["step"] == first + 3
    assert (await state(client))["state"]["trick"] == line.steps[3].to_json()["trick"]
    # play runs through the line and holds at its end (a line never loops into the game)
    await control(client, "loop", value="true")
    await control(client, "play")
    clock.t += 600
    end = await state(client)
    assert end["step"] == first + len(line.steps) - 1
    assert end["state"]["dealPoints"] == list(line.steps[-1].deal_points or ())
    # back to the main line: the step and the paused state it had
    status, ph = await control(client, "mainline")
    assert status == 200 and ph["line"] is None and ph["step"] == here and ph["playing"] is False and ph["loop"] is True
    after = await state(client)
    assert after["state"] == before["state"] and after["line"] is None


@pytest.mark.fake_clock
async def test_pages_get_the_line_game_and_the_banner(client: Any, clock: FakeClock) -> None:
    await make_channel(client, doc=DOC)
    ws = await client.ws_connect("/ws/overlay/t1?output=program")
    await scene_msg(ws)
    await control(client, "branch", deal=2, line=1)
    msg = await scene_msg(ws)
    ops = json.dumps(msg["scene"]["ops"])
    assert msg["step"] == LINES[0].parent_step + 1
    assert "ALTERNATIVE LINE" in ops and "ALT" in ops
    await control(client, "mainline")
    msg = await scene_msg(ws)
    assert "ALTERNATIVE LINE" not in json.dumps(msg["scene"]["ops"])
    await ws.close()


@pytest.mark.fake_clock
async def test_a_live_action_while_a_line_is_on_air_is_held_not_lost(client: Any, clock: FakeClock) -> None:
    # the logger has written deals 1-2 (deal 2 with its lines); deal 3 comes as actions
    base = empty_game(DOC)
    base["deals"] = DOC["deals"][:2]
    await make_channel(client, doc=base)
    await control(client, "live")
    clock.t += 5
    status, ph = await control(client, "branch", deal=2, line=1)
    assert status == 200
    on_line = (await state(client))["state"]
    acts = actions_of(DOC)[len(actions_of(base)) :]
    for seq, act in enumerate(acts[:3], 1):
        r = await client.post("/api/channels/t1/actions", json={**act, "seq": seq}, headers=AUTH)
        assert r.status == 200, await r.text()
        ack = await r.json()
        assert ack["changed"] is True
    # the picture stays on the line; the game has the actions
    assert (await state(client))["state"] == on_line
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["game"]["deals"] == 3 and info["game"]["seq"] == 3
    assert info["playhead"]["line"] is not None
    # back on the main line, the live playhead catches up with the newest step
    status, ph = await control(client, "mainline")
    assert status == 200
    hub = client.server.app[HUB]
    ch = hub.get("t1")
    newest = ch.steps - 1
    for _ in range(40):
        clock.t += 1
        ch.director.catch_up(clock.t)
    assert (await state(client))["step"] == newest


@pytest.mark.fake_clock
async def test_mainline_after_the_main_line_shrank_shows_its_last_step_complete(client: Any, clock: FakeClock) -> None:
    """The main line was animating a step of deal 3 when a line went on air; the logger then
    took deal 3 back (a held update): ``mainline`` shows the new last step complete, as a
    restart on the stored playhead does (one placing rule, ``overlay.service.director.place``)."""
    await make_channel(client, doc=DOC)
    here = TL.deals[2].first_step + 4
    await control(client, "play")
    assert (await control(client, "seek", step=here))[0] == 200  # playing: animates from the step's start
    status, ph = await control(client, "branch", deal=2, line=1)
    assert status == 200 and ph["line"]["resumeStep"] == here
    shorter = {**DOC, "deals": DOC["deals"][:2]}
    r = await client.put("/api/channels/t1/game", data=json.dumps(shorter), headers=AUTH)
    assert r.status == 200, await r.text()
    ch = client.server.app[HUB].get("t1")
    last = ch.steps - 1
    assert last < here
    status, ph = await control(client, "mainline")
    assert status == 200 and ph["line"] is None and ph["step"] == last
    pos = ch.director.position(clock.t)
    assert (pos.step, pos.offset) == (last, ch.director.durations[last])
    clock.t += 0.2
    assert (await state(client))["step"] == last


@pytest.mark.fake_clock
async def test_a_timing_change_during_a_line_keeps_the_main_lines_progress(client: Any, clock: FakeClock) -> None:
    """The main line was 40 % through a card step when a line went on air; the producer then
    made card steps twice as long: ``mainline`` returns 40 % through the step in the new
    timing (the saved place is retimed as the playing line is), not at the old seconds."""
    await make_channel(client, doc=DOC)
    here = next(i for i in range(TL.deals[0].first_step, len(TL.steps)) if TL.steps[i].kind is StepKind.CARD)
    await control(client, "play")
    assert (await control(client, "seek", step=here))[0] == 200
    ch = client.server.app[HUB].get("t1")
    old = ch.director.durations[here]
    clock.t += 0.4 * old
    await control(client, "pause")
    assert ch.director.position(clock.t).offset == pytest.approx(0.4 * old)
    assert (await control(client, "branch", deal=2, line=1))[0] == 200
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    doc["timing"] = {"card": {"run_time": 1.0, "hold": 1.5, "ease": "out"}}
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 200, await r.text()
    status, ph = await control(client, "mainline")
    assert status == 200 and ph["step"] == here and ph["playing"] is False
    pos = ch.director.position(clock.t)
    assert ch.director.durations[here] == pytest.approx(2.5) != pytest.approx(old)
    assert (pos.step, pos.offset) == (here, pytest.approx(0.4 * 2.5))


@pytest.mark.fake_clock
async def test_a_new_game_ends_the_line(client: Any, clock: FakeClock) -> None:
    """Loading a different game (not a logger's update) ends the line: the new game starts."""
    await make_channel(client, doc=DOC)
    await control(client, "branch", deal=2, line=1)
    r = await client.post("/api/channels/t1/game", data=json.dumps(lined_game(40)), headers=AUTH)
    assert r.status == 200, await r.text()
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    assert info["playhead"]["line"] is None and info["playhead"]["step"] == 0
    assert (await control(client, "mainline"))[0] == 422


@pytest.mark.parametrize(
    "doc, ops, needle",
    [
        (None, [("branch", {"deal": 1, "line": 1})], "no game loaded"),
        (DOC, [("branch", {"deal": 9, "line": 1})], "no deal 9 (the game has deals 1..3)"),
        (DOC, [("branch", {"deal": 1, "line": 1})], "deal 1 has no alternative lines (deals with lines: 2)"),
        (DOC, [("branch", {"deal": 2, "line": 3})], "deal 2 has no line 3 (its lines: 1, 2)"),
        (DOC, [("branch", {"deal": 2})], "branch needs 'deal' and 'line'"),
        (DOC, [("branch", {"deal": 2, "line": 1, "game": 2})], "no game 2"),
        (DOC, [("mainline", {})], "no alternative line is on air"),
        (DOC, [("branch", {"deal": 2, "line": 1}), ("seek", {"deal": 1})], "an alternative line is on air"),
        (DOC, [("branch", {"deal": 2, "line": 1}), ("seek", {"step": 500})], "no step 500 in the alternative line"),
    ],
)
async def test_bad_line_requests_are_typed_refusals(client: Any, doc: Any, ops: list[tuple[str, dict[str, Any]]], needle: str) -> None:
    await make_channel(client, doc=doc)
    for op, query in ops[:-1]:
        assert (await control(client, op, **query))[0] == 200
    op, query = ops[-1]
    status, body = await control(client, op, **query)
    assert status == 422, body
    assert body["kind"] == "unprocessable" and needle in body["error"], body["error"]
    # the page still gets a picture (never blank when a game is loaded)
    if doc is not None:
        assert (await state(client))["state"] is not None


async def test_the_live_analysis_follows_the_line(client: Any, live_analysis: None) -> None:
    """The analysis a page gets during a line is the analysis of the line's state (the real
    process pool; compared with the analysis computed here)."""
    await make_channel(client, doc=DOC)
    page = await client.ws_connect("/ws/overlay/t1?output=preview", headers=AUTH)
    await control(client, "pause")
    await control(client, "branch", deal=2, line=1)
    line = LINES[0]
    first = line.parent_step + 1
    analyst = Analyst(Ruleset())
    # a step of the line whose analysis differs from the main line's at the same index
    k = next(i for i, st in enumerate(line.steps) if analyst.analyse(st).to_json() != analyst.analyse(TL.steps[first + i]).to_json())
    await control(client, "seek", step=k)
    loop = asyncio.get_running_loop()
    end = loop.time() + 90
    while True:
        msg = json.loads((await page.receive(timeout=max(0.1, end - loop.time()))).data)
        if msg["type"] == "analysis" and msg["step"] == first + k:
            break
    assert msg["analysis"] == analyst.analyse(line.steps[k]).to_json()
    await page.close()


async def test_a_restart_during_a_line_resumes_the_main_line_where_it_left(aiohttp_client: Any, settings: ServerSettings) -> None:
    client = await aiohttp_client(create_app(settings))
    await make_channel(client, doc=DOC)
    await control(client, "seek", step=7)
    await control(client, "pause")
    assert (await control(client, "branch", deal=2, line=1))[0] == 200
    await control(client, "step")  # moving inside the line is not stored as the main line's place
    await client.close()
    again = await aiohttp_client(create_app(settings))
    info = await (await again.get("/api/channels/t1", headers=AUTH)).json()
    assert info["playhead"]["line"] is None and info["playhead"]["step"] == 7 and info["playhead"]["playing"] is False


@pytest.mark.fake_clock
async def test_a_delayed_program_shows_the_line_when_its_delay_has_passed(client: Any, clock: FakeClock) -> None:
    await make_channel(client, doc=DOC)
    r = await client.patch("/api/channels/t1/settings", json={"revision": 1, "outputs": {"program": {"delay": 10}}}, headers=AUTH)
    assert r.status == 200, await r.text()
    await control(client, "pause")
    clock.t += 20
    status, ph = await control(client, "branch", deal=2, line=1)
    assert status == 200

    async def program() -> dict[str, Any]:
        body: dict[str, Any] = await (await client.get("/api/channels/t1/state?output=program")).json()
        return body

    clock.t += 5
    assert (await program())["line"] is None and (await state(client))["line"] is not None
    clock.t += 6
    shown = await program()
    assert shown["line"] == {"deal": 2, "line": 1, "game": None} and shown["step"] == LINES[0].parent_step + 1
    await control(client, "mainline")
    clock.t += 5
    assert (await program())["line"] is not None  # still the line, ten seconds late
    clock.t += 6
    assert (await program())["line"] is None


async def test_a_stream_deck_link_puts_a_line_on_air_and_back(client: Any) -> None:
    """A control key (no token) may fire a line and return: both are transport."""
    await make_channel(client, doc=DOC)
    key = (await (await client.post("/studio/api/channels/t1/control-key", headers=AUTH)).json())["key"]
    r = await client.get(f"/studio/link/t1/branch?deal=2&line=2&key={key}")
    assert r.status == 200 and (await r.json())["line"]["line"] == 2
    r = await client.get(f"/studio/link/t1/branch?deal=2&line=9&key={key}")
    assert r.status == 422 and "no line 9" in (await r.json())["error"]
    r = await client.get(f"/studio/link/t1/mainline?key={key}")
    assert r.status == 200 and (await r.json())["line"] is None


@pytest.mark.fake_clock
async def test_a_line_of_a_match_game_is_named_with_its_game(client: Any, clock: FakeClock) -> None:
    match = match_doc((1, 2))
    match["games"][1]["gameData"] = DOC
    names = sorted({n for g in (match["games"][0]["gameData"], DOC) for n in g["metadata"]["players"]})
    match["metadata"]["players"] = [{"id": f"p{i}", "name": n} for i, n in enumerate(names)]
    for g in match["games"]:
        g["players"] = [f"p{names.index(n)}" for n in g["gameData"]["metadata"]["players"]]
    await make_channel(client, doc=match)
    await control(client, "pause")
    status, body = await control(client, "branch", deal=2, line=1)  # game 1 (on screen) has no lines
    assert status == 422 and "deal 2 has no alternative lines (game 1 of the match has none)" in body["error"]
    status, ph = await control(client, "branch", game=2, deal=2, line=1)
    assert status == 200, ph
    info = await (await client.get("/api/channels/t1", headers=AUTH)).json()
    second = info["game"]["games"][1]["firstStep"]
    assert ph["line"]["game"] == 2 and ph["step"] == second + LINES[0].parent_step + 1
    shown = await state(client)
    assert shown["line"] == {"deal": 2, "line": 1, "game": 2} and shown["game"] == 1
    assert shown["state"]["deal"] == 1
    ws = await client.ws_connect("/ws/overlay/t1?output=program")
    assert "GAME 2 \u00b7 DEAL 2 \u00b7 LINE 1" in json.dumps((await scene_msg(ws))["scene"]["ops"], ensure_ascii=False)
    await ws.close()
    assert (await control(client, "mainline"))[1]["step"] == 0


async def test_the_control_command_plays_a_line_and_returns(server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    from overlay.cli import main

    await server.api("POST", "/api/channels", json={"id": "t1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(DOC))

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["control", "t1", *args, "--url", server.base, "--token", TOKEN])
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = await asyncio.to_thread(run, "branch", "--deal", "2", "--line", "2")
    assert code == 0 and json.loads(out)["line"]["line"] == 2
    code, _, err = await asyncio.to_thread(run, "branch", "--deal", "2", "--line", "5")
    assert code == 2 and "refused (422)" in err and "no line 5" in err
    code, out, _ = await asyncio.to_thread(run, "mainline")
    assert code == 0 and json.loads(out)["line"] is None


async def test_the_studio_lists_the_lines_with_what_they_change(client: Any) -> None:
    """The studio's timeline answer lists every line as ``branch`` names it, with the action
    where it leaves the main line, what the main line played there, and how the deal ends."""
    from engine.cards import card_name

    await make_channel(client, doc=DOC)
    r = await client.get("/studio/api/channels/t1/timeline", headers=AUTH)
    assert r.status == 200, await r.text()
    lines = (await r.json())["lines"]
    assert [(x["game"], x["deal"], x["line"]) for x in lines] == [(None, 2, 1), (None, 2, 2)]
    for listed, branch in zip(lines, LINES):
        first = branch.steps[0]
        assert first.action is not None and first.action.card is not None and first.trick is not None
        main = next(s for s in TL.steps if s.deal == 1 and s.action is not None and s.action.index == first.action.index and s.action.kind is first.action.kind)
        assert main.action is not None and main.action.card is not None
        assert listed["at"] == "card" and listed["call"] is None
        assert (listed["trick"], listed["card"]) == (first.trick.number + 1, len(first.trick.cards))
        assert (listed["seat"], listed["player"]) == (first.action.seat, TL.players[first.action.seat])
        assert (listed["play"], listed["instead"]) == (card_name(first.action.card), card_name(main.action.card))
        assert listed["play"] != listed["instead"]
        assert listed["steps"] == len(branch.steps) and listed["points"] == list(branch.steps[-1].deal_points or ())
    # a listed line is what branch plays
    status, ph = await control(client, "branch", deal=lines[1]["deal"], line=lines[1]["line"])
    assert status == 200 and ph["line"]["steps"] - ph["line"]["firstStep"] == lines[1]["steps"]


async def test_the_studio_lists_a_match_games_lines_under_its_game(client: Any) -> None:
    match = match_doc((1, 2))
    match["games"][1]["gameData"] = DOC
    names = sorted({n for g in (match["games"][0]["gameData"], DOC) for n in g["metadata"]["players"]})
    match["metadata"]["players"] = [{"id": f"p{i}", "name": n} for i, n in enumerate(names)]
    for g in match["games"]:
        g["players"] = [f"p{names.index(n)}" for n in g["gameData"]["metadata"]["players"]]
    await make_channel(client, doc=match)
    lines = (await (await client.get("/studio/api/channels/t1/timeline", headers=AUTH)).json())["lines"]
    assert [(x["game"], x["deal"], x["line"]) for x in lines] == [(2, 2, 1), (2, 2, 2)]
    status, ph = await control(client, "branch", game=2, deal=2, line=2)
    assert status == 200 and ph["line"]["game"] == 2
