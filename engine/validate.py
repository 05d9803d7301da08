"""Strict validation of EGN JSON against the models, with errors that name the place.

:func:`validate_document` refuses what the reference's JSON-schema validator refuses and
raises one :class:`~engine.errors.SchemaError` naming the JSON path and the deal, phase
and index; :func:`find_problems` lists every problem with its path (what the lenient load
in :mod:`engine.repair` repairs).  :func:`accepts_document` is the fast yes of
:mod:`engine.fastcheck`, for the codecs.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from .cards import CARD_RE
from .errors import Place, Problem, SchemaError
from .model import (
    DEAL_STRING_RE,
    FILE_TYPE,
    MAX_DEALS,
    REFERENCE_VERSION_RE,
    VERSION_RE,
    Deal,
    EgnDocument,
    Metadata,
    date_ok,
)

__all__ = [
    "validate_document",
    "validate_deal",
    "deal_count_problem",
    "check_document",
    "accepts_document",
    "find_problems",
    "valid_as_is",
    "json_type",
    "get_path",
    "Found",
]

#: A problem with the JSON path it is at (a tuple of keys and indices).
Found = tuple[tuple[Any, ...], Problem]

_TAGS = {"EUCHRE_BIDDING", "TRICK_PLAY", "Deal", "str", "PlayerObject"}


def _path(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for part in loc:
        if isinstance(part, str) and (part in _TAGS or part.startswith(("function-", "constrained-"))):
            continue
        out.append(part)
    return tuple(out)


def _place(source: str, path: tuple[Any, ...], doc: Any) -> Place:
    """Turn a JSON path into a place: deal, phase (with its type), call / trick / card."""
    text = "/" + "/".join(str(p) for p in path)
    place = Place(source=source, path=text)
    if len(path) >= 2 and path[0] == "deals" and isinstance(path[1], int):
        place = place.with_(deal=path[1])
        rest = path[2:]
        deal = get_path(doc, path[:2])
        if len(rest) >= 2 and rest[0] == "alternativeLines" and isinstance(rest[1], int):
            place = place.with_(line=rest[1])
            deal = get_path(deal, rest[:2])
            rest = rest[2:]
        if len(rest) >= 2 and rest[0] == "phases" and isinstance(rest[1], int):
            phase = get_path(deal, rest[:2])
            ptype = phase.get("type") if isinstance(phase, dict) else None
            place = place.with_(phase=rest[1], phase_type=ptype if isinstance(ptype, str) else None)
            rest = rest[2:]
            if len(rest) >= 2 and rest[0] == "calls" and isinstance(rest[1], int):
                place = place.with_(call=rest[1])
            elif len(rest) >= 2 and rest[0] == "tricks" and isinstance(rest[1], int):
                place = place.with_(trick=rest[1])
                if len(rest) >= 3 and isinstance(rest[2], int):
                    place = place.with_(card=rest[2])
    return place


def get_path(doc: Any, path: tuple[Any, ...]) -> Any:
    cur = doc
    for part in path:
        try:
            cur = cur[part]
        except (KeyError, IndexError, TypeError):
            return None
    return cur


def _message(err: Any, value: Any) -> str:
    kind = err["type"]
    loc = err["loc"]
    if kind == "extra_forbidden":
        return f"unexpected property {loc[-1]!r}"
    if kind == "missing":
        return f"required property {loc[-1]!r} is missing"
    if kind == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == CARD_RE.pattern:
        return f"{value!r} is not a card (must match {CARD_RE.pattern})"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if kind.startswith("value_error"):
        return msg
    return f"{value!r}: {msg[0].lower() + msg[1:]}"


def _errors(exc: ValidationError, prefix: tuple[Any, ...], doc: Any, source: str) -> list[Found]:
    out = []
    seen: set[tuple[Any, ...]] = set()
    for err in exc.errors(include_url=False):
        path = prefix + _path(tuple(err["loc"]))
        if path in seen and err["type"] != "extra_forbidden":
            continue
        seen.add(path)
        value = get_path(doc, path) if err["type"] != "missing" else None
        place = _place(source, path, doc)
        message = _message(err, value)
        if place.deal is not None:  # the place says deal/phase/index; the JSON path helps editors too
            message += f" (at {place.path})"
        problem = Problem(place=place, message=message, kind="schema")
        out.append((path, problem))
    return out


def json_type(value: Any) -> str:
    """What a JSON value is, in JSON's words (for messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _top_level(doc: Any, source: str, version_re: re.Pattern[str], max_deals: int | None = None) -> list[Found]:
    def p(path: tuple[Any, ...], msg: str) -> tuple[tuple[Any, ...], Problem]:
        return (path, Problem(place=Place(source=source, path="/" + "/".join(map(str, path))), message=msg, kind="schema"))

    if not isinstance(doc, dict):
        return [p((), f"an EGN document is a JSON object, not {json_type(doc)}")]
    out = []
    for key in doc:
        if key not in ("fileType", "version", "metadata", "deals"):
            out.append(p((key,), f"unexpected property {key!r}"))
    for key in ("fileType", "version", "metadata", "deals"):
        if key not in doc:
            out.append(p((key,), f"required property {key!r} is missing"))
    if "fileType" in doc and doc["fileType"] != FILE_TYPE:
        out.append(p(("fileType",), f"{doc['fileType']!r}: must equal {FILE_TYPE!r}"))
    v = doc.get("version")
    if "version" in doc and not (isinstance(v, str) and version_re.fullmatch(v)):
        out.append(p(("version",), f"{v!r}: version must match {version_re.pattern!r}"))
    deals = doc.get("deals")
    if "deals" in doc:
        if not isinstance(deals, list):
            out.append(p(("deals",), f"deals must be an array, not {json_type(deals)}"))
        elif max_deals is not None and len(deals) > max_deals:
            found = deal_count_problem(len(deals), source)
            assert found is not None
            out.append((("deals",), found))
    return out


