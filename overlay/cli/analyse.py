"""``euchre-overlay analyse FILE``: double-dummy analysis and win probability of every step.

For each step where the hands are known: the tricks each team ends the deal with under best
play (``ddTricks``), the best cards of the player to act (``best``), at the bidding the value
of each call (``calls``), and the win probability; ``--json`` prints the contract in
docs/analysis.md ("``analyse`` JSON").  Hands the file does not list are rebuilt from a play
that shows every card (``hands``: ``"reconstructed"``); ``deals`` says per deal what was
analysed and, where a step got nothing from hands, why (``reason``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from assets import DEMO_GAME as DEMO
from engine.analysis import Analyst, DealReport, StepAnalysis, deal_reports
from engine.load import LoadedGame, LoadedMatch, load_any
from engine.ruleset import Ruleset
from engine.stats import match_stats

from .convert import read_input, source_name


def register(sub: Any) -> None:
    p = sub.add_parser("analyse", help="double-dummy analysis of every step: tricks under best play, best cards, the bidding table, win probability")
    p.add_argument("file", nargs="?", default=str(DEMO), help="a .egn, .egnb or .emn file; - reads standard input (default: the bundled demo game)")
    p.add_argument("--json", action="store_true", help="print {\"steps\": [{step, deal, kind, ddTricks, best, calls, winProbability, ...}]} (fields listed in docs/analysis.md)")
    p.add_argument("--strict", action="store_true", help="refuse any schema problem instead of repairing it")
    p.add_argument("--public", action="store_true", help="use no hidden card: only what the clean output may show (win probability from public information)")
    p.set_defaults(func=run)


def analyse_game(game: LoadedGame, *, public: bool = False) -> list[StepAnalysis]:
    """Every step of a loaded game, analysed in timeline order."""
    rules = game.document.metadata.ruleset or Ruleset()
    analyst = Analyst(rules)
    return [analyst.analyse(state, public=public) for state in game.timeline.steps]


def run(args: argparse.Namespace) -> int:
    loaded = load_any(read_input(args.file), source=source_name(Path(args.file).name), strict=args.strict)
    games = loaded.games if isinstance(loaded, LoadedMatch) else (loaded,)
    for game in games:
        for problem in game.all_problems:
            print(f"warning: {problem}", file=sys.stderr)
    results = [analyse_game(game, public=args.public) for game in games]
    if args.json:
        docs = [
            {"steps": [s.to_json() for s in steps], "deals": [d.to_json() for d in deal_reports(game.timeline, steps)], "stats": match_stats(game.timeline).to_json()}
            for game, steps in zip(games, results)
        ]
        print(json.dumps(docs[0] if not isinstance(loaded, LoadedMatch) else {"games": docs}, ensure_ascii=False))
        return 0
    for number, (game, steps) in enumerate(zip(games, results)):
        if isinstance(loaded, LoadedMatch):
            print(f"{'' if number == 0 else chr(10)}game {number + 1} of {len(games)}")
        print(f"{'step':>4} {'deal':>4} {'kind':<12} {'to':>2} {'dd':>5} {'pts':>5} {'win0':>5} {'hands':<5}  best / calls")
        for s in steps:
            print(_row(s))
        print()
        for report in deal_reports(game.timeline, steps):
            print(_deal_row(report))
    return 0


def _deal_row(d: DealReport) -> str:
    hands = {"recorded": "recorded hands", "reconstructed": "hands reconstructed from the play"}.get(d.hands or "", "no hands")
    why = f": {d.reason}" if d.reason else ""
    return f"deal {d.deal}: {d.analysed} of {d.asked} steps analysed, {hands}{why}"


def _row(s: StepAnalysis) -> str:
    dd = "-" if s.tricks is None else f"{s.tricks[0]}-{s.tricks[1]}"
    pts = "-" if s.points is None else f"{s.points[0]}-{s.points[1]}"
    win = "-" if s.win_probability is None else f"{s.win_probability[0]:.2f}"
    to = "-" if s.to_act is None else str(s.to_act)
    if s.calls is not None:
        detail = "  ".join(f"{c.label}:{'-' if c.points is None else f'{c.points[0]}-{c.points[1]}'}" for c in s.calls)
        detail = f"best {', '.join(s.best or ())}  |  {detail}"
    elif s.cards:
        detail = "best " + " ".join(s.best or ()) + "  |  " + " ".join(f"{c.card}:{'-' + str(c.trick_loss) if c.trick_loss else '='}" for c in s.cards)
    else:
        detail = ""
    hands = {"recorded": "rec", "reconstructed": "hind"}.get(s.hands or "", "-")
    return f"{s.step:>4} {s.deal:>4} {s.kind:<12} {to:>2} {dd:>5} {pts:>5} {win:>5} {hands:<5}  {detail}"
