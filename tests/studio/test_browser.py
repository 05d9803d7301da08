"""The studio page in the system Chromium (playwright-python), against the real service.

Few and quick: one browser per test, paused channels, 1280x720 output pages.  Pixels are read
from the overlay pages' canvases (same page player as OBS shows).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from renderer.view import default_view
from tests.support import AUTH, TOKEN, Server, game, shared_egn, until

pytestmark = pytest.mark.browser

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """The service on a real port with channel ``t1`` paused at step 3 of a two-deal game."""
    srv = Server(tmp_path)
    await srv.start()
    await srv.api("POST", "/api/channels", json={"id": "t1", "title": "Table 1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(game(5, deals=2)))
    await srv.api("POST", "/api/channels/t1/control/pause")
    await srv.api("POST", "/api/channels/t1/control/seek", json={"step": 3})
    yield srv
    await srv.stop()


class Studio:
    """One studio page, signed in, with its console errors and dialogs collected."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        async def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            await d.dismiss()

        page.on("dialog", dialog)

    @classmethod
    async def open(cls, browser: Any, srv: Server) -> Studio:
        page = await browser.new_page(viewport={"width": 1500, "height": 900})
        s = cls(page)
        await page.goto(srv.base + "/studio")
        await page.fill("#token", TOKEN)
        await page.click("#signin button")
        await page.wait_for_selector("#overlay .box[data-id]")
        return s

    async def box(self, element: str) -> dict[str, float]:
        """The element's box on screen (waiting while the editor redraws its boxes)."""
        loc = self.page.locator(f"#overlay .box[data-id='{element}']")
        for _ in range(50):
            await loc.wait_for(state="visible")
            b: dict[str, float] | None = await loc.bounding_box()
            if b is not None:
                return b
            await asyncio.sleep(0.05)
        raise AssertionError(f"the editor never showed {element}'s box")

    async def scale(self) -> float:
        """Screen pixels per view pixel on the preview."""
        k: float = await self.page.evaluate("document.querySelector('#frame').clientWidth / 1920")
        return k

    async def drag(self, element: str, dx: float, dy: float, *, hold: Any = None) -> None:
        """Drag ``element`` by (dx, dy) view pixels."""
        b = await self.box(element)
        k = await self.scale()
        x, y = b["x"] + 10, b["y"] + 10
        m = self.page.mouse
        await m.move(x, y)
        await m.down()
        await m.move(x + dx * k, y + dy * k, steps=6)
        if hold is not None:
            await hold()
        await m.up()



async def overlay_page(browser: Any, srv: Server, output: str) -> Any:
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    await page.goto(f"{srv.base}/overlay/t1?output={output}#token={TOKEN}")
    await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnStep !== null", timeout=10_000)
    return page


async def alpha_at(page: Any, x: float, y: float) -> int:
    """Alpha of the overlay page's canvas at view pixel (x, y) of the 1920x1080 view."""
    js = """([x, y]) => { const c = document.querySelector('canvas'); const k = c.width / 1920;
        return c.getContext('2d').getImageData(Math.round(x * k), Math.round(y * k), 1, 1).data[3]; }"""
    a: int = await page.evaluate(js, [x, y])
    return a


async def scorebug_drawn(page: Any) -> bool:
    """The default view's N/S scorebug has opaque pixels on the page's canvas."""
    return await alpha_at(page, 96 + 150, 54 + 32) > 200


async def one_element_view(srv: Server, x: float, y: float) -> None:
    """The preview shows only the N/S scorebug at (x, y)."""
    doc = await srv.api("GET", "/api/channels/t1/settings")
    view = {"elements": [{"id": "ns-score", "type": "ns-score", "x": x, "y": y}]}
    await srv.api("PATCH", "/api/channels/t1/settings", json={"revision": doc["revision"], "outputs": {"preview": {"view": view}}})


# --------------------------------------------------------------------------- tests


