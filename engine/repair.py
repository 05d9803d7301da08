"""Loading a document leniently: upgrade, validate, repair what can be repaired, keep going.

:func:`parse_document` returns the model and every problem found.  Strict, it raises the
first; lenient, it repairs what it can (drops an unknown key, cuts a call list or a trick
at the first bad entry, drops a deal it cannot read) and goes on, so a live logger's
half-typed game still shows.  Old versions (1.0, 1.1) are upgraded before validation
(:mod:`engine.upgrade`); the legacy Renderer fields are returned aside as production data.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ConfigDict

from .errors import Place, Problem, SchemaError
from .model import FILE_TYPE, OLD_VERSION_RE, VERSION_RE, EgnDocument
from .validate import deal_count_problem, find_problems, get_path, json_type, valid_as_is, validate_document

__all__ = ["ParsedDocument", "parse_document"]


class ParsedDocument(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    document: EgnDocument
    problems: tuple[Problem, ...] = ()
    production: dict[str, Any] = {}
    upgraded_from: str | None = None


_REQUIRED_DEFAULTS: dict[str, Any] = {
    "fileType": FILE_TYPE,
    "version": "1.4",
    "metadata": {},
    "deals": [],
    "players": [],
    "initialScore": [0, 0],
    "calls": [],
    "tricks": [],
    "phases": [],
}
#: lists that record actions in order: a bad entry cuts the rest (nothing after it is sure)
_ORDERED = {"calls", "tricks", "phases"}


def _repair(doc: Any, path: tuple[Any, ...], kind: str) -> tuple[Any, ...] | None:
    """Change ``doc`` in place so that the problem at ``path`` goes away.

    Returns the path of what was actually changed: ``path`` itself, or an enclosing one
    when the value cannot be mended alone (a bad up-card drops its whole deal); ``None``
    if nothing could be done.  The caller skips the other problems under the returned
    path until the next pass, since removing a list entry renumbers the entries after it.
    """
    if not path:
        return None
    parent = get_path(doc, path[:-1])
    key = path[-1]
    if isinstance(parent, list) and isinstance(key, int):
        container = path[-2] if len(path) >= 2 else None
        if isinstance(container, int) and len(path) >= 3 and path[-3] == "tricks":
            del parent[key:]  # a bad card: keep the cards before it, drop every later trick
            del get_path(doc, path[:-2])[container + 1 :]
        elif container in _ORDERED:
            del parent[key:]
        else:
            del parent[key]
        return path
    if isinstance(parent, dict):
        name = str(key)
        if kind == "missing" or name not in parent:
            if name == "phaseNumber" and len(path) >= 2:
                parent[name] = path[-2] if isinstance(path[-2], int) else 0
                return path
            if name in _REQUIRED_DEFAULTS:
                parent[name] = copy.deepcopy(_REQUIRED_DEFAULTS[name])
                return path
            return _repair(doc, path[:-1], "value")
        if name in _REQUIRED_DEFAULTS and kind != "extra":
            parent[name] = copy.deepcopy(_REQUIRED_DEFAULTS[name])
            return path
        if name in ("type", "dealer", "upCard", "initialState", "dealNumber", "branchIndex", "receiver"):
            return _repair(doc, path[:-1], "value")
        del parent[name]
        return path
    return None


def _sort_key(path: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in path)


def parse_document(obj: Any, *, source: str = "<input>", strict: bool = False) -> ParsedDocument:
    """Upgrade (1.0/1.1), validate and build the model.

    Strict: raise the first schema problem.  Lenient: repair and collect every problem.
    Neither caps the number of deals: past the reference's cap
    (:data:`~engine.model.MAX_DEALS`) every deal is read, with a warning.

    Raises:
        SchemaError: strict mode and the document is invalid, or (lenient) it is not an
            EGN object at all.
    """
    from .upgrade import split_production, upgrade_document

    if not isinstance(obj, dict):
        raise SchemaError(f"an EGN document is a JSON object, not {json_type(obj)}", Place(source=source))
    # The input is never modified: split_production and upgrade_document return copies,
    # and a lenient repair works on a deep copy made only when there is something to repair.
    doc: Any = obj
    production: dict[str, Any] = {}
    upgraded_from = None
    version = doc.get("version")
    old = isinstance(version, str) and OLD_VERSION_RE.fullmatch(version) is not None
    # Legacy Renderer fields (timings, views, ...) are production data, kept aside: always
    # for an old file or a lenient load; a strict load of a current file refuses them, as
    # the reference does.
    if old or not strict:
        doc, production = split_production(doc)
    if old:
        upgraded_from = version
        doc = upgrade_document(doc)
    if strict:
        document = validate_document(doc, source=source, reference=False)
        over = deal_count_problem(len(document.deals), source, severity="warning")
        return ParsedDocument(document=document, problems=(over,) if over else (), production=production, upgraded_from=upgraded_from)
    clean = valid_as_is(doc)
    if clean is not None:
        over = deal_count_problem(len(clean.deals), source, severity="warning")
        return ParsedDocument(document=clean, problems=(over,) if over else (), production=production, upgraded_from=upgraded_from)
    problems: list[Problem] = []
    copied = old
    for _ in range(50):
        found = find_problems(doc, source, VERSION_RE)
        if not found:
            break
        if not copied:
            doc, copied = copy.deepcopy(doc), True
        for _path, problem in found:
            if problem not in problems:
                problems.append(problem)
        # Repair every problem of this pass, deepest and last first, so that cutting a
        # list does not shift the paths still to repair; a path inside one already
        # repaired waits for the next pass.
        fixed = False
        done: list[tuple[Any, ...]] = []
        for path, problem in sorted(found, key=lambda f: _sort_key(f[0]), reverse=True):
            if any(path[: len(d)] == d or d[: len(path)] == path for d in done):
                continue
            if path == ("version",):
                doc["version"] = "1.4"
            elif path == ("fileType",):
                doc["fileType"] = FILE_TYPE
            else:
                kind = "extra" if problem.message.startswith("unexpected property") else (
                    "missing" if problem.message.startswith("required property") else "value")
                changed = _repair(doc, path, kind)
                if changed is None:
                    continue
                path = changed  # an enclosing value may have gone: its other problems wait for the next pass
            done.append(path)
            fixed = True
        if not fixed:
            raise problems[-1].error()
    else:  # pragma: no cover - 50 passes means something is badly wrong
        raise SchemaError("too many problems to repair", Place(source=source))
    document = EgnDocument.model_validate(doc)
    over = deal_count_problem(len(document.deals), source, severity="warning")
    if over is not None:
        problems.append(over)
    return ParsedDocument(
        document=document,
        problems=tuple(problems),
        production=production,
        upgraded_from=upgraded_from,
    )
