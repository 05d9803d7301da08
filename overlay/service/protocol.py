"""Every message shape of the overlay service, as pydantic models (one module, one vocabulary).

A channel's settings document is not a message: it lives below both faces, in
:mod:`renderer.settings`, and the messages here only name it.

JSON keys are camelCase (like :meth:`engine.state.GameState.to_json`); Python names are
snake_case.  Dump with :func:`dump` so aliases are used and ``None`` fields stay visible.

Sockets
-------
``WS /ws/overlay/{channel}?output=...`` (page, read-only)
    page -> server: :class:`PageHello`, :class:`PageResync`, :class:`PageDrawn`
    server -> page: :class:`SceneMessage` (also the full snapshot, ``snapshot: true``),
    :class:`ByeMessage`
``WS /api/channels/{id}/feed`` (logger, token)
    logger -> server: :class:`FeedAction`, :class:`FeedGame`, or a binary frame holding a
    whole game (``.egnb``/JSON bytes)
    server -> logger: :class:`FeedAck`, :class:`FeedRefused`
``WS /api/channels/{id}/state/ws?output=...`` (third-party graphics, read-only)
    server -> client: :class:`StateMessage` on connect and on every step change
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from renderer.settings import ChannelSettings, OutputName

__all__ = [
    "ChannelCreate",
    "ControlOp",
    "ControlRequest",
    "ActionKind",
    "ActionIn",
    "LoadPath",
    "FollowRequest",
    "PageHello",
    "PageResync",
    "PageDrawn",
    "PageMessage",
    "SceneMessage",
    "ByeMessage",
    "FeedAction",
    "FeedGame",
    "FeedMessage",
    "FeedAck",
    "FeedRefused",
    "StateMessage",
    "parse_page_message",
    "parse_feed_message",
    "dump",
]

class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


M = TypeVar("M", bound=BaseModel)


def dump(model: BaseModel) -> dict[str, Any]:
    """The JSON form of a message (camelCase keys)."""
    return model.model_dump(mode="json", by_alias=True)


# --------------------------------------------------------------------------- channels


class ChannelCreate(_Model):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$", description="URL-safe channel id.")
    title: str = Field("", max_length=128)
    settings: ChannelSettings | None = None


# --------------------------------------------------------------------------- control

ControlOp = Literal[
    "play", "pause", "toggle", "next", "step", "back", "seek", "speed", "loop", "auto", "live", "branch", "mainline"
]


class ControlRequest(_Model):
    """A Director command.  One argument name for every setting: ``value`` (``speed`` takes a
    number, ``loop`` and ``auto`` take true/false; ``auto`` off = operator NEXT).  ``seek``
    takes ``step`` (the timeline index from 0), or ``deal`` and, in a match, ``game``, counted
    from 1 as people count them and as the screen and ``inspect`` show them (the JSON
    contract's ``dealNumber`` is the file's own field and is not used here).  ``speed=`` is
    still read for ``speed`` (the older spelling).  ``branch`` puts an alternative line on
    air: ``deal`` (from 1) and ``line`` (from 1, the file's order of that deal's
    ``alternativeLines``), ``game`` in a match; ``mainline`` returns (see
    :mod:`overlay.service.branching`)."""

    op: ControlOp
    game: int | None = Field(None, ge=1)
    line: int | None = Field(None, ge=1)
    step: int | None = Field(None, ge=0)
    deal: int | None = Field(None, ge=1)
    speed: float | None = Field(None, gt=0.0, le=16.0)
    value: bool | float | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _words(cls, v: Any) -> Any:
        """Query strings: true/false/on/off/yes/no are switches, anything else a number
        ("1" is the number one, for ``speed?value=1``)."""
        if isinstance(v, str):
            word = v.strip().lower()
            if word in ("true", "on", "yes"):
                return True
            if word in ("false", "off", "no"):
                return False
            try:
                return float(word)
            except ValueError:
                raise ValueError(f"{v!r} is neither true/false nor a number") from None
        return v


# --------------------------------------------------------------------------- feed

ActionKind = Literal["call", "discard", "card", "new_deal", "undo"]


class ActionIn(_Model):
    """One logger action.  ``seq`` numbers actions 1, 2, 3... per channel.

    call: ``call`` (``Pass``, ``Order``, suit letter, ``n``), optional ``alone``;
    discard / card: ``card``; new_deal: ``dealer`` and ``up_card`` (optional
    ``deal_number``, ``player_cards``); undo: removes the last action.

    Strict types on the wire: ``"seq": true``, ``"9"`` or ``9.0`` are refused, not coerced.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True)

    seq: int = Field(ge=1)
    kind: ActionKind
    call: str | None = Field(None, max_length=8)
    alone: bool | None = None
    alone_defender: int | None = Field(None, ge=-1, le=9)
    card: str | None = Field(None, max_length=4)
    dealer: int | None = Field(None, ge=0, le=9)
    up_card: str | None = Field(None, max_length=4)
    deal_number: int | None = Field(None, ge=0)
    player_cards: list[list[str]] | None = None


