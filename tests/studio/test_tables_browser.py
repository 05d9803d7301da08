"""The studio as a producer runs a tournament with it, in the system Chromium (playwright),
against the real service (issue 23 items 1, 2, 3, 9): make a channel, load a game by the file
input and by dropping files, connect a logger with a feed key (its curl, sent here with
aiohttp), see every table in the overview and the notices; the Outputs tab's preview URL
carries its token; the properties panel fits 1366 and 1600 px windows."""

from __future__ import annotations

import asyncio
import base64
import copy
import dataclasses
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine.cards import JOKER
from engine.codec import encode_condensed
from overlay.service.feed import actions_of
from tests.support import AUTH, TOKEN, Server, empty_game, game, match_doc, until

pytestmark = pytest.mark.browser


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(tmp_path)
    await srv.start()
    yield srv
    await srv.stop()


async def studio(browser: Any, srv: Server, *, width: int = 1500, height: int = 900) -> Any:
    page = await browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    await page.goto(srv.base + "/studio")
    await page.fill("#token", TOKEN)
    await page.click("#signin button")
    await page.wait_for_selector("#app:not([hidden])")
    return page


async def tab(page: Any, name: str) -> None:
    await page.click(f"#tabs button:text-is('{name}')")


async def drop(page: Any, target: str, *files: tuple[str, bytes]) -> None:
    """Drag files over the studio and drop them on ``target`` (real DragEvents with Files)."""
    await page.evaluate(
        """async ([target, files]) => {
            const dt = new DataTransfer();
            for (const [name, b64] of files) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
            const ev = (type, el) => el.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
            ev("dragenter", document.body);
            const el = document.querySelector(target);
            if (!el || el.closest("[hidden]")) throw new Error(`drop target ${target} not shown`);
            ev("dragover", el);
            ev("drop", el);
        }""",
        [target, [[name, base64.b64encode(data).decode()] for name, data in files]],
    )


def egn_bytes(seed: int) -> bytes:
    return json.dumps(game(seed, deals=1)).encode()


async def info(srv: Server, channel: str) -> dict[str, Any]:
    body: dict[str, Any] = await srv.api("GET", f"/api/channels/{channel}")
    return body


async def new_channel(page: Any, name: str) -> None:
    """The studio's *New*: a channel named ``name``, opened."""
    await page.click("#ch-new")
    await page.fill("#ask-input", name)
    await page.click("#ask-ok")
    await wait_js(page, f"document.querySelector('#channel').value === '{name}'")


async def wait_js(page: Any, js: str, timeout: float = 5.0) -> None:
    """Until ``js`` (an expression) is true on ``page`` (the studio's CSP forbids eval, which
    playwright's wait_for_function uses)."""

    async def check() -> bool:
        return bool(await page.evaluate(js))

    await until(check, timeout, every=0.05)


# --------------------------------------------------------------------------- games in


