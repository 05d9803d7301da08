"""``euchre-overlay bench logger``: a scripted person logs whole games through the logger page.

Runs the real server in a subprocess and the logger page (``/logger/{channel}``) in the
system Chromium with touch emulation (a phone in portrait).  The script taps, at a fixed
cadence, the button whose ``data-action`` is the JSON of the next action of a generated
game (engine/generate.py; the hands left out, as a logger without a hole-card camera sees
it), so every tap goes through the page's engine choices, its outbox and the server:

* **pace runs** (``--intervals``, default 0.3 s and 0.15 s): the channel's game must equal
  the game the script meant, deal by deal; taps per deal; tap -> acknowledged (the page's
  own event time to the ack's arrival, p50/p99); the pace achieved (a tap waits until the
  page offers the engine's next choices, so it is at most one per answer); the program output (a second page,
  ``/overlay/{channel}?output=program``, default timing) drawing each action's steps after
  its ack (p50/p99/max, beside the live bound ``timing.live_lag``), and steps it never drew.
* **a dropped network** (``--drop``, default 10 s): mid-deal, the logger page's network is
  cut (playwright's ``context.set_offline``) while the script keeps tapping from the page's
  unchecked pad, then it comes back; 0 actions may be lost or doubled (the server's ``seq``
  equals the script's count and the game equals the intended one), and the page's log says
  how many answers were resent as duplicates.
* **the page watched** (``--watch``, default 10 s): the logger page as a phone of
  ``--watch-dpr`` device pixels per CSS pixel (3) shows it by default, its program frame in
  it, on a channel playing a generated game: Chromium's CPU per second over the watch, and the
  size the frame's page draws at (the frame's size in the phone's pixels, not the output's).

The driver (:class:`Driver`, :func:`intended`, :func:`button_json`, :func:`deal_diff`) is
what ``tests/logger/test_browser.py`` uses too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from engine.actions import actions_of

from .server import chromium_cpu, pct, start_server
from .services import empty_game

__all__ = ["HELP", "add_arguments", "run", "Driver", "intended", "button_json", "deal_diff", "program_lags", "KEY_ORDER"]

HELP = "a scripted logger logs generated games through the logger page: correctness, taps per deal, tap -> ack, program lag, a dropped network"

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: the order of an action's keys as the engine writes them (engine/choices.py), so a
#: button's data-action can be found by its exact text
KEY_ORDER = ("kind", "call", "alone", "aloneDefender", "card", "dealer", "upCard", "playerCards")
#: a phone in portrait, touch emulated
PHONE = {"viewport": {"width": 412, "height": 915}, "has_touch": True, "is_mobile": True, "device_scale_factor": 1}


def button_json(action: dict[str, Any]) -> str:
    """The exact ``data-action`` text of the button that posts ``action`` (compact JSON, the
    engine's key order)."""
    return json.dumps({k: action[k] for k in KEY_ORDER if k in action}, separators=(",", ":"), ensure_ascii=False)


def intended(doc: dict[str, Any], *, hands: bool = False, deals: int | None = None) -> list[dict[str, Any]]:
    """The actions a logger taps for ``doc`` (no ``seq``; without the hands unless ``hands``:
    a logger without a hole-card camera does not see them).  A pass carries no ``alone``
    (the generator writes ``isAlone: false`` on a thrown-in deal: see :func:`deal_diff`)."""
    out = []
    for a in actions_of(doc, deals=deals):
        a = {k: v for k, v in a.items() if k != "seq" and v is not None}
        if a["kind"] == "new_deal" and not hands:
            a.pop("playerCards", None)
        if a.get("call") == "Pass":
            a.pop("alone", None)
        out.append(a)
    return out


def _plain(deal: dict[str, Any], *, hands: bool) -> dict[str, Any]:
    """A deal as a logger records it: no annotations, no ``isAlone: false`` on a thrown-in
    deal, the hands only where the logger entered them."""
    init = dict(deal["initialState"])
    if not hands:
        init.pop("playerCards", None)
    phases = []
    for p in deal["phases"]:
        p = {k: v for k, v in p.items() if k not in ("callAnnotations", "playAnnotations")}
        if p.get("type") == "EUCHRE_BIDDING" and all(c == "Pass" for c in p.get("calls", [])) and p.get("isAlone") is False:
            p.pop("isAlone")
        phases.append(p)
    return {"dealNumber": deal["dealNumber"], "initialState": init, "phases": phases}


def deal_diff(logged: dict[str, Any], meant: dict[str, Any], *, hands: Collection[int] = ()) -> list[int]:
    """The deals (positions) where the logged game differs from the meant one, plus any
    deal one has and the other has not.  ``hands``: the deals whose hands were entered
    (their ``playerCards`` are compared too)."""
    a, b = logged["deals"], meant["deals"]
    out = [i for i, (x, y) in enumerate(zip(a, b)) if _plain(x, hands=i in hands) != _plain(y, hands=i in hands)]
    return out + list(range(min(len(a), len(b)), max(len(a), len(b))))


def program_lags(log: Sequence[dict[str, Any]], drawn: Sequence[dict[str, Any]]) -> tuple[list[float], list[float], int]:
    """For every step an acknowledged action made: when the program page first drew it,
    minus when the page had the ack, and minus the tap; and how many such steps were never
    drawn (a live catch-up may cut ahead over them)."""
    first: dict[int, float] = {}
    for rec in drawn:
        at = rec.get("drawnAt") or rec.get("receivedAt")
        if rec.get("step") is not None and at is not None and rec["step"] not in first:
            first[rec["step"]] = at
    from_ack: list[float] = []
    from_tap: list[float] = []
    missed = 0
    before = 0
    for e in sorted(log, key=lambda e: e["seq"]):
        steps = e.get("steps")
        if steps is None or e.get("duplicate"):
            continue
        for s in range(before, steps):
            if s in first:
                from_ack.append(first[s] - e["ackAt"])
                from_tap.append(first[s] - e["tappedAt"])
            else:
                missed += 1
        before = max(before, steps)
    return from_ack, from_tap, missed


class Driver:
    """A scripted person at a logger page (playwright, async): signs in, picks the first
    dealer, enters hands, taps the buttons of actions at a cadence."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.taps = 0

    async def sign_in(self, base: str, channel: str, token: str, *, program: bool = False) -> None:
        await self.page.goto(f"{base}/logger/{channel}{'' if program else '?program=0'}")
        await self.page.fill("#key", token)
        await self.page.click("#signin button")
        await self.page.wait_for_selector("#choices button.choice")

    async def until(self, js: str, timeout: float = 15.0) -> Any:
        """Poll ``js`` in the page until it is truthy (the page's CSP forbids the string
        predicates of ``wait_for_function``)."""
        end = time.monotonic() + timeout
        while True:
            value = await self.page.evaluate(js)
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"the logger page never said {js}")
            await asyncio.sleep(0.01)

    async def tap_action(self, action: dict[str, Any], *, timeout: float = 15.0) -> None:
        # the selector waits for the enabled button (the page disables its choices while an
        # answer is awaited)
        sel = f"#choices button[data-action='{button_json(action)}']:not([disabled])"
        await self.page.locator(sel).first.tap(timeout=timeout * 1000)
        self.taps += 1

    async def pick_dealer(self, dealer: int) -> None:
        await self.page.locator(f"button.seat-pick[data-dealer='{dealer}']").tap()
        self.taps += 1
        await self.page.wait_for_selector(f"button.seat-pick.on[data-dealer='{dealer}']")

    async def enter_hands(self, hands: Sequence[Sequence[str]]) -> None:
        """Enter the hands a hole-card camera shows, seat by seat (the page moves to the
        next seat after five cards)."""
        await self.page.locator("button.hands-toggle").tap()
        self.taps += 1
        for seat, hand in enumerate(hands):
            for card in hand:
                await self.page.locator(f".deal-tools button[data-card='{card}']").tap()
                self.taps += 1
                await self.page.wait_for_selector(f".deal-tools button[data-card='{card}']", state="detached")

    async def log(
        self, actions: Sequence[dict[str, Any]], *, interval: float, hands: Sequence[Sequence[Sequence[str]]] = (),
        at: Callable[[int], Any] | None = None,
    ) -> None:
        """Tap ``actions`` one every ``interval`` seconds (a fixed cadence: a late answer
        makes the next tap late, never the ones after).  The first deal's dealer is picked;
        ``hands[i]`` (if given) are entered before deal ``i``'s up-card.  ``at(i)`` runs
        before action ``i`` (a network cut...)."""
        start = time.monotonic()
        deal = -1
        for i, act in enumerate(actions):
            if at is not None:
                await at(i)
            await asyncio.sleep(max(0.0, start + i * interval - time.monotonic()))
            if act["kind"] == "new_deal":
                deal += 1
                if deal == 0:
                    await self.pick_dealer(act["dealer"])
                if deal < len(hands) and hands[deal]:
                    await self.enter_hands(hands[deal])
            await self.tap_action(act)

    async def drained(self, timeout: float = 30.0) -> None:
        await self.until("window.euchreLogger.pending() === 0", timeout)


async def _game(session: Any, base: str, channel: str) -> dict[str, Any]:
    async with session.get(f"{base}/api/channels/{channel}/logger/game", headers={**AUTH, "X-Logger": "bench"}) as r:
        assert r.status == 200, await r.text()
        return dict(json.loads(await r.read()))


async def _channel(session: Any, base: str, channel: str, doc: dict[str, Any]) -> None:
    async with session.post(f"{base}/api/channels", json={"id": channel, "settings": {"outputs": {"program": {"width": 1280, "height": 720}}}}) as r:
        assert r.status == 201, await r.text()
    async with session.put(f"{base}/api/channels/{channel}/game", data=json.dumps(empty_game(doc))) as r:
        assert r.status == 200, await r.text()


async def _one(browser: Any, session: Any, base: str, channel: str, doc: dict[str, Any], *, interval: float, drop: float, drop_at: int | None) -> dict[str, Any]:
    """One game logged through a fresh page; figures of the run."""
    await _channel(session, base, channel, doc)
    acts = intended(doc)
    program_ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    program = await program_ctx.new_page()
    await program.goto(f"{base}/overlay/{channel}?output=program&width=1280&height=720&bench=1")
    ctx = await browser.new_context(**PHONE)
    page = await ctx.new_page()
    driver = Driver(page)
    await driver.sign_in(base, channel, TOKEN)
    cut: dict[str, float] = {}

    async def network(i: int) -> None:
        if drop_at is None:
            return
        if i == drop_at:
            await ctx.set_offline(True)
            cut["at"] = time.monotonic()
        elif "at" in cut and "back" not in cut and time.monotonic() - cut["at"] >= drop:
            await ctx.set_offline(False)
            cut["back"] = time.monotonic()

    began = time.monotonic()
    await driver.log(acts, interval=interval, at=network)
    took = time.monotonic() - began
    if "at" in cut and "back" not in cut:
        await asyncio.sleep(max(0.0, drop - (time.monotonic() - cut["at"])))
        await ctx.set_offline(False)
    await driver.drained(60.0)
    log = await page.evaluate("window.euchreLogger.log()")
    last_ack = max(e["ackAt"] for e in log)
    steps = max(e["steps"] or 0 for e in log)
    # the program page reaches the game's last step
    end = time.monotonic() + 30.0
    while time.monotonic() < end:
        drawn = await program.evaluate("window.euchreOverlay.state.drawnStep")
        if drawn is not None and drawn >= steps - 1:
            break
        await asyncio.sleep(0.05)
    caught = await program.evaluate("performance.timeOrigin + performance.now()") - last_ack
    drawn_log = await program.evaluate("window.euchreOverlay.bench()")
    logged = await _game(session, base, channel)
    async with session.get(f"{base}/api/channels/{channel}", headers=AUTH) as r:
        info = await r.json()
    await ctx.close()
    await program_ctx.close()
    from_ack, from_tap, missed = program_lags(log, drawn_log)
    tap_ack = [e["ackAt"] - e["tappedAt"] for e in log if not e["duplicate"]]
    tap_send = [e["sentAt"] - e["tappedAt"] for e in log if not e["duplicate"]]
    seqs = [e["seq"] for e in log]
    return {
        "actions": len(acts),
        "deals": len(doc["deals"]),
        "deals_differing": deal_diff(logged, doc),
        "server_seq": info["game"]["seq"],
        "lost": len(acts) - info["game"]["seq"],
        "doubled": len(seqs) - len(set(seqs)) + max(0, info["game"]["seq"] - len(acts)),
        "resent_duplicates": sum(1 for e in log if e["duplicate"]),
        "taps": driver.taps,
        "taps_per_deal": driver.taps / len(doc["deals"]),
        "interval_achieved_s": took / max(1, len(acts) - 1),
        "tap_to_ack_p50_ms": pct(tap_ack, 50),
        "tap_to_ack_p99_ms": pct(tap_ack, 99),
        "tap_to_request_p50_ms": pct(tap_send, 50),
        "program_lag_from_ack_p50_ms": pct(from_ack, 50),
        "program_lag_from_ack_p99_ms": pct(from_ack, 99),
        "program_lag_from_ack_max_ms": max(from_ack) if from_ack else float("nan"),
        "program_lag_from_tap_p99_ms": pct(from_tap, 99),
        "program_steps_not_drawn": missed,
        "program_last_step_after_last_ack_ms": caught,
        "offline_s": round(cut["back"] - cut["at"], 2) if "back" in cut else (drop if "at" in cut else 0.0),
    }


async def _watch(browser: Any, session: Any, base: str, *, seconds: float, dpr: float) -> dict[str, Any]:
    """The logger page on a phone with its program frame (the page's default) while the
    channel plays: Chromium's CPU per second, and the frame page's canvas."""
    from engine.generate import generate_game

    async with session.post(f"{base}/api/channels", json={"id": "watch"}) as r:
        assert r.status == 201, await r.text()
    async with session.put(f"{base}/api/channels/watch/game", data=json.dumps(generate_game(31, deals=2))) as r:
        assert r.status == 200, await r.text()
    async with session.post(f"{base}/api/channels/watch/control/play", json={}) as r:
        assert r.status == 200, await r.text()
    ctx = await browser.new_context(**{**PHONE, "device_scale_factor": dpr})
    page = await ctx.new_page()
    await Driver(page).sign_in(base, "watch", TOKEN, program=True)
    await page.wait_for_selector("#program iframe")
    await asyncio.sleep(2.0)  # the frame's page loads and takes up the play
    monitor = next(f for f in page.frames if "/overlay/watch" in f.url)
    canvas = await monitor.evaluate("() => { const c = document.querySelector('canvas'); return `${c.width}x${c.height}`; }")
    c0, t0 = chromium_cpu(), time.monotonic()
    await asyncio.sleep(seconds)
    cpu = (chromium_cpu() - c0) / (time.monotonic() - t0)
    await ctx.close()
    return {"watch_cpu_per_s": round(cpu, 3), "watch_s": seconds, "watch_dpr": dpr, "watch_program_canvas": canvas}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=29, help="the generated game's seed (a whole game is logged)")
    p.add_argument("--deals", type=int, default=None, help="log only this many deals of it")
    p.add_argument("--intervals", default="0.3,0.15", help="seconds between taps of each pace run, comma-separated")
    p.add_argument("--drop", type=float, default=10.0, help="seconds the network is cut in the dropped-network run (0: no such run)")
    p.add_argument("--drop-interval", type=float, default=0.3, help="seconds between taps of the dropped-network run")
    p.add_argument("--watch", type=float, default=10.0, help="seconds the logger page is watched, its program frame shown, on a playing channel, for Chromium's CPU (0: not)")
    p.add_argument("--watch-dpr", type=float, default=3.0, help="device pixels per CSS pixel of the watched phone")


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp
    from playwright.async_api import async_playwright

    from engine.generate import generate_game

    from ..browser.chromium import CHROMIUM_ARGS, chromium_path

    doc = generate_game(args.seed, deals=args.deals)
    figures: dict[str, Any] = {"game_deals": len(doc["deals"]), "game_actions": len(intended(doc)), "load_average_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, TOKEN, timeout=30)
        try:
            async with aiohttp.ClientSession(headers=AUTH) as session, async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
                runs: list[tuple[str, float, float, int | None]] = [(f"pace_{x.strip()}", float(x), 0.0, None) for x in args.intervals.split(",") if x.strip()]
                if args.drop > 0:
                    acts = intended(doc)
                    # mid-deal: the tenth action of the second deal (or of the first)
                    starts = [i for i, a in enumerate(acts) if a["kind"] == "new_deal"]
                    mid = (starts[1] if len(starts) > 1 else 0) + 10
                    runs.append(("drop", args.drop_interval, args.drop, min(mid, len(acts) - 1)))
                for n, (name, interval, drop, at) in enumerate(runs):
                    one = await _one(browser, session, base, f"log{n}", doc, interval=interval, drop=drop, drop_at=at)
                    figures.update({f"{name}_{k}": v for k, v in one.items()})
                if args.watch > 0:
                    figures.update(await _watch(browser, session, base, seconds=args.watch, dpr=args.watch_dpr))
                await browser.close()
        finally:
            proc.terminate()
            await proc.wait()
    figures["load_average_after"] = os.getloadavg()[0]
    figures["live_bound_ms"] = 1000.0  # timing.live_lag's default: how far live playback may trail the newest step
    figures["live_goal_p99_ms"] = 1500.0  # bench live's catch-up goal for a fast table (lag_goal_p99_ms)
    return figures


def run(args: argparse.Namespace) -> dict[str, Any]:
    return asyncio.run(_run(args))
