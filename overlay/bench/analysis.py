"""``bench analysis``: the double-dummy solver's speed and the win probability's calibration.

Figures: a whole-deal solve at the first lead (every legal card valued, fresh tables) p50/p99
in ms; the bidding table p50/p99; analyses per second stepping through whole games with one
:class:`engine.analysis.Analyst` (tables reused); and the calibration of the win probability
on games of the project's generator (seeds below the prior's): the Brier score and a
reliability table (ten bins of the predicted chance of team 0, with the observed rate), once
for the public estimate (the clean output's: score, dealer, contract) at each deal's start and
after its call on ``--games`` games, and once for the full model (double-dummy values, the
bidding table) at the bidding's start, the first lead and each trick taken on ``--dd-games``.
The live figure (action to analysis on the page) is not measured here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from engine.analysis import Analyst
from engine.bidtable import bidding_table
from engine.generate import generate_game
from engine.load import load_game
from engine.ruleset import Ruleset
from engine.solve import Solver, position_of
from engine.state import StepKind

__all__ = ["HELP", "add_arguments", "run"]

HELP = "double-dummy solve and bidding-table times, analyses/s over a game, win-probability calibration"

#: ruleset variants the timings and the calibration cycle through
VARIANTS: list[dict[str, Any]] = [{}, {"joker": True}, {"min_rank": 7}, {"allow_no_trump": True, "defend_alone": True}, {"fast_break": True, "loner_lead": "LEFT_OF_LONER"}]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--deals", type=int, default=200, help="deals for the solve and bidding-table timings")
    p.add_argument("--games", type=int, default=10_000, help="generated games for the public estimate's calibration")
    p.add_argument("--dd-games", type=int, default=100, help="generated games for the full model's calibration (a solve per step sampled)")
    p.add_argument("--whole-games", type=int, default=5, help="games analysed step by step for analyses/s")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def _games(first: int, count: int) -> Any:
    for seed in range(first, first + count):
        variant = VARIANTS[seed % len(VARIANTS)]
        doc = generate_game(seed, ruleset=variant or None)
        game = load_game(json.dumps(doc), source=f"gen{seed}")
        yield Ruleset.model_validate(variant), game


def _timings(args: argparse.Namespace) -> dict[str, Any]:
    solve_ms: list[float] = []
    bid_ms: list[float] = []
    for rules, game in _games(0, max(1, args.deals // 8)):
        for state in game.timeline.steps:
            if len(solve_ms) < args.deals and state.kind in (StepKind.DISCARD, StepKind.CALL):
                pos = position_of(state, rules)
                if pos is not None and not pos.winners and not pos.trick_cards:
                    t = time.perf_counter()
                    Solver().analyse(pos)
                    solve_ms.append((time.perf_counter() - t) * 1000)
            if len(bid_ms) < args.deals and state.kind is StepKind.DEAL_START:
                t = time.perf_counter()
                table = bidding_table(state, rules, Solver())
                if table is not None:
                    bid_ms.append((time.perf_counter() - t) * 1000)
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
        "solve_ms_p99": _pct(solve_ms, 0.99),
        "bidding_tables": len(bid_ms),
        "bidding_ms_p50": statistics.median(bid_ms),
        "bidding_ms_p99": _pct(bid_ms, 0.99),
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
    figures["calibration_public"] = dict(_calibrate_public(args.games), games=args.games)
    figures["calibration_full"] = dict(_calibrate_full(args.dd_games), games=args.dd_games)
    figures["action_to_page_ms_p99"] = None
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    return figures