async def test_a_producer_makes_a_channel_and_loads_games_by_picker_and_by_drop(browser: Any, server: Server, tmp_path: Path) -> None:
    page = await studio(browser, server)
    # a server with no channel: the stage says to make one, and what acts on a channel is off
    # (TAKE, the transport and the hotkeys had sent requests for channel "null")
    await page.wait_for_selector("#no-channel:not([hidden])")
    assert await page.is_disabled("#ch-rename") and await page.is_disabled("#ch-delete")
    assert await page.evaluate("document.querySelector('#transport').inert && document.querySelector('#view-tools').inert")
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/null" in r.url else None)
    for key in (" ", "ArrowRight", "t", "l", "g", "1"):
        await page.keyboard.press(key)
    await page.evaluate("new Promise((done) => setTimeout(done, 0))")  # (the handlers' microtasks ran)
    assert asked == [] and await page.locator("#notice").is_hidden() and not page.errors
    await page.click("#no-channel-new")
    await page.fill("#ask-input", "table1")
    await page.click("#ask-ok")
    await wait_js(page, "document.querySelector('#channel').value === 'table1'")
    await page.wait_for_selector("#no-channel", state="hidden")
    assert not await page.evaluate("document.querySelector('#transport').inert") and not await page.is_disabled("#ch-delete")
    await tab(page, "Game")
    await page.wait_for_selector("#panel :text('No game yet.')")
    # the file input
    first = tmp_path / "finals.egn"
    first.write_text(json.dumps(game(3, deals=2)))
    await page.set_input_files("#game-file", str(first))
    await page.wait_for_selector("#panel .done:has-text('finals.egn: loaded')")
    assert (await info(server, "table1"))["game"]["source"] == "finals.egn"
    await page.wait_for_selector("#panel .game-sum:has-text('finals.egn')")
    # Import EGN… (a file's layouts) on a real game points to the Game tab, without "null"
    await page.set_input_files("#legacy-file", str(first))
    said = await (await page.wait_for_selector("#notice:not([hidden])")).inner_text()
    assert said.startswith("finals.egn: no views in this file") and "Game tab" in said and "null" not in said
    # dropped: a binary game appended as the next game, then a match appended to it
    await server.api("POST", "/api/channels/table1/control/pause")
    await server.api("POST", "/api/channels/table1/control/seek", json={"step": 6})
    await tab(page, "Theme")  # a drop from any tab: the result shows in the Game tab
    await drop(page, "#drop-append", ("semi.egnb", encode_condensed(game(4, deals=1))))
    await page.wait_for_selector("#panel .done:has-text('semi.egnb: appended as the next game')")
    assert await page.get_attribute("#tabs button:text-is('Game')", "aria-selected") == "true"
    now = await info(server, "table1")
    assert now["game"]["match"] and len(now["game"]["games"]) == 2 and now["playhead"]["step"] == 6
    # two files at once: appended in order
    await drop(page, "#drop-append", ("night.emn", json.dumps(match_doc((5, 6), deals=1)).encode()), ("late.egn", egn_bytes(7)))
    await wait_js(page, "document.querySelectorAll('#panel .games li').length === 5")
    assert (await info(server, "table1"))["game"]["games"][4]["title"] == "Generated game 7"
    # the match lists its games; the one on air is marked (program shows game 1)
    on_air = await page.eval_on_selector_all("#panel .games li.on-air", "els => els.map(e => e.dataset.game)")
    assert on_air == ["0"]
    await page.click("#panel .games li[data-game='2'] button:text-is('Cue')")
    await until(lambda: _step_is(server, "table1", now["game"]["steps"] + 0, at_least=True), 5.0, every=0.05)
    await page.wait_for_selector("#panel .games li[data-game='2'].on-air", timeout=5000)
    # dropped to replace: a file the engine cannot read, then one it reads with problems
    await drop(page, ".drop-target[data-mode='replace']", ("broken.egn", b'{"fileType": 3'))
    err = page.locator("#panel .game-error")
    await err.wait_for()
    assert "broken.egn: line 1, column 15" in await err.inner_text()
    assert "broken.egn" in await err.locator("table.place td").first.inner_text()
    assert (await info(server, "table1"))["game"]["match"], "the channel kept its match"
    bad = game(5, deals=2)
    tricks = bad["deals"][1]["phases"][-1]["tricks"]
    tricks[2][1] = tricks[0][0]
    await drop(page, ".drop-target[data-mode='replace']", ("bad.egn", json.dumps(bad).encode()))
    await page.wait_for_selector("#panel h2:has-text('Problems the engine found')")
    place = await page.locator("#panel .problems li").first.locator("table.place").inner_text()
    for cell in ("deal\t1", "phase\t1 (TRICK_PLAY)", "trick\t2", "card\t1"):
        assert cell in place, place
    assert (await info(server, "table1"))["game"]["source"] == "bad.egn"
    # the last channel deleted: back to the empty stage
    await page.click("#ch-delete")
    await page.click("#ask-ok")
    await page.wait_for_selector("#no-channel:not([hidden])")
    assert await page.evaluate("document.querySelector('#transport').inert")
    assert not page.errors


