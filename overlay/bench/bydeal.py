"""Per-action cost by how far into the game the action lands (``bench live``'s ``deal_*`` figures).

A logger action must cost the same at deal 100 as at deal 2.  For each deal measured (2, 51
and 100 of a generated 110-deal game, counted from 1; ``--deals``), a game holding the
deals before it is loaded, then every action of that deal is applied, each timed alone, on
the wall clock and on the thread's CPU clock (what the action itself costs, whatever else
the machine runs):

* ``engine``: :meth:`engine.live.LiveGame.push` and reading the game's timeline after it,
  as the feed does (the engine alone);
* ``service``: :meth:`overlay.service.ingest.Ingest.apply_action` on a channel of a real
  hub over a real SQLite file: the engine's push, the Director, the action logged in the
  store (``synchronous=FULL``; the fsync itself runs in a worker thread after the call and
  is not in these figures), the channel's versions.  Not the scene builds that follow for
  the pages (``bench scale`` counts those in its CPU per action).

The deals take turns round by round (``--deal-rounds``), each round on a fresh game whose
load is collected (``gc.collect``) before the first action, so a slower stretch of a shared
machine falls on every deal alike; a figure is the median over the rounds' actions, and
``*_ratio`` the median of the rounds' ratios of the last deal's median to the first's.
"""

from __future__ import annotations

import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine.generate import generate_game
from engine.live import LiveGame, actions_of
from engine.load import load_game

from ..service.hub import Hub
from ..service.protocol import ActionIn
from ..service.store import Store
from .server import pct

__all__ = ["measure", "push_latency", "service_latency", "bench_game", "DEALS"]

SOURCE = "bench.egn"
#: deals measured by default (counted from 1)
DEALS = (2, 51, 100)


def bench_game(deals: int = 110) -> dict[str, Any]:
    """The generated game the figures are measured on (``deals`` deals, seed 31)."""
    return generate_game(31, ruleset={"num_deals": deals}, deals=deals)


def _compact(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def _split(doc: dict[str, Any], number: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The game before deal ``number`` (from 1), and the actions of that deal (``seq`` from 1)."""
    base = {**doc, "deals": doc["deals"][: number - 1]}
    acts = actions_of(doc, deals=number)[len(actions_of(base)) :]
    return base, [{k: v for k, v in {**a, "seq": i}.items() if v is not None} for i, a in enumerate(acts, 1)]


def _timed(apply: Callable[[Any], object], items: Sequence[Any], wall: list[float], cpu: list[float]) -> list[float]:
    """Apply each item, timed alone; returns this pass's wall times."""
    clock, own = time.perf_counter, time.thread_time
    mine: list[float] = []
    for item in items:
        t0, c0 = clock(), own()
        apply(item)
        t1, c1 = clock(), own()
        mine.append(t1 - t0)
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
    return mine


def _engine_round(doc: dict[str, Any], number: int, wall: list[float], cpu: list[float]) -> float:
    base, acts = _split(doc, number)
    live = LiveGame.from_loaded(load_game(_compact(base), source=SOURCE, strict=True))
    gc.collect()

    def push(action: dict[str, Any]) -> object:
        live.push(action)
        return live.timeline

    return statistics.median(_timed(push, acts, wall, cpu))


def _service_round(doc: dict[str, Any], number: int, folder: Path, wall: list[float], cpu: list[float]) -> float:
    base, acts = _split(doc, number)
    store = Store(folder / f"deal{number}.sqlite3")
    try:
        channel = Hub(store).create("bench")
        channel.ingest.load_game(_compact(base), source=SOURCE)
        actions = [ActionIn.model_validate(a) for a in acts]
        gc.collect()
        return statistics.median(_timed(channel.ingest.apply_action, actions, wall, cpu))
    finally:
        store.close()
        for f in folder.glob(f"deal{number}.sqlite3*"):
            f.unlink()


def _figures(prefix: str, deals: Sequence[int], wall: dict[int, list[float]], cpu: dict[int, list[float]], rounds: list[dict[int, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in deals:
        out[f"{prefix}_deal{n}_median_us"] = round(statistics.median(wall[n]) * 1e6, 1)
        out[f"{prefix}_deal{n}_p99_us"] = round(pct(wall[n], 99) * 1e6, 1)
        out[f"{prefix}_deal{n}_cpu_median_us"] = round(statistics.median(cpu[n]) * 1e6, 1)
    first, last = deals[0], deals[-1]
    out[f"{prefix}_ratio_deal{last}_to_deal{first}"] = round(statistics.median(r[last] / r[first] for r in rounds), 3)
    out[f"{prefix}_ratio_per_round"] = [round(r[last] / r[first], 3) for r in rounds]
    return out


def push_latency(doc: dict[str, Any], deals: Sequence[int] = DEALS, *, rounds: int = 7) -> dict[str, Any]:
    """The engine's push (and timeline) per action of each deal in ``deals``: interleaved
    rounds, medians and p99 in microseconds, and the last deal's ratio to the first's."""
    wall: dict[int, list[float]] = {n: [] for n in deals}
    cpu: dict[int, list[float]] = {n: [] for n in deals}
    per: list[dict[int, float]] = []
    _engine_round(doc, min(6, len(doc["deals"])), [], [])  # caches (parsed cards, validators) filled first
    for r in range(rounds):
        order = deals if r % 2 == 0 else tuple(reversed(deals))
        per.append({n: _engine_round(doc, n, wall[n], cpu[n]) for n in order})
    return _figures("engine", deals, wall, cpu, per)


def service_latency(doc: dict[str, Any], deals: Sequence[int] = DEALS, *, rounds: int = 7) -> dict[str, Any]:
    """The service's work per logger action (``apply_action``) at each deal in ``deals``:
    interleaved rounds, medians and p99 in microseconds, and the last deal's ratio to the first's."""
    wall: dict[int, list[float]] = {n: [] for n in deals}
    cpu: dict[int, list[float]] = {n: [] for n in deals}
    per: list[dict[int, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        _service_round(doc, min(6, len(doc["deals"])), Path(folder), [], [])
        for r in range(rounds):
            order = deals if r % 2 == 0 else tuple(reversed(deals))
            per.append({n: _service_round(doc, n, Path(folder), wall[n], cpu[n]) for n in order})
    return _figures("service", deals, wall, cpu, per)


def measure(deals: Sequence[int] = DEALS, *, rounds: int = 7) -> dict[str, Any]:
    """Both figures on the bench game (as many deals as the last one measured needs, 110 at least)."""
    from engine import native

    doc = bench_game(max(110, max(deals)))
    return {
        "deal_engine_mode": native.status().mode,
        "deal_rounds": rounds,
        **{f"deal_{k}": v for k, v in push_latency(doc, deals, rounds=rounds).items()},
        **{f"deal_{k}": v for k, v in service_latency(doc, deals, rounds=rounds).items()},
    }
