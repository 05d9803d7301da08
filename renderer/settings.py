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
