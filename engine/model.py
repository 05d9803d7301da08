"""Pydantic v2 models of an EGN document (spec section 1) and its validation.

Two ways in:

* :func:`validate_document` — strict: refuses what the reference's JSON-schema validator
  refuses (types, required keys, ``additionalProperties: false``, every length and count
  limit, the version pattern, the date format, digit-only annotation keys).  Raises one
  :class:`~engine.errors.SchemaError` naming the JSON path.
* :func:`parse_document` — returns the model plus every problem; ``strict=False`` repairs
  what it can (drops an unknown key, cuts a call list or a trick at the first bad entry,
  drops a deal it cannot read) and keeps going, so a live logger's half-typed game still
  shows.

Old versions (1.0, 1.1) are upgraded before validation (:mod:`engine.upgrade`); the
legacy Renderer fields are returned aside as production data.

:mod:`engine.fastcheck` is a hand-written, conservative copy of these rules that lets the
codecs skip building a model for ordinary valid documents.  Any rule made stricter here
must be made stricter there too (``tests/test_codec_fastpath.py`` checks that whatever it
accepts, these models accept).
"""

from __future__ import annotations

import copy
import re
from datetime import date as _date
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from .cards import CARD_RE
from .errors import Place, Problem, SchemaError
from .ruleset import Ruleset

__all__ = [
    "EgnDocument",
    "Metadata",
    "Player",
    "PlayerObject",
    "Deal",
    "InitialState",
    "BiddingPhase",
    "TrickPlayPhase",
    "AlternativeLine",
    "CardExchange",
    "validate_document",
    "check_document",
    "accepts_document",
    "parse_document",
    "ParsedDocument",
    "CALLS",
    "VERSION_RE",
    "REFERENCE_VERSION_RE",
]

FILE_TYPE = "Euchre Game Notation"
REFERENCE_VERSION_RE = re.compile(r"^1\.[234](?:\.\d+)?$")
#: We also read the seed documents' "1.5" as the same family.
VERSION_RE = re.compile(r"^1\.[2345](?:\.\d+)?$")
OLD_VERSION_RE = re.compile(r"^1\.[01](?:\.\d+)?$")
DEAL_STRING_RE = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")
CALLS = ("Pass", "Order", "s", "h", "d", "c", "n", "x")


def _json_int(value: Any) -> Any:
    # JSON-schema "integer" accepts 3.0; bool is not an integer.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _card(value: str) -> str:
    if not CARD_RE.match(value):
        raise ValueError(f"{value!r} is not a card (must match {CARD_RE.pattern})")
    return value


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}(?::?\d{2})?)$"
)
_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")


def _date_text(value: str) -> str:
    m = _RFC3339.match(value)
    if m:
        y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
        try:
            _date(y, mo, d)
        except ValueError:
            m = None
        else:
            if hh > 23 or mm > 59 or ss > 60:
                m = None
    if m is None and not _LOCAL.match(value):
        raise ValueError(f"{value!r} is not a date-time (e.g. '2026-05-30T03:51' or '2026-05-30T03:51:00Z')")
    return value


def _annotation_keys(value: dict[str, Any]) -> dict[str, Any]:
    for key in value:
        if not re.fullmatch(r"[0-9]+", key):
            raise ValueError(f"annotation key {key!r} is not a number")
    return value


JInt = Annotated[int, BeforeValidator(_json_int)]
Seat = Annotated[int, BeforeValidator(_json_int), Field(ge=0, le=9)]
CardText = Annotated[str, AfterValidator(_card)]
CardList = Annotated[list[CardText], Field(max_length=10)]
Text64 = Annotated[str, Field(max_length=64)]
AnnotationList = Annotated[list[Annotated[str, Field(max_length=1024)]], Field(max_length=50)]
AnnotationMap = Annotated[dict[str, AnnotationList], AfterValidator(_annotation_keys)]
CallText = Literal["Pass", "Order", "s", "h", "d", "c", "n", "x"]

_CFG = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=True)


class PlayerId(BaseModel):
    model_config = _CFG
    id: Text64
    source: Text64


class PlayerObject(BaseModel):
    model_config = _CFG
    name: Text64
    playerIds: Annotated[list[PlayerId], Field(max_length=10)] | None = None
    id: Text64 | None = None


Player = Union[Text64, PlayerObject]