async def test_drag_shows_on_preview_undo_moves_back_take_brings_it_to_program(browser: Any, server: Server) -> None:
    studio = await Studio.open(browser, server)
    preview = await overlay_page(browser, server, "preview")
    program = await overlay_page(browser, server, "program")
    # the N/S scorebug sits at (96, 54), 300x64; move it to the empty lower left (a snap on
    # the way may shift it a few pixels: the probes sit in the middle of the box)
    old, new = (96 + 150, 54 + 32), (96 + 150, 54 + 32 + 640)
    assert await alpha_at(preview, *old) > 200 and await alpha_at(preview, *new) == 0
    await studio.drag("ns-score", 0, 640)
    took = await until(lambda: _moved(preview, old, new))
    assert took < 1.0
    assert await alpha_at(program, *old) > 200, "program changed before Take"
    # undo (Ctrl+Z) moves it back on preview; redo again
    await studio.page.keyboard.press("Control+z")
    await until(lambda: _moved(preview, new, old), timeout=3.0)
    await studio.page.keyboard.press("Control+Shift+z")
    await until(lambda: _moved(preview, old, new), timeout=3.0)
    await studio.page.click("#take")
    await until(lambda: _moved(program, old, new), timeout=3.0)
    # every studio tab renders without a console error
    for tab in ("View", "Theme", "Timing", "Match", "Outputs", "Look", "Links", "Element"):
        await studio.page.click(f"#tabs button:text-is('{tab}')")
    await studio.page.keyboard.press("?")
    assert await studio.page.locator("#help").is_visible()
    await studio.page.keyboard.press("Escape")
    assert studio.errors == [] and studio.dialogs == []


async def _moved(page: Any, gone: tuple[float, float], there: tuple[float, float]) -> bool:
    return await alpha_at(page, *gone) == 0 and await alpha_at(page, *there) > 200


async def test_a_drag_near_the_title_safe_edge_snaps_to_it(browser: Any, server: Server) -> None:
    await one_element_view(server, 500, 300)
    studio = await Studio.open(browser, server)
    # title-safe left edge: 5% of 1920 = 96; let go 5 view px short of it (within the snap distance)
    seen: list[int] = []

    async def guide() -> None:
        seen.append(await studio.page.locator("#overlay .snap.v").count())

    await studio.drag("ns-score", -(500 - 96) + 5, 0, hold=guide)
    assert seen == [1], "no snap guide drawn while dragging"
    doc = await _wait_revision(server, 3)
    el = doc["outputs"]["preview"]["view"]["elements"][0]
    assert el["x"] == 96 and el["y"] == 300, el


async def _wait_revision(srv: Server, revision: int) -> dict[str, Any]:
    for _ in range(50):
        doc: dict[str, Any] = await srv.api("GET", "/api/channels/t1/settings")
        if doc["revision"] >= revision:
            return doc
        await asyncio.sleep(0.05)
    raise AssertionError(f"settings never reached revision {revision}")


async def test_an_invalid_value_shows_the_models_message_and_saves_nothing(browser: Any, server: Server) -> None:
    studio = await Studio.open(browser, server)
    before = await server.api("GET", "/api/channels/t1/settings")
    await studio.page.click("#elements li[data-id='ns-score'] .name")
    field = "#panel .field[data-path$='.scale'] input"
    await studio.page.fill(field, "-2")
    await studio.page.press(field, "Enter")
    msg = studio.page.locator("#panel .field[data-path$='.scale'] .msg")
    await msg.wait_for()
    assert "greater than 0" in await msg.text_content()
    assert await server.api("GET", "/api/channels/t1/settings") == before
    # a colour the executors cannot read, in the theme form
    await studio.page.click("#tabs button:text-is('Theme')")
    field = "#panel .field[data-path='theme.accent'] input[type=text]"
    await studio.page.fill(field, "red")
    await studio.page.press(field, "Enter")
    msg = studio.page.locator("#panel .field[data-path='theme.accent'] .msg")
    await msg.wait_for()
    assert "pattern" in await msg.text_content()
    assert await server.api("GET", "/api/channels/t1/settings") == before