async def test_a_redraw_while_a_button_is_pressed_does_not_eat_its_click(browser: Any, server: Server) -> None:
    """The studio redraws its panel on timers and after answers; one between a button's press and
    its release replaced the button, and the click went nowhere (the Cue seen lost under load);
    the overview's cards lost a press on their text the same way."""
    await server.api("POST", "/api/channels", json={"id": "t1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(match_doc((3, 4, 5), deals=1)))
    await server.api("POST", "/api/channels/t1/control/pause")
    page = await studio(browser, server)
    await tab(page, "Game")
    cue = "#panel .games li[data-game='2'] button"  # its Cue
    await page.hover(cue)
    await page.eval_on_selector(cue, "el => { el.dataset.held = 'yes'; }")
    first = (await info(server, "t1"))["game"]["games"][2]["firstStep"]
    await page.mouse.down()
    # the redraws a poll, the tables' refresh or an answer make, while the button is held down
    await page.evaluate("""async () => {
        const { S } = await import("/studio/static/session.js");
        const { renderNotices } = await import("/studio/static/notices.js");
        S.render();
        renderNotices();
    }""")
    assert await page.evaluate("(sel) => document.querySelector(sel).dataset.held === 'yes'", cue), "the pressed button is still the one on the page"
    await page.mouse.up()
    await until(lambda: _step_is(server, "t1", first), 5.0, every=0.05)
    # the redraw held back is made once the press ends: a new button, the game marked on air
    await page.wait_for_selector("#panel .games li[data-game='2'].on-air", timeout=5000)
    assert await page.eval_on_selector(cue, "el => el.dataset.held") is None
    # the overview's cards: their text is redrawn on every refresh, a card is pressed on its text
    await page.keyboard.press("o")
    name = "#overview:not([hidden]) .ov-card[data-channel='t1'] .ov-name"
    await page.hover(name)
    await page.mouse.down()
    await page.evaluate("""async () => { (await import("/studio/static/overview.js")).renderOverview(); }""")
    await page.mouse.up()
    await page.wait_for_selector("#overview", state="hidden", timeout=5000)
    assert not page.errors


async def test_channels_made_and_deleted_elsewhere_follow_in_the_studio(browser: Any, server: Server) -> None:
    """Another studio, the API or the CLI makes or deletes channels: the picker follows, and the
    channel open here, deleted elsewhere, is said and left for another (its frames had waited
    on it, and the notices told the producer to fix a URL in OBS)."""
    for cid in ("t1", "t2"):
        await server.api("POST", "/api/channels", json={"id": cid})
    page = await studio(browser, server)
    await page.select_option("#channel", "t2")
    await wait_js(page, "document.querySelector('#preview').src.includes('/overlay/t2?')")
    await server.api("POST", "/api/channels", json={"id": "t3", "title": "Final"})
    await wait_js(page, "[...document.querySelectorAll('#channel option')].some((o) => o.textContent === 'Final (t3)')")
    assert await page.input_value("#channel") == "t2", "the open channel stays picked"
    await server.api("DELETE", "/api/channels/t2")
    said = await (await page.wait_for_selector("#notice:has-text('was deleted elsewhere')")).inner_text()
    assert said.startswith('Channel "t2" was deleted elsewhere')
    assert await page.eval_on_selector_all("#channel option", "os => os.map((o) => o.value)") == ["t1", "t3"]
    assert await page.input_value("#channel") == "t1"
    await wait_js(page, "document.querySelector('#preview').src.includes('/overlay/t1?')")
    waiting = await server.api("GET", "/studio/api/waiting")
    assert waiting["waiting"] == [], "the studio's own frames are not pages waiting in OBS"
    assert await page.locator("#notices .note").count() == 0
    assert not page.errors


async def test_the_logger_links_carry_an_address_a_tablet_can_open(browser: Any, tmp_path: Path) -> None:
    """``serve`` prints (and a producer opens) the studio at 127.0.0.1; the Logger tab's links
    for the tablet at the table were http://127.0.0.1 too, which a tablet cannot open.  On a
    server listening on the network they carry the machine's address; on one listening on this
    computer only (the default) the tab says a tablet cannot reach it, and how to fix that."""
    from overlay.service.network import network_addresses

    local = Server(tmp_path / "local")
    await local.start()
    await local.api("POST", "/api/channels", json={"id": "t1"})
    page = await studio(browser, local)
    await tab(page, "Logger")
    said = await (await page.wait_for_selector("#reach-local")).inner_text()
    assert "this computer only" in said and "serve --host 0.0.0.0" in said
    assert await page.inner_text("#logger-page") == f"{local.base}/logger/t1"
    await tab(page, "Outputs")
    await page.wait_for_selector("#panel code[data-output='program']")
    assert await page.locator("#panel code[data-output-there]").count() == 0
    await page.close()
    await local.stop()
    addresses = network_addresses("0.0.0.0")
    if not addresses:
        pytest.skip("this machine has no network address besides loopback")
    srv = Server(tmp_path / "network")
    srv.settings = dataclasses.replace(srv.settings, host="0.0.0.0")
    await srv.start()
    try:
        await srv.api("POST", "/api/channels", json={"id": "t1"})
        await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(empty_game(game(3))))
        page = await studio(browser, srv)  # opened at 127.0.0.1, as serve prints it
        await tab(page, "Logger")
        there = f"http://{addresses[0]}:{srv.settings.port}"
        await wait_js(page, f"document.querySelector('#logger-page').textContent === '{there}/logger/t1'")
        assert await page.locator("#reach-local").count() == 0
        assert await page.inner_text("#feed-actions") == f"{there}/api/channels/t1/actions"
        asked: list[Any] = []
        page.on("request", lambda r: asked.append(r.post_data_json) if r.url.endswith("/studio/api/qr") else None)
        await page.fill("#feed-key-label", "north tablet")
        await page.click("#feed-key-make")
        link = await (await page.wait_for_selector("#logger-page-key")).get_attribute("href")
        assert link is not None and link.startswith(f"{there}/logger/t1#key=")
        # and as a QR code for the tablet's camera: the link with its key, drawn
        await wait_js(page, "(() => { const i = document.querySelector('#logger-qr'); return !!i && i.complete && i.naturalWidth > 200; })()")
        assert asked == [{"text": link}]
        tablet = await browser.new_page(viewport={"width": 820, "height": 1180})  # the link opened on the network address
        await tablet.goto(link)
        await tablet.wait_for_selector("#app:not([hidden])")
        assert "key=" not in tablet.url
        await tablet.close()
        # the Outputs tab: the URL for OBS here, and the one for OBS on another computer
        await tab(page, "Outputs")
        await page.wait_for_selector("#panel code[data-output-there='program']")
        assert await page.inner_text("#panel code[data-output='program']") == f"{srv.base}/overlay/t1?output=program"
        assert await page.inner_text("#panel code[data-output-there='program']") == f"{there}/overlay/t1?output=program"
        assert await page.inner_text("#panel code[data-output-there='preview']") == f"{there}/overlay/t1?output=preview#token=•••"
        # and the Stream Deck links, for a deck plugged into another computer
        await tab(page, "Links")
        await page.click("#panel button:text-is('Make a control key')")
        step = await (await page.wait_for_selector("#panel code[data-link-there='step']")).inner_text()
        assert step.startswith(f"{there}/studio/link/t1/step?key=")
        assert not page.errors
    finally:
        await srv.stop()


async def _step_is(srv: Server, channel: str, step: int, *, at_least: bool = False) -> bool:
    ph = (await info(srv, channel))["playhead"]["step"]
    return bool(ph >= step) if at_least else bool(ph == step)


async def _game_tab_with_a_file(browser: Any, server: Server, tmp_path: Path) -> tuple[Any, Path]:
    """Channel t1, a game saved on the server, the studio's Game tab with its path typed in."""
    await server.api("POST", "/api/channels", json={"id": "t1"})
    saved = tmp_path / "live.egn"
    saved.write_text(json.dumps(game(3, deals=1)))
    page = await studio(browser, server)
    await tab(page, "Game")
    await page.fill("#server-path", str(saved))
    return page, saved


async def test_following_a_file_on_the_server_from_the_studio(browser: Any, server: Server, tmp_path: Path) -> None:
    page, saved = await _game_tab_with_a_file(browser, server, tmp_path)
    await page.click("#panel button:text-is('Follow')")
    await page.wait_for_selector("#panel .done:has-text('Following')")
    assert (await info(server, "t1"))["follow"] == str(saved)
    await page.wait_for_selector("#panel p:has-text('Following')")
    await page.fill("#server-path", str(tmp_path / "nowhere" / "x.egn"))
    await page.click("#panel button:text-is('Load once')")
    await page.wait_for_selector("#panel .game-error")


async def test_a_path_typed_while_the_answer_to_follow_comes_back_is_kept(browser: Any, server: Server, tmp_path: Path) -> None:
    """The producer clicks Follow and types the next path before the studio has the answer:
    the panel drawn again with the answer keeps what they typed (it used to put the followed
    path back, so a Load once then loaded the wrong file)."""
    page, saved = await _game_tab_with_a_file(browser, server, tmp_path)
    asked, answer = asyncio.Event(), asyncio.Event()

    async def held(route: Any) -> None:  # the game's report, asked for after the follow
        asked.set()
        await answer.wait()
        await route.continue_()

    await page.route("**/studio/api/channels/t1/game", held)
    await page.click("#panel button:text-is('Follow')")
    await asyncio.wait_for(asked.wait(), 20)
    await page.fill("#server-path", "/next/game.egn")
    answer.set()
    await page.wait_for_selector("#panel .done:has-text('Following')")
    await page.wait_for_timeout(1500)  # the refresh after the answer (a quick GET) and the poll (one a second) have drawn too
    assert await page.input_value("#server-path") == "/next/game.egn"
    assert await page.evaluate("document.activeElement.id") == "server-path"
    assert (await info(server, "t1"))["follow"] == str(saved)
    assert not page.errors


# --------------------------------------------------------------------------- the logger


async def test_a_logger_connects_with_its_feed_key_and_the_studio_sees_it(browser: Any, server: Server) -> None:
    doc = game(5, deals=1)
    await server.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(empty_game(doc)))
    page = await studio(browser, server)
    await tab(page, "Logger")
    assert await page.inner_text("#feed-actions") == f"{server.base}/api/channels/t1/actions"
    assert await page.inner_text("#feed-socket") == f"ws://127.0.0.1:{server.settings.port}/api/channels/t1/feed"
    await page.fill("#feed-key-label", "north tablet")
    await page.click("#feed-key-make")
    key = await (await page.wait_for_selector("#feed-key-value")).inner_text()
    assert key.startswith("efk_")
    curl = await page.inner_text("#feed-curl")
    assert f"Bearer {key}" in curl and '"seq":1' in curl
    # the curl, sent as a logger would (the URL and the header from the studio's text)
    url = curl.split()[3]
    acts = actions_of(doc)
    async with aiohttp.ClientSession() as s:
        for a in acts[:3]:
            async with s.post(url, json=a, headers={"Authorization": f"Bearer {key}"}) as r:
                assert r.status == 200, await r.text()
        async with s.get(f"{server.base}/api/channels/t1/settings", headers={"Authorization": f"Bearer {key}"}) as r:
            assert r.status == 403
    # the set-up's PUT and the three actions
    await page.wait_for_selector("#panel .activity :text('4 taken')", timeout=5000)
    # shown once: leaving the tab forgets the key, the list keeps its label only
    await tab(page, "Game")
    await tab(page, "Logger")
    await page.wait_for_selector("#panel .keys li:has-text('north tablet')")
    assert await page.locator("#feed-key-value").count() == 0
    assert key not in await page.inner_text("#panel")
    # revoked from the studio: the logger is refused
    await page.click("#panel .keys li:has-text('north tablet') button:text-is('Revoke')")
    await page.click("#ask-ok")
    await page.wait_for_selector("#panel .keys li:has-text('No feed key yet.')")
    async with aiohttp.ClientSession() as s:
        async with s.post(url, json=acts[3], headers={"Authorization": f"Bearer {key}"}) as r:
            assert r.status == 403
    assert not page.errors