def player_name(player: Player) -> str:
    return player if isinstance(player, str) else player.name


class Metadata(BaseModel):
    model_config = _CFG
    gameId: Text64 | None = None
    title: Annotated[str, Field(max_length=128)] | None = None
    description: Annotated[str, Field(max_length=1024)] | None = None
    players: Annotated[list[Player], Field(max_length=10)]
    initialScore: Annotated[list[JInt], Field(max_length=2)]
    finalScore: Annotated[list[JInt], Field(max_length=2)] | None = None
    date: Annotated[str, Field(max_length=64), AfterValidator(_date_text)] | None = None
    ruleset: Annotated[Ruleset, Field(strict=False)] | None = None

    @field_validator("ruleset", mode="before")
    @classmethod
    def _ruleset_types(cls, value: Any) -> Any:
        # The model is lax for the enum; JSON types are checked here as the schema does.
        if isinstance(value, dict):
            for key, v in value.items():
                field = Ruleset.model_fields.get(key)
                if field is None:
                    continue
                if field.annotation is bool and not isinstance(v, bool):
                    raise ValueError(f"ruleset.{key} must be a boolean, not {v!r}")
                if field.annotation is int and (isinstance(v, bool) or not isinstance(_json_int(v), int)):
                    raise ValueError(f"ruleset.{key} must be an integer, not {v!r}")
                if key == "loner_lead" and v not in ("LEFT_OF_DEALER", "LEFT_OF_LONER"):
                    raise ValueError(f"ruleset.loner_lead must be LEFT_OF_DEALER or LEFT_OF_LONER, not {v!r}")
            return {k: _json_int(v) for k, v in value.items()}
        return value

    @property
    def rules(self) -> Ruleset:
        return self.ruleset if self.ruleset is not None else Ruleset()

    @property
    def player_names(self) -> list[str]:
        return [player_name(p) for p in self.players]


class InitialState(BaseModel):
    model_config = _CFG
    dealer: Seat
    upCard: CardText
    playerCards: Annotated[list[CardList], Field(max_length=10)] | None = None


class CardExchange(BaseModel):
    model_config = _CFG
    sender: Seat | None = None
    receiver: Seat
    cards: CardList


class BiddingPhase(BaseModel):
    model_config = _CFG
    phaseNumber: JInt
    type: Literal["EUCHRE_BIDDING"]
    calls: Annotated[list[CallText], Field(max_length=16)]
    isAlone: bool | None = None
    aloneDefender: JInt | None = None
    discard: CardText | None = None
    cardExchanges: Annotated[list[CardExchange], Field(max_length=4)] | None = None
    callAnnotations: AnnotationMap | None = None


class TrickPlayPhase(BaseModel):
    model_config = _CFG
    phaseNumber: JInt
    type: Literal["TRICK_PLAY"]
    tricks: Annotated[list[CardList], Field(max_length=10)]
    isAlone: bool | None = None
    playAnnotations: AnnotationMap | None = None


Phase = Annotated[Union[BiddingPhase, TrickPlayPhase], Field(discriminator="type")]


class AlternativeLine(BaseModel):
    model_config = _CFG
    branchIndex: Annotated[int, BeforeValidator(_json_int), Field(ge=0)]
    phases: Annotated[list[Phase], Field(min_length=1)]


class Deal(BaseModel):
    model_config = _CFG
    dealNumber: Annotated[int, BeforeValidator(_json_int), Field(ge=0)]
    initialState: InitialState
    phases: Annotated[list[Phase], Field(max_length=2)]
    alternativeLines: Annotated[list[AlternativeLine], Field(max_length=50)] | None = None

    @property
    def bidding(self) -> BiddingPhase | None:
        return next((p for p in self.phases if isinstance(p, BiddingPhase)), None)

    @property
    def play(self) -> TrickPlayPhase | None:
        return next((p for p in self.phases if isinstance(p, TrickPlayPhase)), None)


class EgnDocument(BaseModel):
    """A whole game.  ``deals`` holds :class:`Deal` objects or pre-packed condensed strings."""

    model_config = _CFG
    fileType: Literal["Euchre Game Notation"]
    version: str
    metadata: Metadata
    deals: Annotated[list[Union[Deal, str]], Field(max_length=100)]

    def to_json(self) -> dict[str, Any]:
        """The document as EGN JSON (only the keys that were present)."""
        return self.model_dump(mode="json", exclude_unset=True)


