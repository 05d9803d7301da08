"""Which engine runs: the hot modules compiled with mypyc, or the pure-Python sources.

``scripts/build_engine`` compiles :data:`COMPILED` with mypyc into ``.build/mypyc/``
beside the package (never into the source tree) and writes a stamp there: the SHA-256 of
every engine source the compiled modules were type-checked against (their imports,
directly or not), the extension suffix of the Python that built them and the module list.
:func:`activate`, called first thing by ``engine/__init__.py``, puts ``.build/mypyc/engine``
first on the package's ``__path__`` when the stamp still matches, so ``import engine.deal``
finds the compiled extension module and every other module the source.  Otherwise the
engine stays pure Python:

* ``EUCHRE_OVERLAY_PURE=1`` in the environment: pure, silently (what a comparison wants);
* no build (a plain install, a fresh clone before ``scripts/bootstrap``): pure, silently;
* a stale build (a source edited since), one for another Python, a garbled stamp or a
  missing extension file: pure, with one line on stderr saying why and how to rebuild.

Why a rules engine that reads no files reads some here: choosing the implementation of
the package's own modules is the loader's job, and it has to happen before the first of
them is imported, so it sits in the package and runs at import, once per process.  Compiled
code must never run against sources that changed after it was built (the fix would not be
running, and mypyc bakes types and constants of the modules it read into the code), which
only the sources' contents can tell.  It stays cheap: a stamp of a few kilobytes and the
39 source files it names (about 300 kB) read and hashed, 0.7 ms measured, against the
~200 ms that importing the engine's models takes; nothing is read when the build is absent
or ``EUCHRE_OVERLAY_PURE`` is set.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["subpackage_path", "COMPILED", "GROUP", "BUILD", "STAMP_NAME", "FORMAT", "PURE_ENV", "Native", "activate", "status", "mode", "stamp_problem", "source_digest", "abi"]

#: engine modules compiled with mypyc: the replay's hot path (with the frozen values' builder),
#: and the load's upgrade walk and validation checks (their shares of a summary-only load,
#: profiled under ``bench engine``)
COMPILED: tuple[str, ...] = (
    "deal", "dealstate", "layout", "rules", "replay", "branch", "frozen", "upgrade", "validate",
    # the analysis's double-dummy solver (its alpha-beta search over bit masks), the cards'
    # suit and power (every trick's judge) and the seeded game generator (the win-probability
    # prior's 150 games)
    "solve", "cards", "generate",
    # the codecs' hot paths (profiled under the side-by-side harness: bit streams, deal packing
    # and unpacking, the fast protobuf readers and the acceptance check)
    "fastcheck", "codec.bitstream", "codec.deal_pack", "codec.deal_unpack", "codec.pool",
    "codec.fastread", "codec.fastwire", "codec.fastmeta", "codec.protobuf", "codec.deal_layout",
)

#: mypyc's group name: the compiled code of every module sits in one shared library,
#: ``engine/_native__mypyc*.so``, which each module's small extension module imports
GROUP = "_native"

#: the build folder (``.build/mypyc`` at the repository's root)
BUILD = Path(__file__).resolve().parents[1] / ".build" / "mypyc"
STAMP_NAME = "stamp.json"
#: set to 1 to run the pure-Python engine whatever is built
PURE_ENV = "EUCHRE_OVERLAY_PURE"

#: the stamp's layout; a stamp of another format is not trusted
FORMAT = 1


@dataclass(frozen=True)
class Native:
    """The engine's mode in this process and why (``detail``, for logs and the test header)."""

    mode: Literal["compiled", "pure"]
    detail: str


_status: Native | None = None


def abi() -> str:
    """The extension suffix of this Python (``.cpython-311-x86_64-linux-gnu.so``): a build is for one."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def source_digest(path: Path) -> str:
    """SHA-256 of a source file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stamp_problem(build: Path, root: Path) -> str | None:
    """Why the build in ``build`` cannot serve the sources under ``root`` (``None``: it can).

    ``build`` holds ``stamp.json`` and ``engine/`` with the extension modules; the stamp's
    sources are paths relative to ``root``.
    """
    try:
        stamp = json.loads((build / STAMP_NAME).read_text(encoding="utf-8"))
        fmt, built_for, modules, sources = stamp["format"], stamp["abi"], stamp["modules"], stamp["sources"]
        if fmt != FORMAT or not isinstance(modules, list) or not isinstance(sources, dict) or not sources:
            raise ValueError("unexpected layout")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"its stamp {build / STAMP_NAME} is unreadable ({exc})"
    if built_for != abi():
        return f"it was built for another Python ({built_for!r}, this one is {abi()!r})"
    if modules != list(COMPILED):
        return f"it compiled {modules!r}, the engine now compiles {list(COMPILED)!r}"
    for name, digest in sorted(sources.items()):
        try:
            if source_digest(root / name) != digest:
                return f"{name} changed since it was built"
        except OSError:
            return f"{name} is gone since it was built"
    for name in [GROUP + "__mypyc", *COMPILED]:
        rel = name.replace(".", "/")
        if not (build / "engine" / (rel + abi())).is_file():
            return f"engine/{rel}{abi()} is missing"
    return None


def activate(package_path: list[str]) -> Native:
    """Choose the engine's mode once per process (see the module docstring); the package
    calls this with its ``__path__`` before any other module of it is imported.

    Never raises: anything wrong with the build leaves the engine pure.
    """
    global _status
    if _status is not None:
        return _status
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        _status = Native("pure", f"{PURE_ENV}={os.environ[PURE_ENV]}")
    elif not (BUILD / STAMP_NAME).exists():
        _status = Native("pure", f"no compiled build in {BUILD}")
    else:
        problem = stamp_problem(BUILD, BUILD.parents[1])
        if problem is None:
            problem = _load_library(package_path)
        if problem is None:
            _status = Native("compiled", f"mypyc, {BUILD}")
        else:
            sys.stderr.write(f"euchre-overlay: running the pure-Python engine: the compiled engine in {BUILD} is not used, {problem}; rebuild it with scripts/build_engine\n")
            _status = Native("pure", f"compiled build not used: {problem}")
    return _status


def _load_library(package_path: list[str]) -> str | None:
    """Put the build first on the package's path and load the shared library; what failed, if anything."""
    folder = str(BUILD / "engine")
    package_path.insert(0, folder)
    try:
        importlib.import_module(f"{__package__}.{GROUP}__mypyc")
    except ImportError as exc:
        package_path.remove(folder)
        return f"its library does not load ({exc})"
    return None


def subpackage_path(package: str, package_path: list[str]) -> None:
    """Put the build's folder of subpackage ``package`` (``"codec"``) first on its ``__path__``
    when the engine runs compiled (the subpackage calls this before importing its modules)."""
    if _status is not None and _status.mode == "compiled":
        folder = str(BUILD / "engine" / package)
        if folder not in package_path:
            package_path.insert(0, folder)


def status() -> Native:
    """The mode chosen at import (pure if :func:`activate` has not run)."""
    return _status if _status is not None else Native("pure", "not activated")


def mode() -> Literal["compiled", "pure"]:
    """``"compiled"`` when the engine's hot modules run as mypyc extension modules, else ``"pure"``."""
    return status().mode
