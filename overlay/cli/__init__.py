"""The ``euchre-overlay`` console command.

Each subcommand lives in its own module in this package and exposes ``register(subparsers)``;
:data:`COMMANDS` lists them, so the command set is read here rather than discovered.  The
benchmarks (``euchre-overlay bench NAME``) are tools about the product, not part of it:
:data:`TOOLS` names their command module (:mod:`overlay.bench.command`), imported by name
when the parser is built, so no module of the product imports the benchmarks (the
architecture test checks it) and a build without them still runs.  Errors go to stderr as
one line with exit code 2.

A command line that names its subcommand imports and registers that subcommand's module alone
(:data:`NAMES`): a command module imports what the command runs (``serve`` the service and
aiohttp, ``analyse`` the solver), so any command would otherwise start by importing the whole
product (0.2 s of CPU on the test machine, each start: ``render``, ``capture`` and every job
the studio starts).  The modules are named, not imported, here for that reason.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

# numpy's OpenBLAS starts a thread per core at import, which costs 40-50 ms of CPU in every
# process (measured: `import numpy` 0.10-0.12 s of CPU, 0.066 s with one thread) and does
# nothing here: the renderer's numpy work is elementwise, no linear algebra.  Set before any
# command imports numpy; the service's workers, render jobs and Ray's processes inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from engine.errors import EgnError  # noqa: E402

__all__ = ["COMMANDS", "NAMES", "TOOLS", "build_parser", "main"]

#: the subcommand modules (in this package), in the order ``--help`` lists them
COMMANDS = ("serve", "control", "token", "inspect", "analyse", "convert", "frame", "render", "composite", "capture", "inject")

#: command modules of the tools about the product, listed after :data:`COMMANDS`
TOOLS = ("overlay.bench.command",)

#: each subcommand's name and the module that registers it (``convert`` registers three;
#: a tool's command is its own: ``bench``)
NAMES: dict[str, str] = {
    **{name: f"{__name__}.{name}" for name in COMMANDS},
    "baseline": f"{__name__}.convert",
    "upgrade": f"{__name__}.convert",
    "bench": TOOLS[0],
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand, or only the one named ``only`` (a key of
    :data:`NAMES`; the module that registers it may register others beside it)."""
    parser = argparse.ArgumentParser(prog="euchre-overlay", description="Broadcast graphics for Euchre: replay EGN games, render them, serve them to OBS.")
    sub = parser.add_subparsers(dest="command", required=True)
    if only is not None:
        name = NAMES[only]
        found = _tool(name) if name in TOOLS else importlib.import_module(name)
        if found is not None:
            found.register(sub)
            return parser
    for command in COMMANDS:
        importlib.import_module(f"{__name__}.{command}").register(sub)
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


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor (a caller's StringIO)
        return False


def os_error_text(exc: OSError) -> str:
    """A system error as a shell tool says it: the path first, no ``[Errno N]`` (``out.mov: Is
    a directory``); a path under a file names that file (the system's "File exists" or "Not a
    directory" did not)."""
    if not exc.filename or not exc.strerror:
        return str(exc)
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        # the nearest part of the path that exists, when it is a file where a folder must be
        at = os.path.abspath(str(exc.filename))
        while not os.path.lexists(at) and os.path.dirname(at) != at:
            at = os.path.dirname(at)
        if os.path.lexists(at) and not os.path.isdir(at):
            if at == os.path.abspath(str(exc.filename)):
                return f"{exc.filename}: is a file, not a folder"
            return f"{exc.filename}: {at} is a file, not a folder"
    if exc.filename2:
        return f"{exc.filename} -> {exc.filename2}: {exc.strerror}"
    return f"{exc.filename}: {exc.strerror}"


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
    except BrokenPipeError as exc:
        if not _reader_gone():
            print(f"euchre-overlay: {exc}", file=sys.stderr)
            return 2
        # the reader of our output went away (``| head``): stop quietly, as a shell tool
        # killed by SIGPIPE does; what is still buffered goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as exc:
        print(f"euchre-overlay: {os_error_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        if ignored:  # (a caller in this process gets its own setting back)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
