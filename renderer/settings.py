"""A channel's settings document, as pydantic models: the one definition the service, the
studio and the video tools read (as Frigate's one config model drives its UI).

:class:`ChannelSettings` holds a channel's outputs (each with its view and delay), its named
views and view switches, theme, timing, match data, saved looks and analysis switch; JSON
keys are camelCase, Python names snake_case.  The service stores and serves it
(``/api/channels/{id}/settings``), the studio builds its form from its JSON schema, and
``render --channel-settings`` draws with it.  :class:`RenderSettings` is one document as the
renderer's models per output (the view an output shows at a step).

Here, below both faces, so neither reaches the other for it: the studio never imports the
overlay (``tests/project/test_architecture.py``), and the socket messages
(:mod:`overlay.service.protocol`) only name these models.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from .matchdata import MatchData
from .theme import Theme
from .timing import Timing
from .view import ElementType, Perspective, View, default_view

__all__ = [
    "OUTPUTS",
    "MAX_DELAY",
    "OutputName",
    "OutputSettings",
    "ViewSwitch",
    "Cue",
    "CUE_KEYS",
    "Look",
    "AnalysisSettings",
    "ChannelSettings",
    "RenderSettings",
    "clean_view",
    "default_views",
]

OutputName = Literal["program", "preview", "clean"]
OUTPUTS: tuple[OutputName, ...] = ("program", "preview", "clean")

MAX_DELAY = 600.0


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


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


CueKind = Literal["view", "intro", "stats", "hide", "line", "stinger"]

#: hotkeys a cue may take: F1-F12 (the studio's own keys are letters, digits and arrows)
CUE_KEYS = tuple(f"F{n}" for n in range(1, 13))


class Cue(_Model):
    """One segment of the rundown, fired by its button, its hotkey or its Stream Deck link.

    ``view``: put the named view ``view`` on program and clean by ``transition`` (default:
    the channel's TAKE transition); ``intro``: the player intro of ``seat`` (it hides by
    itself after ``match.intro_seconds``); ``stats``: the statistics lower third of ``stats``
    (``team-0``, ``team-1``, ``seat-N``); ``hide``: both lower thirds off; ``line``: the
    alternative ``line`` of ``deal`` (of ``game`` in a match) on air; ``stinger``: the TAKE
    stinger over program and clean (the layout as it is)."""

    id: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$", title="Id", description="Names the cue in its link (letters, digits, - and _).")
    name: str = Field("", max_length=64, title="Name", description="What the producer reads on the cue's button.")
    kind: CueKind = Field(title="Kind", description="view, intro, stats, hide, line or stinger.")
    view: str | None = Field(None, max_length=64, title="View", description="Id of one of the channel's named views (kind view).")
    transition: Literal["default", "cut", "mix", "wipe", "stinger"] = Field("default", title="Transition", description="How a view cue goes on air; default = the channel's TAKE transition.")
    seat: int | None = Field(None, ge=0, le=9, title="Seat", description="The player (0-based seat) of an intro cue.")
    stats: str | None = Field(None, pattern=r"^(team-[01]|seat-[0-9])$", title="Statistics", description="Whose statistics a stats cue shows: team-0, team-1 or seat-N.")
    deal: int | None = Field(None, ge=1, le=1000, title="Deal", description="The deal (from 1) of a line cue.")
    line: int | None = Field(None, ge=1, le=99, title="Line", description="The alternative line (from 1) of a line cue.")
    game: int | None = Field(None, ge=1, le=99, title="Game", description="In a match, the game (from 1) of a line cue.")
    hotkey: str | None = Field(None, max_length=3, title="Hotkey", description="F1-F12 in the studio, or none.", json_schema_extra={"enum": [*CUE_KEYS, None]})

    @model_validator(mode="after")
    def _complete(self) -> Cue:
        """A cue that lacks what its kind needs would do nothing when fired."""
        need = {"view": ("view",), "intro": ("seat",), "stats": ("stats",), "line": ("deal", "line")}.get(self.kind, ())
        missing = [n for n in need if getattr(self, n) is None]
        if missing:
            raise ValueError(f"cue {self.id!r} ({self.kind}) needs {' and '.join(missing)}")
        if self.hotkey is not None and self.hotkey not in CUE_KEYS:
            raise ValueError(f"cue {self.id!r}: hotkey {self.hotkey!r} is not one of F1-F12")
        return self


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

    rundown: tuple[Cue, ...] = Field(
        (),
        max_length=64,
        title="Rundown",
        description="The segments the producer fires, in order: each with its button, hotkey and Stream Deck link.",
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
    LATER_FIELDS: ClassVar[frozenset[str]] = frozenset({"cueTimes", "analysis", "rundown"})

    @classmethod
    def put_required(cls) -> list[str]:
        """The JSON names a whole-document PUT must carry: the fields older clients know."""
        names = [f.alias or name for name, f in cls.model_fields.items()]
        return [n for n in names if n not in cls.LATER_FIELDS]

    @model_validator(mode="after")
    def _switches_name_views(self) -> ChannelSettings:
        """A switch to a view that does not exist would silently show nothing new; so would a
        view cue, and two cues of one id or one hotkey could not both be fired."""
        ids = {v.id for v in self.views}
        for i, sw in enumerate(self.view_switches):
            if sw.view not in ids:
                raise ValueError(f"view switch {i} (step {sw.step}) names view {sw.view!r}, which is not one of the channel's views")
        seen: set[str] = set()
        keys: dict[str, str] = {}
        for cue in self.rundown:
            if cue.id in seen:
                raise ValueError(f"two cues of the rundown have the id {cue.id!r}")
            seen.add(cue.id)
            if cue.kind == "view" and cue.view not in ids:
                raise ValueError(f"cue {cue.id!r} names view {cue.view!r}, which is not one of the channel's views")
            if cue.hotkey is not None:
                if cue.hotkey in keys:
                    raise ValueError(f"cues {keys[cue.hotkey]!r} and {cue.id!r} both take the hotkey {cue.hotkey}")
                keys[cue.hotkey] = cue.id
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


def clean_view(base: View) -> View:
    """The clean output's default: no hole cards (hands face down until played) and no
    commentary, so it can run live without a delay."""
    hidden = {ElementType.ANNOTATIONS}
    elements = tuple(e.model_copy(update={"visible": False}) if e.type in hidden else e for e in base.elements)
    return base.model_copy(update={"perspective": Perspective.PLAYED, "elements": elements})


def default_views() -> dict[OutputName, View]:
    """Per output, the view it shows while its settings name none (the clean output's hides
    hole cards)."""
    base, clean = _defaults()
    return {o: clean if o == "clean" else base for o in OUTPUTS}


@functools.cache
def _defaults() -> tuple[View, View]:
    """The default view and its clean form, built once: views are frozen models, and
    building them for each channel was 1 ms of the 2-5 ms a restored channel costs."""
    base = default_view()
    return base, clean_view(base)


class RenderSettings:
    """The renderer models of one channel's settings, validated once per settings revision.

    Raises (constructor):
        pydantic.ValidationError: a view, theme or timing document the renderer refuses.
    """

    def __init__(self, settings: ChannelSettings) -> None:
        self.revision = settings.revision
        self.timing: Timing = settings.timing
        self.theme: Theme = settings.theme
        self.match: MatchData = settings.match
        self.defaults = default_views()
        self.views: dict[OutputName, View] = {}
        for name in OUTPUTS:
            own = settings.output(name).view
            # the clean output shows no hole cards whatever view it is given
            self.views[name] = self.defaults[name] if own is None else clean_view(own) if name == "clean" else own
        self.settings = settings

    def view(self, output: OutputName, step: int | None = None) -> View:
        """The view ``output`` shows at ``step``: a view switch's named view where the output
        follows switches (the clean output gets its clean form), else the output's own."""
        if self.settings.output(output).follow_switches:
            switched = self.settings.switched_view(step)
            if switched is not None:
                return clean_view(switched) if output == "clean" else switched
        # an output the document leaves out shows its own default (the clean one hides hole cards)
        return self.views[output]
