"""``euchre-overlay inspect FILE``: replay a game and print it deal by deal (or as JSON)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from engine.load import LoadedGame, LoadedMatch, load_any, load_game
from engine.state import DealSummary, team_of
from overlay.cli import bench_target

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo" / "demo.egn"


def register(sub: Any) -> None:
    p = sub.add_parser("inspect", help="replay an EGN game and print every deal (trick winners, points, score)")
    p.add_argument("file", nargs="?", default=str(DEMO), help="a .egn, .egnb or .emn file (default: the bundled demo game)")
    p.add_argument("--json", action="store_true", help="print the replay as JSON (the contract in DESIGN.md)")
    p.add_argument("--strict", action="store_true", help="refuse any schema problem instead of repairing it")
    p.add_argument("--steps", action="store_true", help="also list every step of the timeline")
    p.set_defaults(func=run)


def read_game(path: str, *, strict: bool) -> LoadedGame:
    data = Path(path).read_bytes()
    return load_game(data, source=Path(path).name, strict=strict)


def run(args: argparse.Namespace) -> int:
    loaded = load_any(Path(args.file).read_bytes(), source=Path(args.file).name, strict=args.strict)
    games = loaded.games if isinstance(loaded, LoadedMatch) else (loaded,)
    for game in games:
        for problem in game.all_problems:
            print(f"warning: {problem}", file=sys.stderr)
    if args.json:
        # a game prints the contract; a match prints {"games": [contract, ...]}
        out = games[0].timeline.to_json() if not isinstance(loaded, LoadedMatch) else {"games": [g.timeline.to_json() for g in games]}
        print(json.dumps(out, ensure_ascii=False))
        return 0
    for number, game in enumerate(games):
        if isinstance(loaded, LoadedMatch):
            print(f"{'' if number == 0 else chr(10)}game {number + 1} of {len(games)}")
        _print_game(game, args)
    return 0


def _print_game(game: LoadedGame, args: argparse.Namespace) -> None:
    tl = game.timeline
    meta = game.document.metadata
    players = tl.players
    print(f"{meta.title or Path(args.file).name}")
    print("players: " + ", ".join(f"{i}:{n}" for i, n in enumerate(players)) + f"   ruleset: {_rules(game)}")
    print(f"{'deal':>4} {'dlr':>3} {'up':>3} {'trump':>5} {'maker':>5} {'alone':>5}  tricks (winner seat)      {'pts':>7} {'score':>7}")
    for d in tl.deals:
        print(_row(d))
    winner = "undecided" if tl.winner is None else f"team {tl.winner} ({' & '.join(players[s] for s in range(len(players)) if team_of(s) == tl.winner)})"
    print(f"final score {tl.final_score[0]}-{tl.final_score[1]}, winner: {winner}")
    if args.steps:
        for s in tl.steps:
            a = s.action
            what = "" if a is None else " ".join(str(x) for x in (a.seat, a.call, a.card) if x is not None)
            print(f"  step {s.step:4d} deal {s.deal:2d} {s.kind.value:12s} {what}")


def _rules(game: LoadedGame) -> str:
    rs = game.document.metadata.ruleset
    return json.dumps(rs.written()) if rs is not None else "defaults"


def _row(d: DealSummary) -> str:
    trump = d.trump if d.trump is not None else "-"
    maker = "-" if d.maker is None else str(d.maker)
    alone = ("yes" if d.alone else "") + (f"/d{d.alone_defender}" if d.alone_defender >= 0 else "")
    tricks = " ".join(f"{t.winner if t.winner is not None else '?'}" for t in d.tricks)
    pts = "-" if d.points is None else f"{d.points[0]}-{d.points[1]}"
    return f"{d.deal_number:>4} {d.dealer:>3} {d.up_card or '':>3} {trump:>5} {maker:>5} {alone:>5}  {tricks:<24} {pts:>7} {d.score_after[0]:>3}-{d.score_after[1]:<3}"


# --------------------------------------------------------------------------- bench


def _corpus(args: argparse.Namespace) -> list[tuple[str, bytes]]:
    files: list[Path] = []
    root = Path(args.corpus) if args.corpus else Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "egn"
    if root.exists():
        files = sorted(p for p in root.rglob("*.egn"))
    out = [(p.name, p.read_bytes()) for p in files]
    if not out:
        from engine.generate import generate_game

        out = [(f"gen{i}", json.dumps(generate_game(i)).encode()) for i in range(50)]
    return out


def _add_bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", help="folder of .egn files (default: ../shared/fixtures/egn, else 50 generated games)")
    p.add_argument("--repeat", type=int, default=5, help="passes over the corpus; the median is reported")


@bench_target("engine", help="load + replay throughput over the fixture corpus", add_arguments=_add_bench_args)
def bench_engine(args: argparse.Namespace) -> dict[str, Any]:
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