class LoadPath(_Model):
    path: str = Field(min_length=1, max_length=4096)


class FollowRequest(_Model):
    path: str = Field(min_length=1, max_length=4096)


# --------------------------------------------------------------------------- page socket


class PageHello(_Model):
    type: Literal["hello"]
    output: OutputName = "program"
    width: int | None = None
    height: int | None = None
    visible: bool = True
    #: the API token, for the preview output (live hole cards); a page reads it from its URL's
    #: fragment (``#token=...``), which browsers never send to a server or write to its logs
    token: str | None = Field(default=None, max_length=256)


class PageResync(_Model):
    """Asks for a full snapshot (after reconnect, or when OBS shows the source again)."""

    type: Literal["resync"]
    reason: str = Field("", max_length=64)


class PageDrawn(_Model):
    """The page drew the scene with this ``seq`` (for operator status and lag)."""

    type: Literal["drawn"]
    seq: int
    step: int | None = None


PageMessage = Annotated[PageHello | PageResync | PageDrawn, Field(discriminator="type")]
_PAGE = TypeAdapter(PageMessage)


def parse_page_message(text: str) -> PageHello | PageResync | PageDrawn:
    return _PAGE.validate_json(text)


class SceneMessage(_Model):
    """The scene of one step for one output.

    The page draws ``scene`` at local time ``(now - received) * rate + age`` seconds into
    the step, so a page that was hidden or just reconnected draws the current picture at
    once instead of waiting for an animation.  ``scene`` is ``None`` when the channel has
    no game.
    """

    type: Literal["scene"] = "scene"
    seq: int
    channel: str
    output: OutputName
    step: int | None
    steps: int
    deal: int | None = None
    game: int | None = None  # a match: which game (index in the file) the step is in
    games: int = 0  # a match: how many games it holds (1 for a plain game)
    game_title: str | None = None  # the title the scene shows ("Final — Game 2 of 6")
    age: float = 0.0
    rate: float = 1.0
    playing: bool = False
    snapshot: bool = False
    jump: bool = False
    width: int = 1920
    height: int = 1080
    scene: Any = None


class ByeMessage(_Model):
    type: Literal["bye"] = "bye"
    reason: str


# --------------------------------------------------------------------------- feed socket


class FeedAction(_Model):
    type: Literal["action"]
    action: ActionIn


class FeedGame(_Model):
    """A whole game: ``document`` as a JSON object, or ``data`` as text (JSON or base64
    of a binary file, with ``base64: true``)."""

    type: Literal["game"]
    document: dict[str, Any] | None = None
    data: str | None = None
    base64: bool = False


FeedMessage = Annotated[FeedAction | FeedGame, Field(discriminator="type")]
_FEED = TypeAdapter(FeedMessage)


def parse_feed_message(text: str) -> FeedAction | FeedGame:
    """A feed socket's text frame: ``{"type": "action", "action": {…}}``, ``{"type": "game",
    …}``, or an action as ``POST …/actions`` takes it (``{"seq": 1, "kind": …}``, no ``type``).

    Raises:
        ValidationError: none of them (a bare action: its own fields' errors).
    """
    try:
        return _FEED.validate_json(text)
    except ValidationError:
        if not _bare(text):
            raise
        return FeedAction(type="action", action=ActionIn.model_validate_json(text))


def _bare(text: str) -> bool:
    """Whether the frame is an action sent without the feed's envelope: a JSON object with
    no ``type``."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "type" not in data


class FeedAck(_Model):
    """An accepted action or game.  ``warnings``: the engine's new warnings (rule breaches
    a logger records as facts: a renege, a card played twice), for the operator to see."""

    type: Literal["ack"] = "ack"
    seq: int | None = None
    duplicate: bool = False
    changed: bool = True
    correction: bool = False
    steps: int
    expected: int
    warnings: list[str] = Field(default_factory=list)


class FeedRefused(_Model):
    type: Literal["refused"] = "refused"
    seq: int | None = None
    status: int
    error: str
    kind: str
    expected: int | None = None


# --------------------------------------------------------------------------- state stream


class StateMessage(_Model):
    """The GameState one output shows now: ``program`` is ``delay`` seconds behind the live
    game (the anti-cheat delay), ``preview`` is live, ``clean`` is live; each state holds
    only what its output may show (:mod:`overlay.service.masking`).  ``deal`` in ``state``
    is the deal's position from 0 and ``dealNumber`` the file's own field; people count deals
    from 1 (``deal + 1``)."""

    type: Literal["state"] = "state"
    channel: str
    output: OutputName
    delay: float = 0.0  # seconds this output runs behind the live game
    step: int | None
    steps: int
    playing: bool
    game: int | None = None  # which game of a match the step is in (0 for a plain game)
    games: int = 0
    game_title: str | None = None
    #: the alternative line this output shows (``deal`` and ``line`` from 1, ``game`` from 1
    #: in a match): the state is a "what if", not the real play; None on the main line
    line: dict[str, Any] | None = None
    state: dict[str, Any] | None
