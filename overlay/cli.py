"""The ``euchre-overlay`` console command.

Each subcommand lives in its own module under :mod:`overlay.commands` and exposes
``register(subparsers)``; benchmarks register a target with :func:`bench_target`, so that
``euchre-overlay bench NAME`` finds them.  Errors go to stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable, Sequence
from typing import Any

from engine.errors import EgnError

BenchFn = Callable[[argparse.Namespace], dict[str, Any]]
_BENCHES: dict[str, tuple[BenchFn, Callable[[argparse.ArgumentParser], None] | None, str]] = {}


def bench_target(
    name: str, *, help: str, add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
) -> Callable[[BenchFn], BenchFn]:
    """Register ``euchre-overlay bench NAME``: the function returns the figures as a dict."""

    def deco(fn: BenchFn) -> BenchFn:
        _BENCHES[name] = (fn, add_arguments, help)
        return fn

    return deco


def _load_commands(sub: Any) -> None:
    from . import commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)


def _add_bench(sub: Any) -> None:
    bench = sub.add_parser("bench", help="run a benchmark and print its figures")
    targets = bench.add_subparsers(dest="target", required=True)
    for name, (fn, add_arguments, help_text) in sorted(_BENCHES.items()):
        p = targets.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
        if add_arguments:
            add_arguments(p)
        p.set_defaults(func=_run_bench(fn))


def _run_bench(fn: BenchFn) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        import json

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="euchre-overlay", description="Broadcast graphics for Euchre: replay EGN games, render them, serve them to OBS.")
    sub = parser.add_subparsers(dest="command", required=True)
    _load_commands(sub)
    _add_bench(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except EgnError as exc:
        print(f"euchre-overlay: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"euchre-overlay: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    # Run as a script, this module is "__main__": hand over to the importable
    # overlay.cli so that commands register their bench targets in one registry.
    from overlay.cli import main as _main

    sys.exit(_main())
