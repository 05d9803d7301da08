"""The import graph keeps to the layers: engine <- renderer <- studio <- overlay, and inside
``overlay/`` to the table of its folders.

Every module under ``engine/``, ``renderer/``, ``overlay/`` and ``studio/`` is parsed with
``ast`` (nothing is imported).  Every import counts, at module level or inside a function,
since a deferred import is still a dependency.  The rules:

- **no upward import**: engine imports only engine; renderer only engine and renderer;
  studio engine, renderer and studio (never overlay: the overlay mounts the studio);
  overlay engine, renderer, overlay and studio;
- **no import cycle** between modules (a strongly connected set of two or more modules);
- **overlay/ is split by concern**: every module sits in one of the folders of
  :data:`FOLDERS`, and a folder imports only the folders its row allows (the service none,
  the cluster and the video tools the service, the CLI the product, the benchmarks anything);
- **no import cycle between folders** (the top-level packages and overlay's folders);
- **the benchmarks are not part of the product**: no folder but ``overlay/bench`` imports it
  (the CLI loads its ``bench`` command by name, :data:`overlay.cli.TOOLS`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT

#: one worker runs this file under pytest-xdist (--dist loadgroup): the import graph is parsed once
pytestmark = pytest.mark.xdist_group("architecture")

PACKAGES = ("engine", "renderer", "overlay", "studio")

#: which top-level packages each package may import
ALLOWED: dict[str, frozenset[str]] = {
    "engine": frozenset({"engine"}),
    "renderer": frozenset({"engine", "renderer"}),
    "studio": frozenset({"engine", "renderer", "studio"}),
    "overlay": frozenset({"engine", "renderer", "overlay", "studio"}),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the four packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The project modules ``name`` imports (with the line), resolving relative imports;
    ``from pkg import mod`` counts as importing ``pkg.mod`` when that is a module."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    yield f"{target}.{alias.name}", node.lineno


def graph() -> dict[str, dict[str, int]]:
    """Module -> {project module it imports: first line}."""
    known = modules()
    edges: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        out = edges.setdefault(name, {})
        for target, line in imported(name, path, known):
            if target.split(".")[0] in PACKAGES and target != name:  # ``from . import x`` names the package itself
                out.setdefault(target, line)
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The import cycles: strongly connected sets of two or more modules (Tarjan's
    algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = set()
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        members.add(top)
                        if top == node:
                            break
                    if len(members) > 1:
                        found.append(frozenset(members))
                continue
            if child not in edges:
                continue  # a name that is not a module of ours (an attribute, a missing file)
            if child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, {})))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


@functools.cache
def import_graph() -> dict[str, dict[str, int]]:
    """The import graph, parsed once per process when a test first asks (not at collection:
    every pytest-xdist worker collects this file, one runs its tests)."""
    return graph()


@pytest.mark.parametrize("package", PACKAGES)
def test_no_upward_imports(package: str) -> None:
    wrong = [
        f"{modules()[name].relative_to(ROOT)}:{line}: {name} imports {target}"
        for name, targets in sorted(import_graph().items())
        if name.split(".")[0] == package
        for target, line in sorted(targets.items())
        if target.split(".")[0] not in ALLOWED[package]
    ]
    assert wrong == [], f"{package} may import only {sorted(ALLOWED[package])}:\n" + "\n".join(wrong)


def test_no_import_cycles() -> None:
    found = [sorted(c) for c in cycles(import_graph())]
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {}}, []),
        ({"a": {"b": 1}, "b": {"a": 1}}, [frozenset({"a", "b"})]),
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}, [frozenset({"a", "b", "c"})]),
    ],
    ids=["chain", "pair", "triangle-with-tail"],
)
def test_cycle_finder(edges: dict[str, dict[str, int]], expected: list[frozenset[str]]) -> None:
    """The checker itself finds cycles (a test of the graph test, so it cannot pass vacuously)."""
    assert cycles(edges) == expected


def test_graph_sees_relative_and_module_imports() -> None:
    """Relative imports resolve: the graph knows the overlay imports its own modules and the
    engine, so an empty graph cannot pass the layer test."""
    assert "overlay.service.hub" in import_graph()["overlay.service.app"]
    assert "overlay.service.feed" in import_graph()["overlay.service.core"]  # ``from . import feed``
    assert any(t.startswith("engine.") for t in import_graph()["overlay.service.feed"])


#: overlay's folders and the other overlay folders each may import (engine, renderer and
#: studio as the top-level rule says); bench, the tools about the product, may import all
FOLDERS: dict[str, frozenset[str]] = {
    "overlay.service": frozenset(),
    "overlay.cluster": frozenset({"overlay.service"}),
    "overlay.video": frozenset({"overlay.service"}),
    "overlay.browser": frozenset({"overlay.service", "overlay.video"}),
    "overlay.cli": frozenset({"overlay.service", "overlay.cluster", "overlay.video", "overlay.browser"}),
    "overlay.bench": frozenset({"overlay.service", "overlay.cluster", "overlay.video", "overlay.browser", "overlay.cli"}),
}
#: the benchmarks' folder: tools about the product, outside its import graph
TOOLS_FOLDER = "overlay.bench"


def folder_of(module: str) -> str:
    """``overlay.service.routes.pages`` -> ``overlay.service``; a top-level package is its own
    folder (``engine.codec.egnb`` -> ``engine``); ``overlay`` itself is ``overlay``."""
    parts = module.split(".")
    if parts[0] == "overlay" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def folder_edges(edges: dict[str, dict[str, int]]) -> dict[str, dict[str, str]]:
    """Folder -> {folder it imports: one module import that shows it}."""
    out: dict[str, dict[str, str]] = {}
    for name, targets in sorted(edges.items()):
        here = out.setdefault(folder_of(name), {})
        for target in sorted(targets):
            there = folder_of(target)
            if there != folder_of(name):
                here.setdefault(there, f"{name} imports {target}")
    return out


@functools.cache
def folder_graph() -> dict[str, dict[str, str]]:
    """:func:`folder_edges` of the import graph, made once."""
    return folder_edges(import_graph())


def test_every_overlay_module_sits_in_a_folder() -> None:
    """Nothing grows at overlay's top again: each module belongs to one folder of the table."""
    loose = sorted(
        name for name in modules() if name.split(".")[0] == "overlay" and name != "overlay" and folder_of(name) not in FOLDERS
    )
    assert loose == [], f"modules outside overlay's folders {sorted(FOLDERS)}: {loose}"
    assert folder_graph().get("overlay", {}) == {}, "overlay/__init__.py imports nothing"


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_folder_imports_follow_the_table(folder: str) -> None:
    allowed = FOLDERS[folder] | {"engine", "renderer", "studio"}
    wrong = [why for there, why in sorted(folder_graph().get(folder, {}).items()) if there not in allowed]
    assert wrong == [], f"{folder} may import only {sorted(allowed)}:\n" + "\n".join(wrong)


def test_no_cycles_between_folders() -> None:
    graph = {f: {t: 1 for t in targets} for f, targets in folder_graph().items()}
    found = [sorted(c) for c in cycles(graph)]
    assert found == [], "folder cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_product_does_not_import_the_benchmarks() -> None:
    """Only the benchmarks import the benchmarks; the CLI names its bench command as a tool
    (a string it imports when it builds its parser), which must name a bench module."""
    from overlay.cli import TOOLS

    users = sorted(why for f, targets in folder_graph().items() if f != TOOLS_FOLDER for there, why in targets.items() if there == TOOLS_FOLDER)
    assert users == []
    assert TOOLS and all(name.startswith(TOOLS_FOLDER + ".") and name in modules() for name in TOOLS)


def test_folder_table_covers_the_folders_on_disk() -> None:
    """A new folder under overlay/ gets its row (static/ holds no Python)."""
    on_disk = {f"overlay.{p.name}" for p in (ROOT / "overlay").iterdir() if (p / "__init__.py").is_file()}
    assert on_disk == set(FOLDERS)
