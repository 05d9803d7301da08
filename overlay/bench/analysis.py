"""``bench analysis``: the double-dummy solver's speed and the win probability's calibration.

Figures: a whole-deal solve at the first lead (every legal card valued, fresh tables) p50/p99
in ms; the bidding table p50/p99; analyses per second stepping through whole games with one
:class:`engine.analysis.Analyst` (tables reused); and the calibration of the win probability
on games of the project's generator (seeds below the prior's): the Brier score and a
reliability table (ten bins of the predicted chance of team 0, with the observed rate), once
for the public estimate (the clean output's: score, dealer, contract) at each deal's start and
after its call on ``--games`` games, and once for the full model (double-dummy values, the
bidding table) at the bidding's start, the first lead and each trick taken on ``--dd-games``.
``--live N`` adds the live figure: a service started as ``euchre-overlay serve`` with live
analysis on, a logger posting N actions of a generated game one by one, and a page socket
(a WebSocket client) timing each action's POST to the arrival of the analysis of the step it
made.  ``--page N`` adds the same in a real browser: the overlay page (the system Chromium,
``?bench=1``) on a channel with analysis turned on in its settings, timing each action's POST
to the moment the page has drawn the analysis layer of the step it made (the page stamps it
after forcing the raster): "action -> analysis drawn on the page" (aim: p99 <= 250 ms), on
actions that make one step (a trick's last card makes two, played one after the other).  Node counts of the solve and CPU times
(``*_cpu_ms``, the process's own CPU time) are reported too: on a shared machine wall-clock
milliseconds include the time the process waits for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from typing import Any

from engine.analysis import Analyst
from engine.bidtable import bidding_table
from engine.generate import generate_game
from engine.load import load_game
from engine.ruleset import Ruleset
from engine.solve import Solver, position_of
from engine.state import StepKind

from .server import KINDS, pct, start_server

__all__ = ["HELP", "add_arguments", "run"]

HELP = "double-dummy solve and bidding-table times, analyses/s over a game, win-probability calibration"

#: ruleset variants the timings and the calibration cycle through
VARIANTS: list[dict[str, Any]] = [{}, {"joker": True}, {"min_rank": 7}, {"allow_no_trump": True, "defend_alone": True}, {"fast_break": True, "loner_lead": "LEFT_OF_LONER"}]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--deals", type=int, default=200, help="deals for the solve and bidding-table timings")
    p.add_argument("--games", type=int, default=10_000, help="generated games for the public estimate's calibration")
    p.add_argument("--dd-games", type=int, default=100, help="generated games for the full model's calibration (a solve per step sampled)")
    p.add_argument("--whole-games", type=int, default=5, help="games analysed step by step for analyses/s")
    p.add_argument("--live", type=int, default=0, help="logger actions for the action -> analysis-on-a-page-socket figure (0: skip)")
    p.add_argument("--page", type=int, default=0, help="logger actions for the action -> analysis-drawn-in-a-real-browser figure (0: skip)")


def _games(first: int, count: int) -> Any:
    for seed in range(first, first + count):
        variant = VARIANTS[seed % len(VARIANTS)]
        doc = generate_game(seed, ruleset=variant or None)
        game = load_game(json.dumps(doc), source=f"gen{seed}")
        yield Ruleset.model_validate(variant), game


def _timings(args: argparse.Namespace) -> dict[str, Any]:
    solve_ms: list[float] = []
    solve_cpu: list[float] = []
    solve_nodes: list[int] = []
    bid_ms: list[float] = []
    bid_cpu: list[float] = []
    for rules, game in _games(0, max(1, args.deals // 8)):
        for state in game.timeline.steps:
            if len(solve_ms) < args.deals and state.kind in (StepKind.DISCARD, StepKind.CALL):
                pos = position_of(state, rules)
                if pos is not None and not pos.winners and not pos.trick_cards:
                    solver = Solver()
                    t, c = time.perf_counter(), time.process_time()
                    solver.analyse(pos)
                    solve_ms.append((time.perf_counter() - t) * 1000)
                    solve_cpu.append((time.process_time() - c) * 1000)
                    solve_nodes.append(solver.nodes)
            if len(bid_ms) < args.deals and state.kind is StepKind.DEAL_START:
                t, c = time.perf_counter(), time.process_time()
                table = bidding_table(state, rules, Solver())
                if table is not None:
                    bid_ms.append((time.perf_counter() - t) * 1000)
                    bid_cpu.append((time.process_time() - c) * 1000)
    per_s: list[float] = []
    for rules, game in _games(500, args.whole_games):
        analyst = Analyst(rules)
        t = time.perf_counter()
        for state in game.timeline.steps:
            analyst.analyse(state)
        per_s.append(len(game.timeline.steps) / (time.perf_counter() - t))
    return {
        "solve_deals": len(solve_ms),
        "solve_ms_p50": statistics.median(solve_ms),
        "solve_ms_p99": pct(solve_ms, 99),
        "solve_cpu_ms_p50": statistics.median(solve_cpu),
        "solve_cpu_ms_p99": pct(solve_cpu, 99),
        "solve_nodes_p50": statistics.median(solve_nodes),
        "solve_nodes_p99": pct([float(n) for n in solve_nodes], 99),
        "bidding_tables": len(bid_ms),
        "bidding_ms_p50": statistics.median(bid_ms),
        "bidding_ms_p99": pct(bid_ms, 99),
        "bidding_cpu_ms_p50": statistics.median(bid_cpu),
        "bidding_cpu_ms_p99": pct(bid_cpu, 99),
        "analyses_per_s_median": statistics.median(per_s),
    }


def _calibration(pairs: list[tuple[float, int]]) -> dict[str, Any]:
    brier = sum((p - o) ** 2 for p, o in pairs) / len(pairs) if pairs else float("nan")
    bins: list[dict[str, Any]] = []
    for b in range(10):
        inside = [(p, o) for p, o in pairs if min(9, int(p * 10)) == b]
        if inside:
            bins.append({"bin": f"{b / 10:.1f}-{(b + 1) / 10:.1f}", "n": len(inside), "predicted": round(sum(p for p, _ in inside) / len(inside), 3), "observed": round(sum(o for _, o in inside) / len(inside), 3)})
    base = sum(o for _, o in pairs) / len(pairs) if pairs else 0.0
    return {"points": len(pairs), "brier": round(brier, 4), "brier_constant": round(base * (1 - base), 4), "reliability": bins}


def _calibrate_public(count: int) -> dict[str, Any]:
    pairs: list[tuple[float, int]] = []
    analysts: dict[Ruleset, Analyst] = {}
    for rules, game in _games(10_000, count):
        winner = game.timeline.winner
        if winner is None:
            continue
        analyst = analysts.setdefault(rules, Analyst(rules))
        steps = game.timeline.steps
        for i, state in enumerate(steps):
            made = state.kind is StepKind.CALL and state.maker is not None and steps[i - 1].maker is None
            if state.kind is StepKind.DEAL_START or made:
                p = analyst.analyse(state, public=True).win_probability
                assert p is not None
                pairs.append((p[0], 1 if winner == 0 else 0))
    return _calibration(pairs)


def _calibrate_full(count: int) -> dict[str, Any]:
    pairs: list[tuple[float, int]] = []
    for rules, game in _games(30_000, count):
        winner = game.timeline.winner
        if winner is None:
            continue
        analyst = Analyst(rules)
        steps = game.timeline.steps
        for i, state in enumerate(steps):
            first_lead = state.kind in (StepKind.DISCARD, StepKind.CALL) and state.maker is not None and (state.kind is StepKind.DISCARD or steps[i - 1].maker is None) and not state.tricks
            if state.kind in (StepKind.DEAL_START, StepKind.TRICK_TAKEN) or first_lead:
                p = analyst.analyse(state).win_probability
                assert p is not None
                pairs.append((p[0], 1 if winner == 0 else 0))
    return _calibration(pairs)


def run(args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    figures = _timings(args)
    if args.games:
        figures["calibration_public"] = dict(_calibrate_public(args.games), games=args.games)
    if args.dd_games:
        figures["calibration_full"] = dict(_calibrate_full(args.dd_games), games=args.dd_games)
    if args.live:
        live = asyncio.run(_live(args.live))
        figures["live_actions"] = len(live)
        figures["action_to_analysis_ms_p50"] = statistics.median(live) if live else None
        figures["action_to_analysis_ms_p99"] = pct(live, 99) if live else None
    if args.page:
        page = asyncio.run(_page(args.page))
        drawn = page["drawn"]
        figures["page_actions"] = len(drawn)
        figures["action_to_analysis_drawn_ms_p50"] = statistics.median(drawn) if drawn else None
        figures["action_to_analysis_drawn_ms_p99"] = pct(drawn, 99) if drawn else None
        # where the time goes: the step's scene on the page, the analysis message on the page,
        # and the server's time from the scene to the analysis message (worker + layer)
        for name, values in (("action_to_scene_received", page["scene"]), ("action_to_analysis_received", page["received"]), ("scene_to_analysis_server", page["took"])):
            figures[f"{name}_ms_p50"] = statistics.median(values) if values else None
            figures[f"{name}_ms_p99"] = pct(values, 99) if values else None
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    return figures


TOKEN = "bench-analysis"


async def _live(count: int) -> list[float]:
    """Milliseconds from a logger action's POST to its step's analysis on a page socket."""
    import aiohttp

    from overlay.service.feed import actions_of

    doc = generate_game(31, deals=6)
    empty = {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}
    actions = actions_of(doc)[:count]
    out: list[float] = []
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, TOKEN, env={"EUCHRE_OVERLAY_ANALYSIS": "1"}, timeout=30)
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with aiohttp.ClientSession(headers=headers) as session:
                async with session.post(f"{base}/api/channels", json={"id": "an"}) as r:
                    assert r.status == 201, await r.text()
                async with session.put(f"{base}/api/channels/an/game", data=json.dumps(empty)) as r:
                    assert r.status == 200, await r.text()
                url = base.replace("http", "ws", 1) + "/ws/overlay/an?output=preview"
                async with session.ws_connect(url) as ws:
                    for i, action in enumerate(actions):
                        t0 = time.perf_counter()
                        async with session.post(f"{base}/api/channels/an/actions", json={"seq": i + 1, **action}) as r:
                            assert r.status == 200, await r.text()
                        step = None
                        while True:
                            msg = json.loads((await ws.receive(timeout=60)).data)
                            if msg["type"] == "scene" and msg.get("step") is not None:
                                step = msg["step"] if step is None or msg["step"] > step else step
                            if msg["type"] == "analysis" and step is not None and msg["step"] >= step:
                                break
                        if i >= 3:  # the first ones start the worker and fit the prior
                            out.append((time.perf_counter() - t0) * 1000)
                        await asyncio.sleep(0.3)
        finally:
            proc.terminate()
            await proc.wait()
    return out


async def _page(count: int) -> dict[str, list[float]]:
    """Milliseconds from a logger action's POST to the analysis layer of its step drawn by the
    overlay page in the system Chromium; and the server's time per analysis (``tookMs``)."""
    import aiohttp
    from playwright.async_api import async_playwright

    from overlay.browser.chromium import CHROMIUM_ARGS, chromium_path
    from overlay.service.feed import actions_of

    doc = generate_game(31, deals=6)
    empty = {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}
    actions = actions_of(doc)[:count]
    out: list[float] = []
    took: list[float] = []
    got: list[float] = []
    shown: list[float] = []
    with tempfile.TemporaryDirectory() as data:
        proc, base = await start_server(data, TOKEN, timeout=30)
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with aiohttp.ClientSession(headers=headers) as session, async_playwright() as pw:
                async with session.post(f"{base}/api/channels", json={"id": "an"}) as r:
                    assert r.status == 201, await r.text()
                async with session.put(f"{base}/api/channels/an/game", data=json.dumps(empty)) as r:
                    assert r.status == 200, await r.text()
                # analysis on in the channel's settings; steps short, so that each action's
                # step is on air at once (the figure is the analysis's, not the playback pace)
                fast = {kind: {"run_time": 0.2, "hold": 0.05} for kind in KINDS}
                async with session.get(f"{base}/api/channels/an/settings") as g:
                    rev = (await g.json())["revision"]
                patch = {"revision": rev, "analysis": {"enabled": True}, "timing": fast}
                async with session.patch(f"{base}/api/channels/an/settings", json=patch) as r:
                    assert r.status == 200, await r.text()
                browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
                page = await browser.new_page(viewport={"width": 1920, "height": 1080})
                await page.goto(f"{base}/overlay/an?output=program&bench=1")
                await page.wait_for_function("window.euchreOverlay && window.euchreOverlay.state.connected", timeout=30_000)
                steps = 0
                for i, action in enumerate(actions):
                    t0 = time.time() * 1000
                    async with session.post(f"{base}/api/channels/an/actions", json={"seq": i + 1, **action}) as r:
                        assert r.status == 200, await r.text()
                        before, steps = steps, (await r.json())["steps"]
                        step = steps - 1
                    await page.wait_for_function(f"window.euchreOverlay.state.analysisStep === {step}", timeout=60_000)
                    log = await page.evaluate("window.euchreOverlay.analysisBench()")
                    last = next(e for e in reversed(log) if e["step"] == step)
                    scenes = await page.evaluate("window.euchreOverlay.bench()")
                    scene = next((e for e in reversed(scenes) if e["step"] == step), None)
                    # the first ones start the worker and fit the prior; an action that made
                    # two steps (a trick's last card: the card, then the trick taken) shows its
                    # last step after the first one's run time: not counted
                    if i >= 3 and steps - before == 1:
                        out.append(last["drawnAt"] - t0)
                        took.append(float(last["tookMs"]))
                        got.append(last["receivedAt"] - t0)
                        if scene is not None:
                            shown.append(scene["receivedAt"] - t0)
                    await asyncio.sleep(0.4)  # the step (and its layer's motion) is over
                await browser.close()
        finally:
            proc.terminate()
            await proc.wait()
    return {"drawn": out, "took": took, "received": got, "scene": shown}
