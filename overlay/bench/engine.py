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
median of each is reported, by wall clock and by this process's CPU time.  ``mode`` says
which engine these passes timed (``compiled``: the mypyc build, see :mod:`engine.native`;
``pure``).  When a compiled build is usable, two worker processes then time the same passes,
one compiled and one pure (``EUCHRE_OVERLAY_PURE=1``), taking turns pass by pass (the side
that goes first alternating by round): ``pure_*`` are the pure worker's medians, and
``compiled_vs_pure_<kind>`` the median over the rounds of the two workers' paired CPU times
(pure / compiled: above 1 when compiled is faster; ``..._wall`` by wall clock).  Aims: the
full pass at least 4x the 315 games/s measured before the deal state machine was rewritten,
the summary pass at least 10,000 deals/s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from engine import native
from engine.load import load_game

from .corpus import SHARED_FIXTURES

__all__ = ["HELP", "add_arguments", "run", "serve"]

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
    out: dict[str, Any] = {"files": len(corpus), "repeat": len(times["full"]), "mode": native.mode()}
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
    out.update(_compiled_vs_pure(args))
    return out


Sample = tuple[float, float, int, int]  # what :func:`_pass` returns


class _Worker:
    """A process running :func:`serve` in one mode: it times a pass of the kind it is sent."""

    def __init__(self, corpus: str | None, *, pure: bool) -> None:
        env = {k: v for k, v in os.environ.items() if k != native.PURE_ENV}
        if pure:
            env[native.PURE_ENV] = "1"
        code = "from overlay.bench.engine import serve; serve()"
        self.proc = subprocess.Popen([sys.executable, "-c", code, json.dumps(corpus)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        hello = self._answer()
        self.mode: str = hello["mode"]
        self.detail: str = hello["detail"]

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    def _answer(self) -> Any:
        line = self._pipes()[1].readline()
        if not line:
            raise RuntimeError(f"bench engine: a worker stopped (exit code {self.proc.wait()})")
        return json.loads(line)

    def time(self, kind: str) -> Sample:
        stdin = self._pipes()[0]
        stdin.write(kind + "\n")
        stdin.flush()
        wall, cpu, games, deals = self._answer()
        return float(wall), float(cpu), int(games), int(deals)

    def close(self) -> None:
        self._pipes()[0].close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def serve() -> None:
    """A worker of the compiled-vs-pure comparison: loads the corpus named by its argument
    (JSON: a folder or null), warms up, says its mode in one JSON line, then times one pass
    per kind read from stdin and answers each with a JSON line, until stdin closes."""
    corpus = _corpus(argparse.Namespace(corpus=json.loads(sys.argv[1])))
    for kind in KINDS:
        _pass(corpus, kind)
    status = native.status()
    print(json.dumps({"mode": status.mode, "detail": status.detail}), flush=True)
    for line in sys.stdin:
        print(json.dumps(_pass(corpus, line.strip())), flush=True)


def _compiled_vs_pure(args: argparse.Namespace) -> dict[str, Any]:
    """``pure_*`` figures and ``compiled_vs_pure_*`` ratios from two workers taking turns."""
    workers = {"compiled": _Worker(args.corpus, pure=False), "pure": _Worker(args.corpus, pure=True)}
    try:
        if workers["compiled"].mode != "compiled":
            return {"compiled_vs_pure": f"not measured: no usable compiled build ({workers['compiled'].detail})"}
        samples: dict[str, dict[str, list[Sample]]] = {side: {kind: [] for kind in KINDS} for side in workers}
        for r in range(max(1, args.repeat)):
            order = ("compiled", "pure") if r % 2 == 0 else ("pure", "compiled")
            for kind in KINDS:
                for side in order:
                    samples[side][kind].append(workers[side].time(kind))
    finally:
        for worker in workers.values():
            worker.close()
    out: dict[str, Any] = {}
    for kind in KINDS:
        pure, compiled = samples["pure"][kind], samples["compiled"][kind]
        _, _, games, deals = pure[-1]
        wall = statistics.median(s[0] for s in pure)
        cpu = statistics.median(s[1] for s in pure)
        out[f"pure_{kind}_games_per_s"] = games / wall
        out[f"pure_{kind}_deals_per_s"] = deals / wall
        out[f"pure_{kind}_cpu_games_per_s"] = games / cpu
        out[f"pure_{kind}_cpu_deals_per_s"] = deals / cpu
        # each round's two passes ran back to back, so their ratio shares that moment's load
        out[f"compiled_vs_pure_{kind}"] = statistics.median(p[1] / c[1] for p, c in zip(pure, compiled))
        out[f"compiled_vs_pure_{kind}_wall"] = statistics.median(p[0] / c[0] for p, c in zip(pure, compiled))
    return out
