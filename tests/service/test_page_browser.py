"""The overlay page in a real browser: the system Chromium driven by playwright-python.

Few and quick: one browser per test, small pages (1280x720), paused channels.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from typing import Any

import numpy as np
import pytest
from PIL import Image

from engine.generate import generate_game
from tests.support import TOKEN, Server

pytestmark = pytest.mark.browser

#: OBS's default custom CSS for a browser source
OBS_CSS = "body { background-color: rgba(0, 0, 0, 0); margin: 0px auto; overflow: hidden; }"


async def channel_with_game(srv: Server, *, step: int | None, seed: int = 5) -> dict[str, Any]:
    doc = generate_game(seed, deals=1)
    await srv.api("POST", "/api/channels", json={"id": "t1"})
    await srv.api("PUT", "/api/channels/t1/game", data=json.dumps(doc))
    if step is not None:
        await srv.api("POST", "/api/channels/t1/control", json={"op": "pause"})
        await srv.api("POST", "/api/channels/t1/control", json={"op": "seek", "step": step})
    return doc


async def open_page(browser: Any, url: str, *, css: str | None = None) -> tuple[Any, list[str]]:
    page = await browser.new_page(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(url)
    if css:
        await page.add_style_tag(content=css)
    await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.drawnStep !== null", timeout=10_000)
    await page.evaluate("window.euchreOverlay.player.ready")
    return page, errors


async def pixels(page: Any) -> np.ndarray:
    png = await page.screenshot(omit_background=True)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


async def wait_drawn_step(page: Any, step: int, timeout: float = 5.0) -> None:
    await page.wait_for_function(f"window.euchreOverlay.state.drawnStep === {step}", timeout=timeout * 1000)


async def painted(page: Any) -> None:
    """Wait until the browser has presented what the page drew (two animation frames)."""
    await page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


async def settled(page: Any) -> None:
    """Draw the current scene at its end, the page's clock set by hand (``window.renderAt``):
    the picture once every animation has finished, without waiting for it."""
    await page.evaluate("window.renderAt(window.euchreOverlay.current().dur)")
    await painted(page)


async def wait_sent_step(server: Server, step: int, timeout: float = 5.0) -> None:
    """Wait until the server has sent ``step`` to the channel's program page."""
    deadline = time.monotonic() + timeout
    while True:
        status = await server.api("GET", "/api/channels/t1/status")
        if [p["sentStep"] for p in status["outputs"]["program"]["pages"]] == [step]:
            return
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.02)  # polling the server, not waiting out a duration


@pytest.mark.parametrize("css", [None, OBS_CSS], ids=["no-css", "obs-default-css"])
async def test_page_draws_cards_and_leaves_background_transparent(server: Server, browser: Any, css: str | None) -> None:
    await channel_with_game(server, step=12)
    # a 720p show: the program output's size is set, so a page without the token is drawn
    # at it (an unset odd size would share the nearest allowed one and be scaled)
    revision = (await server.api("GET", "/api/channels/t1/settings"))["revision"]
    await server.api("PATCH", "/api/channels/t1/settings", json={"revision": revision, "outputs": {"program": {"width": 1280, "height": 720}}})
    page, errors = await open_page(browser, f"{server.base}/overlay/t1?output=program&width=1280&height=720", css=css)
    await wait_drawn_step(page, 12)
    await painted(page)
    img = await pixels(page)
    assert img.shape == (720, 1280, 4)
    alpha = img[..., 3]
    # background fully transparent: corners, and most of the frame
    for y, x in [(0, 0), (0, 1279), (719, 0), (719, 1279), (360, 20)]:
        assert alpha[y, x] == 0, (y, x, img[y, x])
    assert (alpha == 0).mean() > 0.5
    # card pixels where the view puts the south hand: opaque, mostly light card faces
    scene = await page.evaluate("window.euchreOverlay.player.scene")
    assert scene["w"] == 1280 and scene["h"] == 720
    box = next(e for e in scene["elements"] if e["type"] == "hand-south")
    x0, y0, w, h = (int(box[k]) for k in ("x", "y", "w", "h"))
    region = img[y0 : y0 + h, x0 : x0 + w]
    opaque = region[..., 3] == 255
    assert opaque.mean() > 0.2
    light = (region[..., :3].min(axis=2) > 200) & opaque
    assert light.sum() > 500, "no card faces drawn in the south hand"
    # no scrollbars, nothing overflows
    dims = await page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight, innerWidth, innerHeight]"
    )
    assert dims[0] <= dims[2] and dims[1] <= dims[3]
    assert errors == []


