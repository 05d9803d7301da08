"""The ``euchre-overlay`` console command.

Each subcommand lives in its own module in this package and exposes ``register(subparsers)``;
:data:`COMMANDS` lists them, so the command set is read here rather than discovered.  The
benchmarks (``euchre-overlay bench NAME``) are tools about the product, not part of it:
:data:`TOOLS` names their command module (:mod:`overlay.bench.command`), imported by name
when the parser is built, so no module of the product imports the benchmarks (the
architecture test checks it) and a build without them still runs.  Errors go to stderr as
one line with exit code 2.

A command line that names its subcommand builds the parser of that subcommand alone
(:data:`NAMES`): registering a subcommand imports what its options need (the service's
settings, the video codecs, every benchmark), so ``serve`` would otherwise start by importing
the whole product (0.2 s of CPU on the test machine, each start).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

from engine.errors import EgnError

from . import analyse, capture, composite, control, convert, frame, inject, inspect, render, serve, token

__all__ = ["COMMANDS", "NAMES", "TOOLS", "build_parser", "main"]

#: the subcommand modules, in the order ``--help`` lists them
COMMANDS = (serve, control, token, inspect, analyse, convert, frame, render, composite, capture, inject)

#: command modules of the tools about the product, listed after :data:`COMMANDS`
TOOLS = ("overlay.bench.command",)

#: each subcommand's name and the module that registers it (``convert`` registers three;
#: a tool's command is its own: ``bench``)
NAMES: dict[str, ModuleType | str] = {
    "serve": serve,
    "control": control,
    "token": token,
    "inspect": inspect,
    "analyse": analyse,
    "convert": convert,
    "baseline": convert,
    "upgrade": convert,
    "frame": frame,
    "render": render,
    "composite": composite,
    "capture": capture,
    "inject": inject,
    "bench": TOOLS[0],
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand, or only the one named ``only`` (a key of
    :data:`NAMES`; the module that registers it may register others beside it)."""
    parser = argparse.ArgumentParser(prog="euchre-overlay", description="Broadcast graphics for Euchre: replay EGN games, render them, serve them to OBS.")
    sub = parser.add_subparsers(dest="command", required=True)
    if only is not None:
        module = NAMES[only]
        found = _tool(module) if isinstance(module, str) else module
        if found is not None:
            found.register(sub)
            return parser
    for module in COMMANDS:
        module.register(sub)
    for name in TOOLS:
        tool = _tool(name)
        if tool is not None:
            tool.register(sub)
    return parser


def _tool(name: str) -> ModuleType | None:
    """A tool's command module, or ``None`` in a build without the tool."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not name.startswith(exc.name):
            raise  # the tool is there but something it imports is missing: say so
        return None


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in NAMES else None)
    args = parser.parse_args(words)
    # SIGINT is Ctrl+C whatever the process inherited: one started with it ignored (by a
    # script's ``&``, and so every render job of a service started that way) kept writing
    # through the studio's cancel, which the service then killed after 10 s
    ignored = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
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
    finally:
        if ignored:  # (a caller in this process gets its own setting back)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
