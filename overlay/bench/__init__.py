"""Every benchmark of the project, one module each, run as ``euchre-overlay bench NAME``.

A target module exposes ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> dict`` (the figures, printed as a table or with ``--json`` as one object).
:data:`TARGETS` lists them; a new benchmark is one module and one line here.  Speed and
memory goals live here, never in timed tests.
"""

from __future__ import annotations

from types import ModuleType

from . import analysis, codecs, engine, export, faults, fuzz, live, logger, pages, render, scale, stats, studio

__all__ = ["TARGETS"]

TARGETS: dict[str, ModuleType] = {
    "engine": engine,
    "codecs": codecs,
    "fuzz": fuzz,
    "render": render,
    "live": live,
    "logger": logger,
    "studio": studio,
    "pages": pages,
    "export": export,
    "faults": faults,
    "analysis": analysis,
    "stats": stats,
    "scale": scale,
}
