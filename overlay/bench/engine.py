"""``bench engine``: load (with validation) and replay throughput over the fixture corpus.

Three passes over the same games, each from bytes, validated as ``load_game`` always does:

* ``full``: the whole timeline (a state per step, alternative lines as branches).  The
  timeline's states are built when first read (:mod:`engine.steps`), so this pass pays
  for the replay and one small record per step, not for states nobody reads;
* ``read``: the same, then every state of the timeline and of its branches read once:
  what a reader of every step (the service's director, ``inspect --steps``) pays;
* ``summary``: deal summaries and problems only, no states (``summary_only=True``, what
  ``inspect``, statistics and a database import need).

The passes alternate (full, read, summary, full, ...) ``--repeat`` times on one core; the
median of each is reported, by wall clock and by this process's CPU time.  Aims: the full
pass at least 4x the 315 games/s measured before the deal state machine was rewritten,
the summary pass at least 10,000 deals/s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from engine.load import load_game

from .corpus import SHARED_FIXTURES

__all__ = ["HELP", "add_arguments", "run"]

HELP = "load + validate + replay throughput over the fixture corpus: full timeline and summary-only"


def _corpus(args: argparse.Namespace) -> list[tuple[str, bytes]]:
    files: list[Path] = []
    root = Path(args.corpus) if args.corpus else SHARED_FIXTURES
    if root.exists():
        files = sorted(p for p in root.rglob("*.egn"))
    out = [(p.name, p.read_bytes()) for p in files]
    if not out:
        from engine.generate import generate_game

        out = [(f"gen{i}", json.dumps(generate_game(i)).encode()) for i in range(50)]
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", help="folder of .egn files (default: ../shared/fixtures/egn, else 50 generated games)")
    p.add_argument("--repeat", type=int, default=5, help="timed passes of each kind; the median is reported")


KINDS = ("full", "read", "summary")


def _pass(corpus: list[tuple[str, bytes]], kind: str) -> tuple[float, float, int, int]:
    """One pass over the corpus: wall seconds, CPU seconds, games loaded, deals replayed."""
    games = deals = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    for name, data in corpus:
        try:
            g = load_game(data, source=name, summary_only=kind == "summary")
        except ValueError:
            continue
        if kind == "read":
            for _state in g.timeline.steps:
                pass
            for branch in g.timeline.branches:
                for _state in branch.steps:
                    pass
        games += 1
        deals += len(g.timeline.deals)
    return time.perf_counter() - t0, time.process_time() - c0, games, deals


def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = _corpus(args)
    for kind in KINDS:
        _pass(corpus, kind)  # warm up (imports, caches)
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    cpu: dict[str, list[float]] = {kind: [] for kind in KINDS}
    counts: dict[str, tuple[int, int]] = {}
    for _ in range(max(1, args.repeat)):
        for kind in KINDS:
            seconds, cpu_seconds, games, deals = _pass(corpus, kind)
            times[kind].append(seconds)
            cpu[kind].append(cpu_seconds)
            counts[kind] = (games, deals)
    out: dict[str, Any] = {"files": len(corpus), "repeat": len(times["full"])}
    for kind, samples in times.items():
        med = statistics.median(samples)
        games, deals = counts[kind]
        out[f"{kind}_games"] = games
        out[f"{kind}_deals"] = deals
        out[f"{kind}_seconds_median"] = med
        out[f"{kind}_games_per_s"] = games / med
        out[f"{kind}_deals_per_s"] = deals / med
        # CPU time of this process: steadier than wall time on a machine shared with other work
        cpu_med = statistics.median(cpu[kind])
        out[f"{kind}_cpu_seconds_median"] = cpu_med
        out[f"{kind}_cpu_games_per_s"] = games / cpu_med
        out[f"{kind}_cpu_deals_per_s"] = deals / cpu_med
    return out
