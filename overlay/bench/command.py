"""``euchre-overlay bench NAME [--json]``: run one benchmark of :mod:`overlay.bench`."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from . import TARGETS

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="run a benchmark and print its figures")
    names = p.add_subparsers(dest="target", required=True)
    for name, module in sorted(TARGETS.items()):
        q = names.add_parser(name, help=module.HELP)
        q.add_argument("--json", action="store_true", help="print the figures as one JSON object")
        module.add_arguments(q)
        q.set_defaults(func=_runner(module.run))


def _runner(fn: Callable[[argparse.Namespace], dict[str, Any]]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        figures = fn(args)
        if args.json:
            print(json.dumps(figures, sort_keys=True))
        else:
            for key, value in figures.items():
                if isinstance(value, float):
                    value = f"{value:.4g}"
                print(f"{key:>32}: {value}")
        return 0

    return run