# --------------------------------------------------------------------------- errors


_TAGS = {"EUCHRE_BIDDING", "TRICK_PLAY", "Deal", "str", "PlayerObject", "function-after[_card(), str]"}


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
        deal = _get(doc, path[:2])
        if len(rest) >= 2 and rest[0] == "alternativeLines" and isinstance(rest[1], int):
            place = place.with_(line=rest[1])
            deal = _get(deal, rest[:2])
            rest = rest[2:]
        if len(rest) >= 2 and rest[0] == "phases" and isinstance(rest[1], int):
            phase = _get(deal, rest[:2])
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


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
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
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if kind.startswith("value_error"):
        return msg
    return f"{value!r}: {msg[0].lower() + msg[1:]}"


def _errors(exc: ValidationError, prefix: tuple[Any, ...], doc: Any, source: str) -> list[tuple[tuple[Any, ...], Problem]]:
    out = []
    seen: set[tuple[Any, ...]] = set()
    for err in exc.errors(include_url=False):
        path = prefix + _path(tuple(err["loc"]))
        if path in seen and err["type"] != "extra_forbidden":
            continue
        seen.add(path)
        value = _get(doc, path) if err["type"] != "missing" else None
        place = _place(source, path, doc)
        message = _message(err, value)
        if place.deal is not None:  # the place says deal/phase/index; the JSON path helps editors too
            message += f" (at {place.path})"
        problem = Problem(place=place, message=message, kind="schema")
        out.append((path, problem))
    return out


def _json_type(value: Any) -> str:
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


def _top_level(doc: Any, source: str, version_re: re.Pattern[str]) -> list[tuple[tuple[Any, ...], Problem]]:
    def p(path: tuple[Any, ...], msg: str) -> tuple[tuple[Any, ...], Problem]:
        return (path, Problem(place=Place(source=source, path="/" + "/".join(map(str, path))), message=msg, kind="schema"))

    if not isinstance(doc, dict):
        return [p((), f"an EGN document is a JSON object, not {_json_type(doc)}")]
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
    if "version" in doc and not (isinstance(v, str) and version_re.match(v)):
        out.append(p(("version",), f"{v!r}: version must match {version_re.pattern!r}"))
    deals = doc.get("deals")
    if "deals" in doc:
        if not isinstance(deals, list):
            out.append(p(("deals",), f"deals must be an array, not {_json_type(deals)}"))
        elif len(deals) > 100:
            out.append(p(("deals",), f"{len(deals)} deals: at most 100 are allowed"))
    return out


def _check(doc: Any, source: str, version_re: re.Pattern[str]) -> list[tuple[tuple[Any, ...], Problem]]:
    """Every schema problem of a JSON document, each with its path."""
    out = _top_level(doc, source, version_re)
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
        for i, deal in enumerate(deals[:100]):
            if isinstance(deal, str):
                if not DEAL_STRING_RE.match(deal):
                    out.append((("deals", i), Problem(Place(source=source, deal=i, path=f"/deals/{i}"), f"{deal[:40]!r} is not a packed deal (base64)", "schema")))
                continue
            try:
                Deal.model_validate(deal)
            except ValidationError as exc:
                out += _errors(exc, ("deals", i), doc, source)
    return out


def validate_document(obj: Any, *, source: str = "<input>", reference: bool = True) -> EgnDocument:
    """Validate EGN JSON exactly as strictly as the reference schema; return the model.

    ``reference=True`` accepts versions 1.2–1.4 only (what the reference accepts);
    ``False`` also accepts "1.5".  Nothing is upgraded here.

    Raises:
        SchemaError: the first problem, naming the JSON path and the place.
    """
    version_re = REFERENCE_VERSION_RE if reference else VERSION_RE
    if not accepts_document(obj, reference=reference):
        problems = _check(obj, source, version_re)
        if problems:
            first = problems[0][1]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise SchemaError(first.message + more, first.place)
    return EgnDocument.model_validate(obj)


def _date_ok(value: str) -> bool:
    try:
        _date_text(value)
    except ValueError:
        return False
    return True


