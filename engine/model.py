"""Pydantic v2 models of an EGN document.

The models are the schema: types, required keys, ``additionalProperties: false``, every
length and count limit, the date format, digit-only annotation keys.  Checking a JSON
value against them and wording the errors is :mod:`engine.validate`; the lenient load
that repairs what it can is :mod:`engine.repair`.

:mod:`engine.fastcheck` is a hand-written, conservative copy of these rules that lets the
codecs skip building a model for ordinary valid documents.  Any rule made stricter here
must be made stricter there too (``tests/codec/test_fastpath.py`` checks that whatever it
accepts, these models accept).
"""

from __future__ import annotations

import re
from datetime import date as _date
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
)

from .cards import CARD_RE
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
    "player_name",
    "date_ok",
    "CALLS",
    "FILE_TYPE",
    "VERSION_RE",
    "REFERENCE_VERSION_RE",
    "OLD_VERSION_RE",
    "DEAL_STRING_RE",
    "MAX_DEALS",
]

FILE_TYPE = "Euchre Game Notation"
REFERENCE_VERSION_RE = re.compile(r"^1\.[234](?:\.\d+)?$")
#: We also read the seed documents' "1.5" as the same family.
VERSION_RE = re.compile(r"^1\.[2345](?:\.\d+)?$")
OLD_VERSION_RE = re.compile(r"^1\.[01](?:\.\d+)?$")
DEAL_STRING_RE = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")
CALLS = ("Pass", "Order", "s", "h", "d", "c", "n", "x")
#: The reference schema's cap on a game's deals (EGN-SPEC 1.1).  It is the reference's,
#: not the game's: reference validation (``validate_document(reference=True)``, what the
#: codecs run before writing a binary file) refuses more, and the binary forms hold at most
#: this many; this engine reads and replays any number (a live game goes on past it), and
#: a lenient load of a longer game says the reference would refuse it.
MAX_DEALS = 100


def _json_int(value: Any) -> Any:
    # JSON-schema "integer" accepts 3.0; bool is not an integer.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}(?::?\d{2})?)$"
)
_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")


def _date_text(value: str) -> str:
    m = _RFC3339.fullmatch(value)
    if m:
        y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
        try:
            _date(y, mo, d)
        except ValueError:
            m = None
        else:
            if hh > 23 or mm > 59 or ss > 60:
                m = None
    if m is None and not _LOCAL.fullmatch(value):
        raise ValueError(f"{value!r} is not a date-time (e.g. '2026-05-30T03:51' or '2026-05-30T03:51:00Z')")
    return value


def _annotation_keys(value: dict[str, Any]) -> dict[str, Any]:
    for key in value:
        if not re.fullmatch(r"[0-9]+", key):
            raise ValueError(f"annotation key {key!r} is not a number")
    return value


JInt = Annotated[int, BeforeValidator(_json_int)]
Seat = Annotated[int, BeforeValidator(_json_int), Field(ge=0, le=9)]
#: Card notation, checked by the pattern in pydantic's core (engine.validate words the
#: error as "'Zz' is not a card ...").  Rust's ``$`` is the end of the text, as ``fullmatch``.
CardText = Annotated[str, Field(pattern=CARD_RE.pattern)]
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


#: Each ruleset field's type, read once: the validator below runs on every load, and
#: each read of ``Ruleset.model_fields`` goes through a class property (about 0.35 us).
_RULESET_TYPES: dict[str, Any] = {name: field.annotation for name, field in Ruleset.model_fields.items()}


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
                annotation = _RULESET_TYPES.get(key)
                if annotation is None:
                    continue
                if annotation is bool and not isinstance(v, bool):
                    raise ValueError(f"ruleset.{key} must be a boolean, not {v!r}")
                if annotation is int and (isinstance(v, bool) or not isinstance(_json_int(v), int)):
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
    deals: list[Union[Deal, str]]  # at most MAX_DEALS for the reference (engine.validate checks it)

    def to_json(self) -> dict[str, Any]:
        """The document as EGN JSON (only the keys that were present)."""
        return self.model_dump(mode="json", exclude_unset=True)


def date_ok(value: str) -> bool:
    """True when ``value`` is a date-time the schema's ``date`` accepts."""
    try:
        _date_text(value)
    except ValueError:
        return False
    return True
