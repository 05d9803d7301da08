"""Alternative lines and the statistics extras in the system Chromium, against the real
service: the OBS page shows the "ALTERNATIVE LINE" banner and the line's marked cards, and
neither once the operator returns to the main line; a refused request leaves the page
drawing; the studio adds the statistics extras and picks whose statistics the lower third
shows, and the preview page draws them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine.load import load_game
from renderer.extras import EXTRA_SIZES
from renderer.linemarks import ALT_COLOUR, BANNER_H, BANNER_W
from renderer.table import PLAY_H, PLAY_W
from renderer.view import ExtraType, default_view
from tests.lines import lined_game
from tests.studio.test_browser import Studio, overlay_page
from tests.support import AUTH, Server, until

pytestmark = pytest.mark.browser

DOC = lined_game()
TL = load_game(json.dumps(DOC), source="lines.egn").timeline
LINE = next(b for b in TL.branches if b.deal == 1 and b.line == 0)
MAGENTA = tuple(int(ALT_COLOUR[i : i + 2], 16) for i in (1, 3, 5))

#: in the page: how many canvas pixels are the line's magenta, inside and outside a box
#: given in 1920x1080 view pixels
COUNT = """([box, rgb]) => {
    const c = document.querySelector('canvas'); const k = c.width / 1920;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let inside = 0, outside = 0;
    for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
        const i = (y * c.width + x) * 4;
        if (d[i + 3] < 250 || Math.abs(d[i] - rgb[0]) > 24 || Math.abs(d[i + 1] - rgb[1]) > 24 || Math.abs(d[i + 2] - rgb[2]) > 24) continue;
        const vx = x / k, vy = y / k;
        if (vx >= box[0] && vx < box[0] + box[2] && vy >= box[1] && vy < box[1] + box[3]) inside++; else outside++;
    }
    return [inside, outside];
}"""


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """The service on a real port with channel ``t1`` playing the lined game, paused at step 3."""
    srv = Server(tmp_path)
    await srv.start()
    await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(DOC))
    await srv.api("POST", "/api/channels/t1/control/pause")
    await srv.api("POST", "/api/channels/t1/control/seek", json={"step": 3})
    yield srv
    await srv.stop()


async def drawn(page: Any, step: int) -> None:
    await page.wait_for_function(f"window.euchreOverlay.state.drawnStep === {step}", timeout=10_000)


def banner_box() -> list[float]:
    v = default_view()
    # its frame's stroke reaches 2 px past the panel
    return [(v.width - BANNER_W) / 2 + v.width / 16 - 3, v.height * 0.05 - 35, BANNER_W + 6, BANNER_H + 6]


def play_box() -> list[float]:
    el = next(e for e in default_view().elements if e.type.value == "play-area")
    return [el.x - 20, el.y - 30, PLAY_W * el.scale + 40, PLAY_H * el.scale + 60]


async def test_the_page_marks_the_line_and_returns_clean(browser: Any, server: Server) -> None:
    page = await overlay_page(browser, server, "program")
    await drawn(page, 3)
    assert await page.evaluate(COUNT, [banner_box(), list(MAGENTA)]) == [0, 0]
    await server.api("POST", "/api/channels/t1/control/branch", params={"deal": "2", "line": "1"})
    await server.api("POST", "/api/channels/t1/control/seek", json={"step": 2})  # three cards of the line down
    first = LINE.parent_step + 1
    await drawn(page, first + 2)
    in_banner, elsewhere = await page.evaluate(COUNT, [banner_box(), list(MAGENTA)])
    assert in_banner > 2000  # the banner's frame and stripes
    in_play, _ = await page.evaluate(COUNT, [play_box(), list(MAGENTA)])
    assert in_play > 1500 and elsewhere == in_play  # the marked cards, on the table only (the banner apart)
    # back to the main line where it left: no banner, no marks
    await server.api("POST", "/api/channels/t1/control/mainline")
    await drawn(page, 3)
    assert await page.evaluate(COUNT, [banner_box(), list(MAGENTA)]) == [0, 0]


async def test_a_refused_line_leaves_the_page_drawing(browser: Any, server: Server) -> None:
    page = await overlay_page(browser, server, "program")
    await drawn(page, 3)
    before = await page.evaluate("() => document.querySelector('canvas').toDataURL()")
    async with aiohttp.ClientSession() as s:
        async with s.post(server.base + "/api/channels/t1/control/branch", params={"deal": "1", "line": "1"}, headers=AUTH) as r:
            assert r.status == 422
            assert "deal 1 has no alternative lines" in (await r.json())["error"]
    await page.wait_for_timeout(300)
    assert await page.evaluate("() => window.euchreOverlay.state.drawnStep") == 3
    assert await page.evaluate("() => document.querySelector('canvas').toDataURL()") == before


async def test_the_studio_adds_the_statistics_extras_and_the_preview_draws_them(browser: Any, server: Server) -> None:
    studio = await Studio.open(browser, server)
    preview = await overlay_page(browser, server, "preview")
    page = studio.page
    labels = {"match-stats": "+ Match statistics", "stats-lower-third": "+ Statistics lower third", "deal-history": "+ Deal history"}
    for kind, label in labels.items():
        await page.click(f"#elements button:text-is('{label}')")
        await page.locator(f"#overlay .box[data-id='{kind}']").wait_for()
    # the extra's form is generated from the schema, like every element's
    await page.click("#elements li[data-id='deal-history'] .name")
    await page.locator("#panel .field[data-path$='extras.2.scale']").wait_for()
    await page.click("#tabs button:text-is('Match')")
    await page.click("#panel button:text-is('E/W team')")
    doc = await server.api("GET", "/api/channels/t1/settings")
    for _ in range(50):
        if doc["match"].get("stats") == "team-1" and len(doc["outputs"]["preview"]["view"]["extras"]) == 3:
            break
        await page.wait_for_timeout(50)
        doc = await server.api("GET", "/api/channels/t1/settings")
    extras = doc["outputs"]["preview"]["view"]["extras"]
    assert [e["type"] for e in extras] == list(labels) and doc["match"]["stats"] == "team-1"

    async def opaque(kind: str) -> bool:
        e = next(x for x in extras if x["type"] == kind)
        w, h = EXTRA_SIZES[ExtraType(kind)]
        js = """([x, y]) => { const c = document.querySelector('canvas'); const k = c.width / 1920;
            return c.getContext('2d').getImageData(Math.floor(x * k), Math.floor(y * k), 1, 1).data[3]; }"""
        # a point on the panel's left edge band (inside the box, off text)
        alpha: int = await preview.evaluate(js, [e["x"] + 6, e["y"] + h / 2])
        return alpha > 200

    for kind in labels:
        await until(lambda kind=kind: opaque(kind), timeout=5.0)  # type: ignore[misc]
    assert studio.errors == [] and studio.dialogs == []


async def test_the_studio_transport_shows_the_line_and_returns_to_the_main_line(browser: Any, server: Server) -> None:
    studio = await Studio.open(browser, server)
    page = studio.page
    assert await page.locator("#mainline").is_hidden()
    await server.api("POST", "/api/channels/t1/control/branch", params={"deal": "2", "line": "1"})
    await page.locator("#mainline").wait_for(state="visible", timeout=10_000)
    assert (await page.text_content("#where") or "").startswith("ALTERNATIVE LINE · deal 2 · line 1")
    assert await page.locator("#scrub").is_disabled()
    await page.click("#mainline")
    await page.locator("#mainline").wait_for(state="hidden", timeout=5_000)
    info = await server.api("GET", "/api/channels/t1")
    assert info["playhead"]["line"] is None and info["playhead"]["step"] == 3
    assert studio.errors == [] and studio.dialogs == []


async def test_the_studio_picks_a_line_puts_it_on_air_and_returns(browser: Any, server: Server) -> None:
    """The studio's transport lists the game's lines (deal, line, where each leaves the main
    line), puts the chosen one on air with the control API (the studio and the program page
    both show it) and MAIN LINE returns."""
    studio = await Studio.open(browser, server)
    page = studio.page
    program = await overlay_page(browser, server, "program")
    await drawn(program, 3)
    options = page.locator("#line-pick option")
    await until(lambda: _count(options, 2), timeout=5.0)
    texts = await options.all_inner_texts()
    second = next(b for b in TL.branches if b.deal == 1 and b.line == 1)
    for text, branch in zip(texts, (LINE, second)):
        trick = branch.steps[0].trick
        assert trick is not None
        assert text.startswith(f"deal 2 \u00b7 line {branch.line + 1} \u00b7 from trick {trick.number + 1}, card {len(trick.cards)}: "), text
        assert "(was " in text
    assert await page.locator("#mainline").is_hidden()
    assert await page.locator("#line-air").inner_text() == "PUT ON AIR"
    # choose line 2 and put it on air
    await page.select_option("#line-pick", label=texts[1])
    await page.click("#line-air")

    async def head() -> dict[str, Any]:
        info: dict[str, Any] = await server.api("GET", "/api/channels/t1")
        return dict(info["playhead"])

    await until(lambda: _on_line(head, 2), timeout=5.0)
    await page.locator("#mainline").wait_for(state="visible")
    assert (await page.locator("#where").inner_text()).startswith("ALTERNATIVE LINE \u00b7 deal 2 \u00b7 line 2")
    assert await page.locator("#line-air").inner_text() == "ON AIR" and await page.locator("#line-air").is_disabled()
    assert "ON AIR" in await page.locator("#line-pick option:checked").inner_text()
    assert await page.locator("#scrub").is_disabled()
    await drawn(program, second.parent_step + 1)
    assert (await program.evaluate(COUNT, [banner_box(), list(MAGENTA)]))[0] > 2000
    # MAIN LINE: back where the main line left, the picker ready again
    await page.click("#mainline")
    await until(lambda: _on_line(head, None), timeout=5.0)
    assert (await head())["step"] == 3
    await page.locator("#mainline").wait_for(state="hidden")
    assert not (await page.locator("#where").inner_text()).startswith("ALTERNATIVE")
    assert await page.locator("#line-air").inner_text() == "PUT ON AIR" and await page.locator("#line-air").is_enabled()
    await drawn(program, 3)
    assert await program.evaluate(COUNT, [banner_box(), list(MAGENTA)]) == [0, 0]
    assert studio.errors == []


async def _count(locator: Any, n: int) -> bool:
    return bool(await locator.count() == n)


async def _on_line(head: Any, line: int | None) -> bool:
    ph = await head()
    return (ph["line"] or {}).get("line") == line if line is not None else ph["line"] is None