async def test_put_from_a_logger_changes_the_page(server: Server, browser: Any) -> None:
    doc = generate_game(5, deals=1)
    await server.api("POST", "/api/channels", json={"id": "t1"})
    first = {**doc, "deals": [{**doc["deals"][0], "phases": []}]}
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(first))
    page, errors = await open_page(browser, f"{server.base}/overlay/t1?output=preview&width=1280&height=720#token={TOKEN}")
    await wait_drawn_step(page, 0)
    await settled(page)
    before = await pixels(page)
    await page.evaluate("window.euchreOverlay.resume()")
    ack = await server.api("PUT", "/api/channels/t1/game", data=json.dumps(doc))
    assert ack["changed"]
    await page.wait_for_function("window.euchreOverlay.state.drawnStep >= 1", timeout=5000)
    await settled(page)
    after = await pixels(page)
    changed = np.abs(after.astype(int) - before.astype(int)).max(axis=2) > 16
    assert changed.sum() > 200
    assert errors == []


async def test_page_recovers_after_a_server_restart(server: Server, browser: Any) -> None:
    await channel_with_game(server, step=4)
    page, errors = await open_page(browser, f"{server.base}/overlay/t1?width=1280&height=720")
    await wait_drawn_step(page, 4)
    assert await page.evaluate("window.euchreOverlay.state.connects") == 1
    await server.stop()
    await page.wait_for_function("!window.euchreOverlay.state.connected", timeout=5000)
    await page.wait_for_event("websocket", timeout=5000)  # a reconnect attempt, refused
    await server.start()
    t0 = time.monotonic()
    await server.api("POST", "/api/channels/t1/control", json={"op": "seek", "step": 9})
    await page.wait_for_function(
        "window.euchreOverlay.state.connects === 2 && window.euchreOverlay.state.drawnStep === 9", timeout=5000
    )
    assert time.monotonic() - t0 < 2.0
    # while the server was down the page could not connect: Chromium logs those attempts
    assert [e for e in errors if "WebSocket" not in e and "ERR_CONNECTION_REFUSED" not in e] == []


async def test_hidden_then_visible_page_shows_the_current_state(server: Server, browser: Any) -> None:
    await channel_with_game(server, step=3)
    page, errors = await open_page(browser, f"{server.base}/overlay/t1?width=1280&height=720")
    await wait_drawn_step(page, 3)
    cdp = await page.context.new_cdp_session(page)
    # what OBS does to a hidden source: the page stops running (no frames, no tasks)
    await page.evaluate("window.dispatchEvent(new CustomEvent('obsSourceVisibleChanged', {detail: {visible: false}}))")
    await cdp.send("Page.setWebLifecycleState", {"state": "frozen"})
    await server.api("POST", "/api/channels/t1/control", json={"op": "seek", "step": 20})
    await wait_sent_step(server, 20)
    await cdp.send("Page.setWebLifecycleState", {"state": "active"})
    snapshots = await page.evaluate("window.euchreOverlay.state.snapshots")
    t0 = time.monotonic()
    await page.evaluate("window.dispatchEvent(new CustomEvent('obsSourceVisibleChanged', {detail: {visible: true}}))")
    await page.wait_for_function(
        f"window.euchreOverlay.state.snapshots > {snapshots} && window.euchreOverlay.state.drawnStep === 20", timeout=3000
    )
    assert time.monotonic() - t0 < 1.0
    # the picture is the current state at once: the same pixels as a fresh page
    shown = await pixels(page)
    fresh, _ = await open_page(browser, f"{server.base}/overlay/t1?width=1280&height=720")
    await wait_drawn_step(fresh, 20)
    reference = await pixels(fresh)
    diff = np.abs(shown.astype(int) - reference.astype(int)).max(axis=2)
    assert (diff > 8).mean() < 0.001
    assert errors == []
