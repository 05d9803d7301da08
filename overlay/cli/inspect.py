"""``euchre-overlay inspect FILE``: replay a game and print it deal by deal (or as JSON)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from assets import DEMO_GAME as DEMO
from engine.load import LoadedGame, LoadedMatch, load_any
from engine.state import DealSummary, team_of

from .convert import read_input, source_name


def register(sub: Any) -> None:
    p = sub.add_parser(
        "inspect",
        help="replay an EGN game and print every deal (trick winners, points, score)",
        description=(
            "Deals are numbered 1, 2, 3 ... in file order, as on screen and in the control API's "
            "seek?deal=N. The --json contract keeps the file's own dealNumber field."
        ),
    )
    p.add_argument("file", nargs="?", default=str(DEMO), help="a .egn, .egnb or .emn file; - reads standard input (default: the bundled demo game)")
    p.add_argument("--json", action="store_true", help="print the replay as JSON: per deal the dealer, up-card, trump, maker, tricks, points and score (fields listed in docs/engine.md)")
    p.add_argument("--strict", action="store_true", help="refuse any schema problem instead of repairing it (a card dealt twice included): exit 2")
    p.add_argument("--steps", action="store_true", help="also list every step of the timeline")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the deal summaries need no states: only --steps builds the whole timeline
    loaded = load_any(read_input(args.file), source=source_name(Path(args.file).name), strict=args.strict, summary_only=not args.steps)
    games = loaded.games if isinstance(loaded, LoadedMatch) else (loaded,)
    errors = [p for game in games for p in game.all_problems if p.severity == "error" and p.kind == "schema"]
    if args.strict and errors:
        # strict refuses a document that is not a game (a card dealt twice...): one line, exit 2;
        # breaches of the rules in the play (a renege) are facts, reported as warnings
        print(f"euchre-overlay: {errors[0]}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""), file=sys.stderr)
        return 2
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
    for position, d in enumerate(tl.deals):
        print(_row(position, d))
    winner = "undecided" if tl.winner is None else f"team {tl.winner} ({' & '.join(players[s] for s in range(len(players)) if team_of(s) == tl.winner)})"
    print(f"final score {tl.final_score[0]}-{tl.final_score[1]}, winner: {winner}")
    if args.steps:
        for s in tl.steps:
            a = s.action
            what = "" if a is None else " ".join(str(x) for x in (a.seat, a.call, a.card) if x is not None)
            print(f"  step {s.step:4d} deal {s.deal + 1:2d} {s.kind.value:12s} {what}")


def _rules(game: LoadedGame) -> str:
    rs = game.document.metadata.ruleset
    return json.dumps(rs.written()) if rs is not None else "defaults"


def _row(position: int, d: DealSummary) -> str:
    """One deal as a text row; the deal is numbered by position from 1 (what people see on
    screen and give to ``seek?deal=``), not by the file's ``dealNumber``."""
    trump = d.trump if d.trump is not None else "-"
    maker = "-" if d.maker is None else str(d.maker)
    alone = ("yes" if d.alone else "") + (f"/d{d.alone_defender}" if d.alone_defender >= 0 else "")
    tricks = " ".join(f"{t.winner if t.winner is not None else '?'}" for t in d.tricks)
    pts = "-" if d.points is None else f"{d.points[0]}-{d.points[1]}"
    return f"{position + 1:>4} {d.dealer:>3} {d.up_card or '':>3} {trump:>5} {maker:>5} {alone:>5}  {tricks:<24} {pts:>7} {d.score_after[0]:>3}-{d.score_after[1]:<3}"
