"""``bench engine``: load and replay throughput over the fixture corpus (or generated games)."""

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

HELP = "load + replay throughput over the fixture corpus"


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
    p.add_argument("--repeat", type=int, default=5, help="passes over the corpus; the median is reported")


def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = _corpus(args)
    games = deals = 0
    times: list[float] = []
    for _ in range(max(1, args.repeat)):
        games = deals = 0
        t0 = time.perf_counter()
        for name, data in corpus:
            try:
                g = load_game(data, source=name)
            except ValueError:
                continue
            games += 1
            deals += len(g.timeline.deals)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {
        "files": len(corpus),
        "games": games,
        "deals": deals,
        "seconds_median": med,
        "games_per_s": games / med,
        "deals_per_s": deals / med,
        "repeat": len(times),
    }