async def test_a_producer_starts_a_live_game_and_opens_the_logger_page_without_a_terminal(browser: Any, server: Server) -> None:
    """README step 5 in the studio alone: a channel, a new game with its players and rules,
    a feed key, and the logger page opened from the link that carries the key."""
    page = await studio(browser, server)
    await new_channel(page, "table2")
    await tab(page, "Game")
    await page.wait_for_selector("#new-game[open]")  # open by itself on a channel with no game
    await page.fill("#new-title", "Semi-final")
    names = ["Ada Quill", "Bram Oduya", "Cleo Marsh", "Dev Patil"]
    for i, n in enumerate(names[:3]):
        await page.fill(f"#new-player-{i}", n)
    await page.click("#new-game-make")  # a seat without a name is refused in the page
    await page.wait_for_selector("#panel .game-error:has-text('name all four seats')")
    await page.fill("#new-player-3", names[3])
    await page.select_option("#new-preset", "british")
    await page.click("#new-game-make")
    await page.wait_for_selector("#panel .done:has-text('New game: Ada Quill')")
    held = (await info(server, "table2"))["game"]
    assert held["title"] == "Semi-final" and held["deals"] == 0
    # the Logger tab links to the page; with a key just made, a link that signs it in
    await tab(page, "Logger")
    assert await page.get_attribute("#logger-page", "href") == f"{server.base}/logger/table2"
    assert "null" not in await page.inner_text("#panel")
    await page.fill("#feed-key-label", "south tablet")
    await page.click("#feed-key-make")
    key = await (await page.wait_for_selector("#feed-key-value")).inner_text()
    assert await page.get_attribute("#logger-page-key", "href") == f"{server.base}/logger/table2#key={key}"
    async with page.context.expect_page() as opened:
        await page.click("#logger-page-key")
    logger = await opened.value
    # signed in with the key (no sign-in form), the British deck's up-cards (25, the joker too)
    await logger.wait_for_selector("[data-action]", timeout=10_000)
    assert "key=" not in logger.url  # the page takes the key out of its address
    actions = [json.loads(a) for a in await logger.eval_on_selector_all("[data-action]", "els => els.map(e => e.dataset.action)")]
    ups = {a["upCard"] for a in actions if a.get("kind") == "new_deal"}
    assert len(ups) == 25 and JOKER.text in ups, ups
    await logger.click(f"[data-action='{json.dumps(next(a for a in actions if a.get('kind') == 'new_deal'), separators=(',', ':'))}']")
    await until(lambda: _deals(server, "table2"), 5.0, every=0.05)
    await logger.close()
    assert not page.errors