def accepts_document(obj: Any, *, reference: bool = True, deals_checked: bool = False) -> bool:
    """True only when ``obj`` certainly passes :func:`validate_document` (no model is built).

    Also implies that every annotation key is decimal digits.  ``False`` means "not
    certain": call :func:`validate_document`, which alone words the error.
    ``deals_checked``: the caller vouches for the deals (a codec decoder that built them
    from valid parts); the header and metadata are checked all the same.
    """
    from .fastcheck import accepts

    version = REFERENCE_VERSION_RE if reference else VERSION_RE
    return accepts(obj, version, _date_ok, DEAL_STRING_RE, deals_checked=deals_checked)


def check_document(obj: Any, *, source: str = "<input>", reference: bool = True) -> None:
    """Exactly :func:`validate_document`'s verdict and errors, without building the model.

    Raises:
        SchemaError: as :func:`validate_document`.
    """
    if not accepts_document(obj, reference=reference):
        validate_document(obj, source=source, reference=reference)


# --------------------------------------------------------------------------- lenient


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


def _repair(doc: Any, path: tuple[Any, ...], kind: str) -> bool:
    """Change ``doc`` in place so that the problem at ``path`` goes away; False if impossible."""
    if not path:
        return False
    parent = _get(doc, path[:-1])
    key = path[-1]
    if isinstance(parent, list) and isinstance(key, int):
        container = path[-2] if len(path) >= 2 else None
        if isinstance(container, int) and len(path) >= 3 and path[-3] == "tricks":
            del parent[key:]  # a bad card: keep the cards before it, drop every later trick
            del _get(doc, path[:-2])[container + 1 :]
        elif container in _ORDERED:
            del parent[key:]
        else:
            del parent[key]
        return True
    if isinstance(parent, dict):
        name = str(key)
        if kind == "missing" or name not in parent:
            if name == "phaseNumber" and len(path) >= 2:
                parent[name] = path[-2] if isinstance(path[-2], int) else 0
                return True
            if name in _REQUIRED_DEFAULTS:
                parent[name] = copy.deepcopy(_REQUIRED_DEFAULTS[name])
                return True
            return _repair(doc, path[:-1], "value")
        if name in _REQUIRED_DEFAULTS and kind != "extra":
            parent[name] = copy.deepcopy(_REQUIRED_DEFAULTS[name])
            return True
        if name in ("type", "dealer", "upCard", "initialState", "dealNumber", "branchIndex", "receiver"):
            return _repair(doc, path[:-1], "value")
        del parent[name]
        return True
    return False


def _sort_key(path: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in path)


def parse_document(obj: Any, *, source: str = "<input>", strict: bool = False) -> ParsedDocument:
    """Upgrade (1.0/1.1), validate and build the model.

    Strict: raise the first schema problem.  Lenient: repair and collect every problem.

    Raises:
        SchemaError: strict mode and the document is invalid, or (lenient) it is not an
            EGN object at all.
    """
    from .upgrade import split_production, upgrade_document

    if not isinstance(obj, dict):
        raise SchemaError(f"an EGN document is a JSON object, not {_json_type(obj)}", Place(source=source))
    # The input is never modified: split_production and upgrade_document return copies,
    # and a lenient repair works on a deep copy made only when there is something to repair.
    doc: Any = obj
    production: dict[str, Any] = {}
    upgraded_from = None
    version = doc.get("version")
    old = isinstance(version, str) and OLD_VERSION_RE.match(version) is not None
    # Legacy Renderer fields (timings, views, ...) are production data, kept aside: always
    # for an old file or a lenient load; a strict load of a current file refuses them, as
    # the reference does.
    if old or not strict:
        doc, production = split_production(doc)
    if old:
        upgraded_from = version
        doc = upgrade_document(doc)
    if strict:
        return ParsedDocument(document=validate_document(doc, source=source, reference=False), production=production, upgraded_from=upgraded_from)
    problems: list[Problem] = []
    copied = old
    for _ in range(50):
        found = _check(doc, source, VERSION_RE)
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
                if not _repair(doc, path, kind):
                    continue
            done.append(path)
            fixed = True
        if not fixed:
            raise problems[-1].error()
    else:  # pragma: no cover - 50 passes means something is badly wrong
        raise SchemaError("too many problems to repair", Place(source=source))
    return ParsedDocument(
        document=EgnDocument.model_validate(doc),
        problems=tuple(problems),
        production=production,
        upgraded_from=upgraded_from,
    )