async def test_two_studios_editing_at_once_the_stale_save_is_refused_and_shown(browser: Any, server: Server) -> None:
    a = await Studio.open(browser, server)
    b = await Studio.open(browser, server)
    rev = (await server.api("GET", "/api/channels/t1/settings"))["revision"]
    await a.drag("ns-score", 0, 300)
    saved = await _wait_revision(server, rev + 1)
    ns_y = next(e["y"] for e in saved["outputs"]["preview"]["view"]["elements"] if e["id"] == "ns-score")
    start_y = next(e.y for e in default_view().elements if e.id == "ns-score")
    assert abs(ns_y - (start_y + 300)) < 14  # a snap may shift it a little
    await b.drag("ew-score", 0, 300)
    conflict = b.page.locator("#conflict")
    await conflict.wait_for(state="visible")
    assert f"revision {rev + 1}" in await conflict.text_content()
    doc = await server.api("GET", "/api/channels/t1/settings")
    assert doc["revision"] == rev + 1
    ys = {e["id"]: e["y"] for e in doc["outputs"]["preview"]["view"]["elements"]}
    ew_y = next(e.y for e in default_view().elements if e.id == "ew-score")
    assert ys["ns-score"] == ns_y and ys["ew-score"] == ew_y
    # keeping theirs drops the stale edit; keeping mine re-applies it on the new revision.  The
    # conflict box still shows the first refusal: wait for this edit's own (else the click can
    # land on the first one's Keep mine, which re-applies the 300 px drag)
    first = await conflict.text_content()
    async with b.page.expect_response(lambda r: r.request.method == "PATCH" and r.url.endswith("/settings")) as refused:
        await b.drag("ew-score", 0, 200)
    assert (await refused.value).status == 409
    await b.page.wait_for_function("(was) => { const c = document.querySelector('#conflict'); return !c.hidden && c.textContent !== was; }", arg=first)
    await b.page.click("#conflict button:text-is('Keep mine')")
    doc = await _wait_revision(server, rev + 2)
    ys = {e["id"]: e["y"] for e in doc["outputs"]["preview"]["view"]["elements"]}
    assert ys["ns-score"] == ns_y and abs(ys["ew-score"] - (ew_y + 200)) < 14
    assert a.errors == []


async def test_a_legacy_view_from_an_egn_file_places_every_element_where_the_file_says(browser: Any, server: Server) -> None:
    path = shared_egn() / "examples" / "conversion_examples" / "test_timingsLayouts.egn"
    raw = json.loads(path.read_text())
    legacy = raw["views"][0]["layout"]["elements"]
    studio = await Studio.open(browser, server)
    await studio.page.set_input_files("#legacy-file", str(path))
    await studio.page.locator("#views li").first.wait_for()
    doc = await server.api("GET", "/api/channels/t1/settings")
    placed = {e["id"]: e for e in doc["outputs"]["preview"]["view"]["elements"]}
    assert len(placed) == len(legacy)
    assert doc["cueTimes"] == {k: float(v) for k, v in raw["timings"].items()}  # kept as the file says
    k = await studio.scale()
    frame = await studio.page.locator("#frame").bounding_box()
    for e in legacy:
        got = placed[e["id"]]
        assert (got["x"], got["y"], got["scale"], got["visible"]) == (e["x"], e["y"], e["scale"], e["visible"])
        box = await studio.box(e["id"])
        assert abs(box["x"] - frame["x"] - e["x"] * k) < 1.5 and abs(box["y"] - frame["y"] - e["y"] * k) < 1.5
    assert studio.errors == []


async def test_hotkeys_drive_the_transport_and_a_control_link_needs_no_token(browser: Any, server: Server) -> None:
    studio = await Studio.open(browser, server)
    page = studio.page

    async def head() -> dict[str, Any]:
        info: dict[str, Any] = await server.api("GET", "/api/channels/t1")
        return dict(info["playhead"])

    assert (await head())["playing"] is False
    await page.keyboard.press("ArrowRight")
    await until(lambda: _is(head, "step", 4))
    await page.keyboard.press("ArrowLeft")
    await until(lambda: _is(head, "step", 3))
    await page.keyboard.press("Space")
    await until(lambda: _is(head, "playing", True))
    await page.keyboard.press("Space")
    await until(lambda: _is(head, "playing", False))
    # a Stream Deck link: a plain GET with the control key, no token
    key = (await server.api("POST", "/studio/api/channels/t1/control-key"))["key"]
    step = (await head())["step"]
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{server.base}/studio/link/t1/step?key={key}") as r:
            assert r.status == 200
        async with s.patch(f"{server.base}/api/channels/t1/settings?token={key}", json={"revision": 1, "title": "x"}) as r:
            assert r.status == 401
        async with s.get(f"{server.base}/studio/link/t1/settings?key={key}") as r:
            assert r.status == 403
    assert (await head())["step"] == step + 1
    assert studio.errors == []