async def _deals(srv: Server, channel: str) -> bool:
    return bool((await info(srv, channel))["game"]["deals"] == 1)


# --------------------------------------------------------------------------- the overview and notices


async def test_every_table_at_a_glance_and_the_notices(browser: Any, server: Server) -> None:
    doc = game(5, deals=2)
    await server.api("POST", "/api/channels", json={"id": "table1", "title": "Table 1"})
    await server.api("PUT", "/api/channels/table1/game", data=json.dumps(doc))
    await server.api("POST", "/api/channels/table1/control/pause")
    await server.api("POST", "/api/channels", json={"id": "table2", "title": "Table 2"})
    await server.api("PUT", "/api/channels/table2/game", data=json.dumps(empty_game(doc)))
    await server.api("POST", "/api/channels", json={"id": "table3", "title": "Table 3"})
    await server.api("PUT", "/api/channels/table3/game", data=json.dumps(game(6, deals=1)))
    # table3's stored settings are refused at the next start (an easing that no longer exists)
    await server.stop()
    db = sqlite3.connect(server.settings.db_path)
    raw = json.loads(db.execute("SELECT settings FROM channels WHERE id = 'table3'").fetchone()[0])
    raw["timing"] = {"card": {"ease": "bounce"}}
    db.execute("UPDATE channels SET settings = ? WHERE id = 'table3'", (json.dumps(raw),))
    db.commit()
    db.close()
    await server.start()
    key = (await server.api("POST", "/api/channels/table2/feed-keys", json={"label": "t2"}))["key"]
    acts = actions_of(doc)
    async with aiohttp.ClientSession() as s:
        for a in acts[:2]:  # a deal started ...
            async with s.post(f"{server.base}/api/channels/table2/actions", json=a, headers={"Authorization": f"Bearer {key}"}) as r:
                assert r.status == 200
        # ... and one action refused
        async with s.post(f"{server.base}/api/channels/table2/actions", json={"seq": 3, "kind": "card", "card": "Zz"}, headers={"Authorization": f"Bearer {key}"}) as r:
            assert r.status == 400
    # OBS: one page on table1's program, one on a misspelt channel
    obs = await browser.new_page(viewport={"width": 1280, "height": 720})
    await obs.goto(f"{server.base}/overlay/table1")
    typo = await browser.new_page(viewport={"width": 1280, "height": 720})
    await typo.goto(f"{server.base}/overlay/tabel1")
    page = await studio(browser, server)
    await page.evaluate("localStorage.setItem('euchre-overlay.stallAfter', '1')")
    await page.reload()  # signed in again from the tab's session storage
    await page.wait_for_selector("#app:not([hidden])")
    await page.keyboard.press("o")
    await page.wait_for_selector("#overview:not([hidden]) .ov-card[data-channel='table3']")
    assert await page.input_value("#ov-stall") == "1"
    # a live thumbnail per channel: the page player drawing the program output
    await wait_js(
        page,
        "[...document.querySelectorAll('.ov-thumb iframe')].every(f => f.contentWindow.euchreOverlay && f.contentWindow.euchreOverlay.state.drawnStep !== null)",
        timeout=10,
    )
    card1 = page.locator(".ov-card[data-channel='table1']")
    card2 = page.locator(".ov-card[data-channel='table2']")
    card3 = page.locator(".ov-card[data-channel='table3']")
    await wait_js(page, "document.querySelector(\".ov-card[data-channel='table2'] .ov-logger\").textContent.includes('quiet')", timeout=8)
    assert "deal 1" in await card1.locator(".ov-game").inner_text()
    # OBS pages per output, the studio's own frames (the thumbnails, preview, program) not counted
    assert await card1.locator(".ov-pages").inner_text() == "program 1 · preview 0 · clean 0"
    assert "during deal 1" in await card2.locator(".ov-logger").inner_text()
    assert "refused action 3 (400" in await card2.locator(".ov-fault").first.inner_text()
    assert "'Zz'" in await card2.locator(".ov-fault").first.inner_text()
    assert "settings refused, on defaults" in await card3.locator(".ov-fault").first.inner_text()
    assert "did you mean table1" in await page.inner_text("#ov-waiting")
    # a card beside a taller one (table2's refusal) keeps its text under its picture, not spread down the card
    gaps = await page.evaluate(
        "[...document.querySelectorAll('.ov-card')].map((c) => c.querySelector('.ov-name').getBoundingClientRect().top - c.querySelector('.ov-thumb').getBoundingClientRect().bottom)"
    )
    heights = await page.evaluate("[...document.querySelectorAll('.ov-card')].map((c) => c.getBoundingClientRect().height)")
    assert len(set(heights)) == 1 and all(0 <= g <= 12 for g in gaps), (gaps, heights)
    # the notices strip: the misspelt page, the quiet logger, the refusal, the refused settings
    strip = await page.inner_text("#notices")
    for needle in ('"tabel1", which does not exist', 'did you mean "table1"', "Table 2 (table2): no logger message", "action 3 was refused", "Table 3 (table3) runs on default settings"):
        assert needle in strip, (needle, strip)
    assert int(await page.inner_text("#notice-count")) >= 4
    # a click on a card opens that channel
    await card2.click()
    await wait_js(page, "document.querySelector('#channel').value === 'table2'")
    assert await page.locator("#overview").is_hidden()
    # a notice can be dismissed
    n = page.locator("#notices .note:has-text('Table 3')")
    await n.locator("button[aria-label='dismiss']").click()
    assert await page.locator("#notices .note:has-text('Table 3')").count() == 0
    assert not page.errors


