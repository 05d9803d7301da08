"""Per-action latency of the live game (engine.live) against the feed's old path, by deal.

Run as ``python -m tests.live_bench [--repeat N]`` (``EUCHRE_OVERLAY_PURE=1`` for the
pure engine); prints one JSON object.  For each deal measured (2, 51 and 100 of a
generated 110-deal game, counted from 1), the game is loaded with the deals before it,
then every action of that deal is pushed, each timed alone, ``--repeat`` times over:

* ``push``: :meth:`engine.live.LiveGame.push`;
* ``push+timeline``: the push and the game's timeline, as a feed reads it after each action;
* ``old``: the engine's share of what the feed did before (write the action into the EGN
  JSON, serialise it, load it strictly reusing the previous replay, look for new errors),
  with ``--old``.

Each is timed on the wall clock and, as ``… cpu``, on the thread's CPU clock (what the
push itself costs, whatever else the machine runs).

:func:`push_latency` is the measure itself, engine-only, for ``euchre-overlay bench live``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from engine import native
from engine.generate import generate_game
from engine.live import LiveGame, actions_of
from engine.load import LoadedGame, load_game

SOURCE = "bench.egn"


def _compact(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def _figures(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_us": round(statistics.median(ordered) * 1e6, 1),
        "p99_us": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6, 1),
        "max_us": round(ordered[-1] * 1e6, 1),
        "n": len(ordered),
    }


def _timed(push: Callable[[dict[str, Any]], object], actions: Sequence[dict[str, Any]], out: list[float], cpu: list[float]) -> None:
    clock, own = time.perf_counter, time.thread_time
    for action in actions:
        t0, c0 = clock(), own()
        push(action)
        out.append(clock() - t0)
        cpu.append(own() - c0)


def push_latency(doc: dict[str, Any], deals: Sequence[int] = (2, 51, 100), *, repeat: int = 30, old: bool = False) -> dict[str, Any]:
    """Latency of each action of the deals ``deals`` (from 1) of ``doc``, pushed onto a live
    game holding the deals before: median, p99 and max in microseconds, by deal and path."""
    result: dict[str, Any] = {}
    warm = LiveGame.from_loaded(load_game(_compact({**doc, "deals": doc["deals"][:3]}), source=SOURCE, strict=True))
    for action in actions_of(doc, deals=6)[len(actions_of(doc, deals=3)) :]:
        warm.push(action)  # caches (parsed cards, validators) filled before the first figure
    for number in deals:
        base = {**doc, "deals": doc["deals"][: number - 1]}
        loaded = load_game(_compact(base), source=SOURCE, strict=True)
        start = LiveGame.from_loaded(loaded)
        acts = actions_of(doc, deals=number)[len(actions_of(base)) :]
        figures: dict[str, list[float]] = {name: [] for name in ("push", "push cpu", "push+timeline", "push+timeline cpu")}
        for _ in range(repeat):
            live = start.copy()
            _timed(live.push, acts, figures["push"], figures["push cpu"])
            live = start.copy()

            def push_and_read(action: dict[str, Any], live: LiveGame = live) -> object:
                live.push(action)
                return live.timeline

            _timed(push_and_read, acts, figures["push+timeline"], figures["push+timeline cpu"])
        if old:
            figures["old"], figures["old cpu"] = [], []
            for _ in range(max(1, repeat // 5)):
                _timed(_old_path(loaded), acts, figures["old"], figures["old cpu"])
        result[str(number)] = {name: _figures(samples) for name, samples in figures.items()} | {"actions": len(acts)}
    return result


def _old_path(loaded: LoadedGame) -> Callable[[dict[str, Any]], object]:
    """The feed's path before the live game, engine side (tests/test_engine_incremental.py's oracle)."""
    from tests.test_engine_incremental import feed_write

    state = {"game": loaded}

    def push(action: dict[str, Any]) -> object:
        game = state["game"]
        last = game.timeline.steps[-1] if len(game.timeline.steps) else None
        written = feed_write(game.document.to_json(), last, action)
        new = load_game(_compact(written), source=SOURCE, strict=True, previous=game.timeline)
        seen = {str(p) for p in game.all_problems}
        fresh = [p for p in new.all_problems if p.severity == "error" and str(p) not in seen]
        assert not fresh
        state["game"] = new
        return new

    return push


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--old", action="store_true", help="also time the feed's old path")
    args = parser.parse_args()
    doc = generate_game(31, ruleset={"num_deals": 110}, deals=110)
    status = native.status()
    print(json.dumps({"mode": status.mode, "deals": len(doc["deals"]), "latency": push_latency(doc, repeat=args.repeat, old=args.old)}, indent=1))


if __name__ == "__main__":
    main()