async def test_a_stopped_server_is_said_and_a_rotated_token_signs_the_studio_out(browser: Any, server: Server) -> None:
    """The server stops, then comes back with ``euchre-overlay token --rotate``'s new token.
    While it was down the studio said nothing (an action: "Failed to fetch"); with the new token
    every request of it failed on its own (the preview blank, edits refused one by one).  Now
    the status bar says the server is not answering, and since when, until it answers; and a
    refused token takes the studio back to the sign-in form, saying why."""
    studio = await Studio.open(browser, server)
    page = studio.page
    await server.stop()
    reach = await (await page.wait_for_selector("#reach:not([hidden])", timeout=5000)).inner_text()
    assert reach.startswith("SERVER NOT ANSWERING since ")
    await page.keyboard.press("ArrowRight")  # an action meanwhile says what is wrong
    said = await (await page.wait_for_selector("#notice:not([hidden])")).inner_text()
    assert said.startswith("No answer from the server: it is stopped or restarting"), said
    await server.start()  # back: the status bar says nothing more
    await page.wait_for_selector("#reach", state="hidden", timeout=5000)
    await server.stop()
    server.settings = dataclasses.replace(server.settings, token="the-rotated-token")
    await server.start()
    said = await (await page.wait_for_selector("#signin:not([hidden]) #signin-error:has-text('no longer takes the token')", timeout=10_000)).inner_text()
    assert said.startswith("The server no longer takes the token this studio signed in with")
    assert await page.evaluate("sessionStorage.getItem('euchre-overlay.token')") is None
    studio.errors.clear()  # (the refusals that led here: the frames' sockets, the polls)
    await page.fill("#token", "the-rotated-token")
    await page.click("#signin button")
    await page.wait_for_selector("#overlay .box[data-id]")
    assert await page.locator("#signin-error").inner_text() == ""
    assert await page.locator("#reach").is_hidden()
    assert studio.errors == []


async def _is(head: Any, key: str, value: Any) -> bool:
    return bool((await head())[key] == value)


async def test_a_hostile_player_name_shows_as_text_everywhere(browser: Any, server: Server, tmp_path: Path) -> None:
    doc = await server.api("GET", "/api/channels/t1/settings")
    view = {"id": "v", "name": XSS, "elements": [{"id": XSS, "type": "ns-score", "x": 300, "y": 300}]}
    patch = {
        "revision": doc["revision"],
        "title": XSS,
        "match": {"event_title": XSS, "teams": [{"name": XSS}, {"name": "B"}], "players": [{"name": XSS, "line": XSS}, {}, {}, {}]},
        "views": [view],
        "outputs": {"preview": {"view": view}},
    }
    await server.api("PATCH", "/api/channels/t1/settings", json=patch)
    studio = await Studio.open(browser, server)
    page = studio.page
    for tab in ("Element", "View", "Match", "Outputs", "Links"):
        await page.click(f"#tabs button:text-is('{tab}')")
    await page.locator("#views li").first.wait_for()
    assert await page.locator("#views li .name").first.text_content() == XSS
    assert await page.locator("#elements li .name").first.text_content() == XSS
    assert XSS in (await page.locator("#channel option").first.text_content() or "")
    await page.click("#tabs button:text-is('Match')")
    names = await page.locator("#panel input[type=text]").evaluate_all("els => els.map(e => e.value)")
    assert XSS in names
    assert await page.evaluate("document.querySelectorAll('img[src=\"x\"], img:not([src^=\"blob:\"])').length") == 0
    # a photo with a hostile file name: stored by content, shown from a guarded URL
    import io

    from PIL import Image

    photo = tmp_path / f"{XSS}.png"
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), (10, 200, 30)).save(buf, "PNG")
    photo.write_bytes(buf.getvalue())
    await page.set_input_files("#panel .field[data-path='match.players.0.photo'] input[type=file]", str(photo))
    await page.locator("#panel img.thumb[src^='blob:']").wait_for()
    doc = await server.api("GET", "/api/channels/t1/settings")
    assert doc["match"]["players"][0]["photo"].endswith(".png") and "<" not in doc["match"]["players"][0]["photo"]
    assert await page.evaluate("document.querySelectorAll('img[src=\"x\"]').length") == 0
    assert studio.dialogs == [] and studio.errors == []