async def test_a_deal_without_analysis_says_why(browser: Any, server: Server, live_analysis: None) -> None:
    doc = game(5, deals=1)
    for deal in doc["deals"]:
        deal["initialState"].pop("playerCards", None)
    live = copy.deepcopy(doc)
    play = live["deals"][0]["phases"][-1]
    play["tricks"] = play["tricks"][:2]  # the deal is being played: no hands rebuilt yet
    await server.api("POST", "/api/channels", json={"id": "t1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(live))
    doc_settings = await server.api("GET", "/api/channels/t1/settings")
    await server.api("PATCH", "/api/channels/t1/settings", json={"revision": doc_settings["revision"], "analysis": {"enabled": True}})
    await server.api("POST", "/api/channels/t1/control/pause")
    await server.api("POST", "/api/channels/t1/control/seek", json={"step": 6})
    page = await studio(browser, server)
    note = page.locator("#notices .note:has-text('has no analysis from the hands')")
    await note.wait_for(timeout=20_000)
    text = await note.inner_text()
    assert "deal 1" in text and "t1" in text


# --------------------------------------------------------------------------- item 9


async def test_the_copied_preview_url_carries_its_token(browser: Any, server: Server) -> None:
    await server.api("POST", "/api/channels", json={"id": "t1"})
    page = await studio(browser, server)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await tab(page, "Outputs")
    await page.click("#panel button[data-copy='preview']")
    copied = await page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{server.base}/overlay/t1?output=preview#token={TOKEN}"
    assert TOKEN not in await page.inner_text("#panel"), "the token is not shown on screen"
    await page.click("#panel button[data-copy='program']")
    assert await page.evaluate("navigator.clipboard.readText()") == f"{server.base}/overlay/t1?output=program"
    # pasted into OBS (here: a page), the preview draws
    obs = await browser.new_page(viewport={"width": 1280, "height": 720})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(game(3)))
    await obs.goto(copied)
    await obs.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnStep !== null", timeout=10_000)


@pytest.mark.parametrize(("width", "height"), [(1024, 640), (1366, 768), (1600, 768)])
async def test_the_properties_panel_fits_without_sideways_scrolling(browser: Any, server: Server, width: int, height: int) -> None:
    await server.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(game(3)))
    await server.api("POST", "/api/channels/t1/control/pause")  # the layout, not the game: the monitors still
    await server.api("POST", "/api/channels/t1/feed-keys", json={"label": "a logger with a long label " * 2})
    page = await studio(browser, server, width=width, height=height)
    await page.wait_for_selector("#overlay .box[data-id]")
    # on a laptop's screen too, the preview being edited has the most room (a third of the width before the side panels narrowed)
    shown = await page.evaluate("document.querySelector('#frame').getBoundingClientRect().width")
    assert shown >= 0.45 * width, f"the preview is {shown:.0f} px wide in a {width}x{height} window"
    await page.click("#elements li[data-id] .name")
    names = await page.eval_on_selector_all("#tabs button", "bs => bs.map(b => b.textContent)")
    wide = {}
    for name in names:
        await tab(page, name)
        if name == "Links" and await page.locator("#panel button:text-is('Make a control key')").count():
            await page.click("#panel button:text-is('Make a control key')")
        if name == "Logger":
            await page.click("#feed-key-make")
            await page.wait_for_selector("#feed-key-value")
        await page.wait_for_timeout(300)
        sizes = await page.evaluate("(() => { const r = document.querySelector('#right'); return [r.scrollWidth, r.clientWidth]; })()")
        if sizes[0] > sizes[1]:
            wide[name] = sizes
    assert not wide, f"tabs wider than the panel at {width}x{height}: {wide}"


async def test_a_feed_key_list_that_did_not_load_is_asked_again(browser: Any, server: Server) -> None:
    """The Logger tab's keys asked while the server did not answer: the tab said "No feed key
    yet." until the producer left it and came back; it asks again by itself."""
    await server.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await server.api("POST", "/api/channels/t1/feed-keys", json={"label": "north tablet"})
    page = await studio(browser, server)
    failed: list[str] = []

    async def once(route: Any) -> None:
        if route.request.method == "GET" and not failed:
            failed.append(route.request.url)
            await route.abort()
        else:
            await route.continue_()

    await page.route("**/api/channels/t1/feed-keys", once)
    await tab(page, "Logger")
    await page.wait_for_selector("#panel .keys li:has-text('north tablet')", timeout=10_000)
    assert failed
