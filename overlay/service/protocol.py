"""Every message shape of the overlay service, as pydantic models (one module, one vocabulary).

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

from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator
from pydantic.alias_generators import to_camel

from renderer.matchdata import MatchData
from renderer.theme import Theme
from renderer.timing import Timing
from renderer.view import View

__all__ = [
    "OUTPUTS",
    "OutputName",
    "OutputSettings",
    "AnalysisSettings",
    "ChannelSettings",
    "ViewSwitch",
    "Look",
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

OutputName = Literal["program", "preview", "clean"]
OUTPUTS: tuple[OutputName, ...] = ("program", "preview", "clean")

MAX_DELAY = 600.0


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


M = TypeVar("M", bound=BaseModel)


def dump(model: BaseModel) -> dict[str, Any]:
    """The JSON form of a message (camelCase keys)."""
    return model.model_dump(mode="json", by_alias=True)


# --------------------------------------------------------------------------- settings


class OutputSettings(_Model):
    """One output of a channel: what it shows and how far behind live it runs."""

    delay: float = Field(
        0.0,
        ge=0.0,
        le=MAX_DELAY,
        title="Delay (s)",
        description="Seconds this output runs behind the live feed (anti-cheat hand delay).",
    )
    view: View | None = Field(
        None,
        title="View",
        description="Layout and perspective of this output; null = the output's default view.",
    )
    width: int = Field(1920, ge=1280, le=3840, title="Width", description="Page width in pixels.")
    height: int = Field(1080, ge=720, le=2160, title="Height", description="Page height in pixels.")
    follow_switches: bool = Field(
        True,
        title="Follow view switches",
        description="From each view switch's step on, show its named view instead of this output's own.",
    )


class ViewSwitch(_Model):
    """From ``step`` on (until the next switch), outputs that follow switches show a named view
    (the EGN Renderer's ``viewSwitches``)."""

    step: int = Field(ge=0, title="Step", description="Timeline step (0-based) where the switch happens.")
    view: str = Field(min_length=1, max_length=64, title="View", description="Id of one of the channel's named views.")


class Look(_Model):
    """A whole look, saved by name and exported as one file: the named views, theme and timing."""

    views: tuple[View, ...] = Field((), max_length=32, title="Views", description="Named views of the look.")
    theme: Theme = Field(default_factory=Theme, title="Theme", description="Colours, fonts and card style.")
    timing: Timing = Field(default_factory=Timing, title="Timing", description="Step timing and the deal transition.")


class AnalysisSettings(_Model):
    """Analysis on air for one channel (``overlay/service/analysis.py``): off unless turned on."""

    enabled: bool = Field(
        False,
        title="Analysis on air",
        description="Draw the analysis elements (win-probability bar and graph, best play, play quality, bidding table) on this channel's pages; computed beside the server in a worker process.",
    )
    clean: Literal["public", "none"] = Field(
        "public",
        title="Clean output",
        description="What the clean output (no hole cards) shows: public = the win probability from the score, dealer and contract only, labelled EST.; none = no analysis at all.",
    )


def _default_outputs() -> dict[str, OutputSettings]:
    return {name: OutputSettings() for name in OUTPUTS}


class ChannelSettings(_Model):
    """A channel's settings document.  ``revision`` guards against stale writes."""

    revision: int = Field(0, ge=0, title="Revision", description="Bumped on every accepted write.")
    title: str = Field("", max_length=128, title="Title", description="Operator-facing name.")
    outputs: dict[OutputName, OutputSettings] = Field(
        default_factory=_default_outputs,  # type: ignore[arg-type]
        title="Outputs",
        description="Program, preview and clean outputs, each with its own view and delay.",
    )
    theme: Theme = Field(default_factory=Theme, title="Theme", description="Colours, fonts and card style.")
    timing: Timing = Field(default_factory=Timing, title="Timing", description="Run time, hold and easing per step kind; the deal transition.")
    match: MatchData = Field(
        default_factory=MatchData,
        title="Match data",
        description="Team names, player display names and photos, event title: drawn by the renderer; the game file is never rewritten.",
    )
    views: tuple[View, ...] = Field(
        (),
        max_length=32,
        title="Views",
        description="Named views of this channel; the studio and control links put one on an output.",
    )

    view_switches: tuple[ViewSwitch, ...] = Field(
        (),
        max_length=512,
        title="View switches",
        description="Named views put on the outputs at chosen steps.",
    )

    analysis: AnalysisSettings = Field(
        default_factory=AnalysisSettings,
        title="Analysis",
        description="Analysis on air: on or off, and what the clean output may show.",
    )

    cue_times: dict[Annotated[int, Field(ge=0)], Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=dict,
        max_length=20000,
        title="Cue times",
        description="A legacy file's timings (step index -> cue time in seconds), kept to sync a render to a video.",
    )
    looks: dict[Annotated[str, Field(min_length=1, max_length=64)], Look] = Field(
        default_factory=dict,
        max_length=32,
        title="Looks",
        description="Saved looks by name (views, theme, timing); applying one replaces those three.",
    )

    #: top-level fields (JSON names) added after ``PUT .../settings`` began to require the
    #: whole document (09ada26): a client written before one of them leaves it out, and the
    #: PUT gives it its default.  Every field added from now on belongs here (a test checks).
    LATER_FIELDS: ClassVar[frozenset[str]] = frozenset({"cueTimes", "analysis"})

    @classmethod
    def put_required(cls) -> list[str]:
        """The JSON names a whole-document PUT must carry: the fields older clients know."""
        names = [f.alias or name for name, f in cls.model_fields.items()]
        return [n for n in names if n not in cls.LATER_FIELDS]

    @model_validator(mode="after")
    def _switches_name_views(self) -> ChannelSettings:
        """A switch to a view that does not exist would silently show nothing new."""
        ids = {v.id for v in self.views}
        for i, sw in enumerate(self.view_switches):
            if sw.view not in ids:
                raise ValueError(f"view switch {i} (step {sw.step}) names view {sw.view!r}, which is not one of the channel's views")
        return self

    def switched_view(self, step: int | None) -> View | None:
        """The named view the last switch at or before ``step`` puts on air (None: no switch)."""
        if step is None or not self.view_switches:
            return None
        chosen: str | None = None
        best = -1
        for sw in self.view_switches:
            if best < sw.step <= step:
                best, chosen = sw.step, sw.view
        return next((v for v in self.views if v.id == chosen), None)

    @field_validator("theme", "timing", "match", "analysis", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any) -> Any:
        """Documents stored before these were typed say null for "the default"."""
        return {} if value is None else value

    def output(self, name: OutputName) -> OutputSettings:
        return self.outputs.get(name) or OutputSettings()


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
    return _FEED.validate_json(text)


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