#: in a monitor frame: its canvas size, and the size it is shown at in device pixels
SHOWN = """() => { const c = document.querySelector('canvas'), r = window.devicePixelRatio || 1;
    return [c.width, c.height, window.innerWidth * r, window.innerHeight * r]; }"""


async def test_the_monitors_draw_at_the_size_they_are_shown(browser: Any, server: Server) -> None:
    """The studio's preview and program frames and the Overview's thumbnails draw the
    1920x1080 outputs at the size the frames have on screen (rounded up to 1/32 of the output),
    and follow the frame when the window grows; an OBS page always draws the output's full size.
    A monitor draws its animations at most 30 times a second."""
    studio = await Studio.open(browser, server)

    def monitor(output: str) -> Any:
        return next((f for f in studio.page.frames if f"output={output}&monitor=1" in f.url), None)

    async def both_attached() -> bool:  # (the editor's boxes can come before the monitors' frames)
        return monitor("preview") is not None and monitor("program") is not None

    await until(both_attached, 5.0)
    frames = {o: monitor(o) for o in ("preview", "program")}
    for output, frame in frames.items():
        await frame.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnStep !== null", timeout=10_000)
        w, h, shown_w, shown_h = await frame.evaluate(SHOWN)
        assert max(shown_w, 1) <= w < 1920 and w <= max(shown_w, shown_h * 16 / 9) + 1920 / 32 + 1, (output, w, shown_w)
        assert abs(w / h - 16 / 9) < 0.02, (output, w, h)
        # the N/S scorebug is drawn (the studio sizes the frame after its first draw, and a
        # resized canvas is blank until the next one)
        await until(lambda: scorebug_drawn(frame), 5.0)
    before = (await frames["preview"].evaluate(SHOWN))[0]
    await studio.page.set_viewport_size({"width": 1900, "height": 1060})
    await frames["preview"].wait_for_function(f"() => document.querySelector('canvas').width > {before}", timeout=5_000)
    w, _, shown_w, _ = await frames["preview"].evaluate(SHOWN)
    assert shown_w <= w < 1920
    await until(lambda: scorebug_drawn(frames["preview"]), 5.0)  # redrawn at the new size
    # the Overview's thumbnails too (their URL asks for 1280x720; the scene is the output's 1920x1080)
    await studio.page.keyboard.press("o")
    await studio.page.wait_for_selector("iframe[src*='width=1280']")
    thumb = next(f for f in studio.page.frames if "width=1280" in f.url)
    await thumb.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnStep !== null", timeout=10_000)
    w, _, shown_w, shown_h = await thumb.evaluate(SHOWN)
    assert shown_w <= w <= max(shown_w, shown_h * 16 / 9) + 1920 / 32 + 1, (w, shown_w)
    obs = await overlay_page(browser, server, "program")  # a 1280x720 window: still the full output
    assert (await obs.evaluate(SHOWN))[:2] == [1920, 1080]
    # a monitor draws its animations at most 30 times a second (an OBS page at the display's rate)
    await server.api("POST", "/api/channels/t1/control/play")
    counts: list[tuple[float, int]] = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < 3.0:
        counts.append((time.monotonic(), await frames["preview"].evaluate("window.euchreOverlay.state.frames")))
        await asyncio.sleep(0.1)
    best = max(n2 - n1 for t1, n1 in counts for t2, n2 in counts if 0 < t2 - t1 <= 1.0)
    assert 5 <= best <= 36, f"the preview monitor drew {best} frames in its busiest second"  # 31 and a scene or two
    assert studio.errors == []
