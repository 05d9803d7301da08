"""``bench stats``: what the statistics extras cost per step (the statistics of the game up
to the step, cached per game, and the scene with the extras), and what putting an
alternative line on air costs (building its line game)."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from .timing import median_ms, one_core

__all__ = ["HELP", "add_arguments", "run"]

HELP = "µs per step for the match statistics (uncached and cached per game), ms for a scene with the statistics extras and to put a line on air"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int, default=12, help="generated games to step through (default 12)")
    p.add_argument("--deals", type=int, default=10, help="deals per game (default 10)")


def _pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    with one_core():
        return _run(args)


def _run(args: argparse.Namespace) -> dict[str, Any]:
    from engine.generate import generate_game
    from engine.load import load_game
    from engine.stats import match_stats
    from renderer.extras import build_broadcast_scene
    from renderer.matchdata import MatchData
    from renderer.statboard import StatsBook
    from renderer.view import Extra, ExtraType, default_view

    from ..service.branching import line_game
    from ..service.feed import load_bytes

    games = [load_game(json.dumps(generate_game(100 + i, deals=max(1, int(args.deals)))), source="bench").timeline for i in range(max(1, int(args.games)))]
    plain_us: list[float] = []
    cold_us: list[float] = []
    hot_us: list[float] = []
    computed = steps = 0
    for tl in games:
        book = StatsBook(tl)
        for step in range(len(tl.steps)):
            t0 = time.perf_counter()
            match_stats(tl, step=step)
            plain_us.append((time.perf_counter() - t0) * 1e6)
            t0 = time.perf_counter()
            book.at(step)
            cold_us.append((time.perf_counter() - t0) * 1e6)
        for step in range(len(tl.steps)):
            t0 = time.perf_counter()
            book.at(step)
            hot_us.append((time.perf_counter() - t0) * 1e6)
        computed += book.computed
        steps += len(tl.steps)
    # a scene with the three statistics extras against the same scene without them
    tl = games[0]
    state = tl.steps[tl.deals[len(tl.deals) // 2].first_step + 10]
    extras = (
        Extra(id="s", type=ExtraType.MATCH_STATS, x=410, y=250),
        Extra(id="l", type=ExtraType.STATS_LOWER_THIRD, x=460, y=880),
        Extra(id="d", type=ExtraType.DEAL_HISTORY, x=340, y=700),
    )
    view = default_view().model_copy(update={"extras": extras})
    match = MatchData(stats="team-0")
    stats = StatsBook(tl).at(state.step)

    with_ms = median_ms(lambda: build_broadcast_scene(state, view, match=match, stats=stats, size=(1920, 1080)), 60)
    without_ms = median_ms(lambda: build_broadcast_scene(state, default_view(), match=match, size=(1920, 1080)), 60)
    # putting a line on air: the line game of a branch (the main line up to it, then the line)
    doc = generate_game(100, deals=max(2, int(args.deals)))
    deal = doc["deals"][1]
    calls = deal["phases"][0]["calls"] if deal["phases"] else []
    tricks = deal["phases"][1]["tricks"] if len(deal["phases"]) > 1 else []
    line_ms = None
    if len(tricks) >= 4:
        deal["alternativeLines"] = [{"branchIndex": len(calls) + 3 * len(tricks[0]), "phases": [{"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": tricks[3:][::-1]}]}]
        loaded = load_bytes(json.dumps(doc).encode(), source="bench.egn", strict=False)
        branch = loaded.timeline.branches[0]
        line_ms = median_ms(lambda: line_game(loaded, loaded.parts[0], branch), 60)
    return {
        "games": len(games),
        "steps": steps,
        "stats_uncached_us_p50": round(statistics.median(plain_us), 1),
        "stats_uncached_us_p99": round(_pct(plain_us, 0.99), 1),
        "stats_first_pass_us_p50": round(statistics.median(cold_us), 2),
        "stats_first_pass_us_p99": round(_pct(cold_us, 0.99), 1),
        "stats_cached_us_p50": round(statistics.median(hot_us), 2),
        "stats_cached_us_p99": round(_pct(hot_us, 0.99), 2),
        "stats_computed_per_game": round(computed / len(games), 1),
        "scene_with_stats_extras_ms": round(with_ms, 3),
        "scene_without_ms": round(without_ms, 3),
        "line_on_air_ms": None if line_ms is None else round(line_ms, 3),
    }
