"""The studio's transport as a producer seeks (issue 23 item 4), in the system Chromium
against the real service: a click on deal marker D5 lands on deal 5 (it landed on deal 4:
the marker stood where the slider's value was still deal 4's), and the "go to" box takes a
deal and a trick."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.load import load_game
from tests.studio.test_browser import Studio
from tests.support import Server, game, match_doc, until

pytestmark = pytest.mark.browser

DOC = game(7, deals=6)
STEPS = load_game(json.dumps(DOC), source="g.egn").timeline.steps


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(tmp_path)
    await srv.start()
    await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(DOC))
    await srv.api("POST", "/api/channels/t1/control/pause")
    yield srv
    await srv.stop()


async def _step(srv: Server) -> int:
    return int((await srv.api("GET", "/api/channels/t1"))["playhead"]["step"])


async def _box(page: Any, selector: str) -> dict[str, float]:
    """The element's box on the page, once it has one (``bounding_box`` is ``None`` while the
    element is being redrawn)."""
    found: list[dict[str, float]] = []

    async def laid_out() -> bool:
        box = await page.locator(selector).bounding_box()
        if box is not None:
            found.append(box)
        return box is not None

    await until(laid_out, 5.0)
    return found[-1]


async def test_a_deal_marker_lands_on_its_deal_and_the_box_on_a_trick(browser: Any, server: Server) -> None:
    s = await Studio.open(browser, server)
    page = s.page
    await page.wait_for_selector("#markers .mark[data-deal='5']")
    # the marker stands over the slider where the slider's value is the deal's first step
    # (its box once laid out: the studio redraws the markers as the channel's state comes in)
    box = await _box(page, "#markers .mark[data-deal='5']")
    first5 = next(i for i, st in enumerate(STEPS) if st.deal == 4)
    await page.click("#markers .mark[data-deal='5']")

    async def at(step: int) -> bool:
        return await _step(server) == step

    await until(lambda: at(first5), 5.0)
    assert STEPS[await _step(server)].deal == 4
    await page.wait_for_selector("#markers .mark.here[data-deal='5']")
    # the slider's own value under the marker's left edge is deal 5's too
    scrub = await _box(page, "#scrub")
    frac = (box["x"] + 1 - scrub["x"] - 8) / (scrub["width"] - 16)
    assert STEPS[round(frac * (len(STEPS) - 1))].deal == 4
    # the box: deal 3, trick 2 -> the first card of deal 3's second trick
    await page.fill("#seek-to", "D3 T2")
    await page.press("#seek-to", "Enter")
    deal3 = [i for i, st in enumerate(STEPS) if st.deal == 2]
    taken = [i for i in deal3 if STEPS[i].kind.value == "trick_taken"]
    want = next(i for i in deal3 if i > taken[0] and STEPS[i].kind.value == "card")
    await until(lambda: at(want), 5.0)
    # a deal the game does not have is said, and nothing moves
    await page.fill("#seek-to", "D40")
    await page.press("#seek-to", "Enter")
    await page.wait_for_selector("#notice:has-text('No D40 in this game')")
    assert await _step(server) == want
    assert not s.errors


#: in the program page: the alpha drawn in a box (view pixels of the 1920x1080 view) of its
#: canvas at each animation frame for `ms` milliseconds, once its scene holds a layer (a mix
#: under way).  The studio's monitor draws at the size it is shown: the box is scaled to it.
WATCH = """async ([x0, y0, w0, h0, ms]) => {
    const o = window.euchreOverlay;
    const t0 = performance.now();
    while (!(o.player.scene && o.player.scene.ops.some((op) => op[0] === "ly"))) {
        if (performance.now() - t0 > 5000) return null;
        await new Promise((r) => setTimeout(r, 10));
    }
    const canvas = o.player.canvas, ctx = canvas.getContext("2d"), k = canvas.width / 1920;
    const x = Math.floor(x0 * k), y = Math.floor(y0 * k), w = Math.ceil(w0 * k), h = Math.ceil(h0 * k);
    const out = [];
    const start = performance.now();
    while (performance.now() - start < ms) {
        await new Promise((r) => requestAnimationFrame(r));
        const d = ctx.getImageData(x, y, w, h).data;
        let sum = 0;
        for (let i = 3; i < d.length; i += 4) sum += d[i];
        out.push(sum / (w * h));
    }
    return out;
}"""


async def test_take_with_a_mix_fades_the_program_to_the_new_layout(browser: Any, server: Server) -> None:
    """The producer picks mix, 1.2 s, and presses TAKE: the program page fades the score bug
    in at its new place over that time (a frame mid-way is neither picture)."""
    s = await Studio.open(browser, server)
    page = s.page
    doc = await server.api("GET", "/api/channels/t1/settings")
    schema = await server.api("GET", "/studio/api/schema")
    view = schema["defaults"]["views"]["preview"]
    for e in view["elements"]:
        if e["type"] in ("ns-score", "ew-score"):
            e["x"] += 900
    await server.api("PATCH", "/api/channels/t1/settings", json={"revision": doc["revision"], "outputs": {"preview": {"view": view}}})
    await page.select_option("#take-style", "mix")
    await page.fill("#take-time", "1.2")
    program = next(f for f in page.frames if "output=program" in f.url)
    await program.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnSeq > 0")
    watch = asyncio.ensure_future(program.evaluate(WATCH, [996, 60, 200, 70, 1800]))
    await page.click("#take")
    series = await watch
    assert series is not None, "the program never got the mix"
    start, end = series[0], series[-1]
    assert end > start + 40  # the score bug came in where nothing stood
    between = [v for v in series if start + 5 < v < end - 5]
    assert len(between) >= 8, series  # seen part-way on many frames: a fade, not a cut
    assert all(b >= a - 2 for a, b in zip(series, series[1:])), series  # it only comes in
    doc = await server.api("GET", "/api/channels/t1/settings")
    assert doc["outputs"]["program"]["view"]["elements"] == view["elements"]
    assert not s.errors


async def test_a_rundown_built_and_fired_from_the_studio(browser: Any, server: Server) -> None:
    """The producer adds two cues in the Rundown tab (a player intro on F2, a stinger),
    fires the first by its key and the next by GO: the intro goes on air, the stinger runs
    over the program page."""
    s = await Studio.open(browser, server)
    page = s.page
    await page.click("#tabs button:has-text('Rundown')")
    await page.select_option("#cue-kind", "intro")
    await page.select_option("#cue-seat", "2")
    await page.fill("#cue-name", "Intro North")
    await page.select_option("#cue-key", "F2")
    await page.click("#cue-add")
    await page.wait_for_selector("ol.rundown li[data-cue='cue1']")
    await page.select_option("#cue-kind", "stinger")
    await page.fill("#cue-name", "Sting")
    await page.click("#cue-add")
    await page.wait_for_selector("ol.rundown li[data-cue='cue2']")
    doc = await server.api("GET", "/api/channels/t1/settings")
    assert [(c["id"], c["kind"], c.get("seat"), c.get("hotkey")) for c in doc["rundown"]] == [("cue1", "intro", 2, "F2"), ("cue2", "stinger", None, None)]
    await page.locator("#overlay").focus()
    await page.keyboard.press("F2")

    async def intro_on() -> bool:
        return (await server.api("GET", "/api/channels/t1/settings"))["match"]["intro"] == 2

    await until(intro_on, 5.0)
    program = next(f for f in page.frames if "output=program" in f.url)
    await page.click("#cue-go")
    await page.wait_for_selector("#cue-where:has-text('fired: cue2')")
    await program.wait_for_function(
        "(() => { const s = window.euchreOverlay.player.scene; return !!s && s.ops.some((op) => op[0] === 'rr' && op[1] === 0 && op[2] === 0 && op[3] === s.w && op[4] === s.h); })()",
        timeout=5000,
    )
    assert await page.locator("#cue-go").is_disabled()  # the rundown is over
    assert not s.errors


async def test_in_a_match_the_markers_name_the_games_and_the_box_counts_in_the_game_on_screen(browser: Any, server: Server) -> None:
    """A match's deals count from 1 in each game: a marker where a game starts says G2 (it
    said D1, the same as every game's first deal), the bar says which game is on screen, and
    "D2" in the box is the second deal of that game (it was the first game's), as the control
    API's ``seek?deal=2`` counts; "G3 D2 T1" names another game."""
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(match_doc((1, 2, 3), deals=2)))
    await server.api("POST", "/api/channels/t1/control/pause")
    games = (await server.api("GET", "/api/channels/t1"))["game"]["games"]
    steps = (await server.api("GET", "/studio/api/channels/t1/timeline"))["steps"]

    def deal_start(game: int, deal: int) -> int:
        first = games[game - 1]["firstStep"]
        return next(i for i in range(first, first + games[game - 1]["steps"]) if steps[i]["deal"] == deal - 1)

    async def at(step: int) -> bool:
        return await _step(server) == step

    s = await Studio.open(browser, server)
    page = s.page
    await page.wait_for_selector("#markers .mark.game[data-game='3']")
    labels = await page.eval_on_selector_all("#markers .mark", "ms => ms.map(m => m.textContent)")
    assert labels == ["G1", "D2", "G2", "D2", "G3", "D2"]
    await page.click("#markers .mark[data-game='2']")
    await until(lambda: at(games[1]["firstStep"]), 5.0)
    await page.wait_for_selector("#where:has-text('game 2 of 3 · deal 1 ·')")
    await page.fill("#seek-to", "D2")
    await page.press("#seek-to", "Enter")
    await until(lambda: at(deal_start(2, 2)), 5.0)
    await page.wait_for_selector("#markers .mark.here[data-game='2'][data-deal='2']")
    # the control API counts the same way: deal 1 of the game on screen
    await server.api("POST", "/api/channels/t1/control/seek?deal=1")
    assert await _step(server) == games[1]["firstStep"]
    # another game by its number, a trick in it
    await page.fill("#seek-to", "G3 D2 T1")
    await page.press("#seek-to", "Enter")
    first3 = deal_start(3, 2)
    await until(lambda: at(next(i for i in range(first3, len(steps)) if steps[i]["kind"] == "card")), 5.0)
    await page.wait_for_selector("#where:has-text('game 3 of 3 · deal 2 ·')")
    await page.fill("#seek-to", "G4")
    await page.press("#seek-to", "Enter")
    await page.wait_for_selector("#notice:has-text('No G4 in this match')")
    assert not s.errors