def deal_count_problem(count: int, source: str, *, severity: str = "error") -> Problem | None:
    """The reference's refusal of a game with more than :data:`~engine.model.MAX_DEALS` deals
    (``None``: within it).  This engine reads longer games: a lenient load reports this as
    a warning, since such a file cannot be written in a binary form or read by the reference."""
    if count <= MAX_DEALS:
        return None
    return Problem(
        Place(source=source, path="/deals"),
        f"{count} deals: the EGN schema allows at most {MAX_DEALS} (the reference and the binary forms refuse more)",
        "schema",
        severity,
    )


def find_problems(doc: Any, source: str, version_re: re.Pattern[str], *, max_deals: int | None = None) -> list[Found]:
    """Every schema problem of a JSON document, each with its path (``max_deals``: the
    reference's cap on deals, checked when given)."""
    out = _top_level(doc, source, version_re, max_deals)
    if not isinstance(doc, dict):
        return out
    if isinstance(doc.get("metadata"), dict):
        try:
            Metadata.model_validate(doc["metadata"])
        except ValidationError as exc:
            out += _errors(exc, ("metadata",), doc, source)
    elif "metadata" in doc:
        out.append((("metadata",), Problem(Place(source=source, path="/metadata"), "metadata must be an object", "schema")))
    deals = doc.get("deals")
    if isinstance(deals, list):
        for i, deal in enumerate(deals):
            if isinstance(deal, str):
                if not DEAL_STRING_RE.fullmatch(deal):
                    out.append((("deals", i), Problem(Place(source=source, deal=i, path=f"/deals/{i}"), f"{deal[:40]!r} is not a packed deal (base64)", "schema")))
                continue
            try:
                Deal.model_validate(deal)
            except ValidationError as exc:
                out += _errors(exc, ("deals", i), doc, source)
    return out


def validate_document(obj: Any, *, source: str = "<input>", reference: bool = True) -> EgnDocument:
    """Validate EGN JSON exactly as strictly as the reference schema; return the model.

    ``reference=True`` accepts versions 1.2–1.4 only and at most
    :data:`~engine.model.MAX_DEALS` deals (what the reference accepts); ``False`` also
    accepts "1.5" and any number of deals.  Nothing is upgraded here.

    Raises:
        SchemaError: the first problem, naming the JSON path and the place.
    """
    version_re = REFERENCE_VERSION_RE if reference else VERSION_RE
    if not accepts_document(obj, reference=reference):
        problems = find_problems(obj, source, version_re, max_deals=MAX_DEALS if reference else None)
        if problems:
            first = problems[0][1]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise SchemaError(first.message + more, first.place)
    return EgnDocument.model_validate(obj)


def validate_deal(obj: Any, index: int, *, source: str = "<input>") -> Deal:
    """Validate one deal JSON, the document's deal at ``index``: what
    :func:`validate_document` makes of it, and the error it raises for a document whose
    only problems are in this deal (the same message, place and count of the others).

    A live game (:mod:`engine.live`) checks only the deal an action changed this way.

    Raises:
        SchemaError: the first problem, naming the JSON path and the place.
    """
    try:
        return Deal.model_validate(obj)
    except ValidationError as exc:
        # the places are read off a document holding the deal at ``index``: a mapping
        # stands for the deals list (get_path reads both by subscript)
        problems = _errors(exc, ("deals", index), {"deals": {index: obj}}, source)
    first = problems[0][1]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    raise SchemaError(first.message + more, first.place)


def accepts_document(obj: Any, *, reference: bool = True, deals_checked: bool = False) -> bool:
    """True only when ``obj`` certainly passes :func:`validate_document` (no model is built).

    Also implies that every annotation key is decimal digits.  ``False`` means "not
    certain": call :func:`validate_document`, which alone words the error.
    ``deals_checked``: the caller vouches for the deals (a codec decoder that built them
    from valid parts); the header and metadata are checked all the same.
    """
    from .fastcheck import accepts

    version = REFERENCE_VERSION_RE if reference else VERSION_RE
    return accepts(obj, version, date_ok, DEAL_STRING_RE, deals_checked=deals_checked, max_deals=MAX_DEALS if reference else None)


def check_document(obj: Any, *, source: str = "<input>", reference: bool = True) -> None:
    """Exactly :func:`validate_document`'s verdict and errors, without building the model.

    Raises:
        SchemaError: as :func:`validate_document`.
    """
    if not accepts_document(obj, reference=reference):
        validate_document(obj, source=source, reference=reference)


def valid_as_is(doc: Any, version_re: re.Pattern[str] = VERSION_RE) -> EgnDocument | None:
    """The model of a document with no problem at all, else ``None`` (then :func:`find_problems` says why).

    One validation instead of :func:`find_problems` and then a build: what every valid
    document (nearly every load) costs.
    """
    if not isinstance(doc, dict) or _top_level(doc, "", version_re):
        return None
    if any(isinstance(deal, str) and not DEAL_STRING_RE.fullmatch(deal) for deal in doc["deals"]):
        return None
    try:
        return EgnDocument.model_validate(doc)
    except ValidationError:
        return None
