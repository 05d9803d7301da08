"""The ``euchre-overlay`` console command.

Each subcommand lives in its own module in this package and exposes ``register(subparsers)``;
:data:`COMMANDS` lists them, so the command set is read here rather than discovered.  The
benchmarks (``euchre-overlay bench NAME``) live together in :mod:`overlay.bench`, which lists
its targets the same way.  Errors go to stderr as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.errors import EgnError

from . import analyse, bench, capture, composite, control, convert, frame, inject, inspect, render, serve, token

__all__ = ["COMMANDS", "build_parser", "main"]

#: the subcommand modules, in the order ``--help`` lists them
COMMANDS = (serve, control, token, inspect, analyse, convert, frame, render, composite, capture, inject, bench)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="euchre-overlay", description="Broadcast graphics for Euchre: replay EGN games, render them, serve them to OBS.")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
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
