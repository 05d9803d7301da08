"""The ``euchre-overlay`` console command.

Each subcommand lives in its own module in this package and exposes ``register(subparsers)``;
:data:`COMMANDS` lists them, so the command set is read here rather than discovered.  The
benchmarks (``euchre-overlay bench NAME``) are tools about the product, not part of it:
:data:`TOOLS` names their command module (:mod:`overlay.bench.command`), imported by name
when the parser is built, so no module of the product imports the benchmarks (the
architecture test checks it) and a build without them still runs.  Errors go to stderr as
one line with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from engine.errors import EgnError

from . import analyse, capture, composite, control, convert, frame, inject, inspect, render, serve, token

__all__ = ["COMMANDS", "TOOLS", "build_parser", "main"]

#: the subcommand modules, in the order ``--help`` lists them
COMMANDS = (serve, control, token, inspect, analyse, convert, frame, render, composite, capture, inject)

#: command modules of the tools about the product, listed after :data:`COMMANDS`
TOOLS = ("overlay.bench.command",)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="euchre-overlay", description="Broadcast graphics for Euchre: replay EGN games, render them, serve them to OBS.")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
    for name in TOOLS:
        try:
            tool = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise  # the tool is there but something it imports is missing: say so
            continue  # a build without the tool
        tool.register(sub)
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
