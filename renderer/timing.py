"""Timing: per step kind a run time, a hold and an easing (manim words)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from engine.state import GameState, StepKind, Timeline

from .easing import EASINGS
from .ops import IMAGE_ID

__all__ = ["StepTiming", "Transition", "TakeTransition", "Timing", "DEFAULT_TIMING", "EaseName", "durations_of", "parse_clock"]


def _ease_name(value: str) -> str:
    """Refuse an easing the executors do not know (it would fail at draw time)."""
    if value not in EASINGS:
        raise ValueError(f"easing {value!r} is not one of {', '.join(EASINGS)}")
    return value


#: a key of :data:`renderer.easing.EASINGS`; the schema lists them as an enum (one source: the easing table)
EaseName = Annotated[str, AfterValidator(_ease_name), WithJsonSchema({"type": "string", "enum": list(EASINGS)})]


class StepTiming(BaseModel):
    """How one kind of step moves: ``run_time`` seconds of motion, then ``hold`` seconds still."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_time: float = Field(0.5, ge=0, le=30, title="Run time", description="Seconds the step's animation lasts.")
    hold: float = Field(1.0, ge=0, le=600, title="Hold", description="Seconds the finished step stays before the next one.")
    ease: EaseName = Field("out", title="Easing", description="Easing of the main motion: " + ", ".join(EASINGS) + ".")

    @property
    def total(self) -> float:
        return self.run_time + self.hold


def _st(run: float, hold: float, ease: str, what: str) -> StepTiming:
    return Field(default_factory=lambda: StepTiming(run_time=run, hold=hold, ease=ease), title=what, description=f"Timing of {what.lower()} steps.")


class Transition(BaseModel):
    """How one deal gives way to the next: a cut, or a wipe across the canvas at the start of
    the new deal (drawn by :mod:`renderer.extras`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["cut", "wipe", "stinger"] = Field("cut", title="Deal transition", description="cut: the new deal simply appears; wipe: a panel-coloured band sweeps across; stinger: a full panel in the theme's colours (with the stinger image, if any) sweeps in, covers the change of deal at half time and sweeps out.")
    run_time: float = Field(0.6, gt=0, le=5, title="Transition time", description="Seconds the wipe or stinger takes (from the start of the deal-start step).")
    ease: EaseName = Field("inout", title="Transition easing", description="Easing of the wipe or stinger.")
    image: str | None = Field(None, pattern=IMAGE_ID.pattern, title="Stinger image", description="An uploaded image (id) the stinger carries, fitted inside its middle; empty = the theme's colours only.")


class TakeTransition(BaseModel):
    """How a new layout goes on air when the producer takes it (the studio's TAKE, a view
    link, a rundown cue): drawn by :mod:`renderer.take` on every output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["cut", "mix", "wipe", "stinger"] = Field("cut", title="TAKE transition", description="cut: the new layout appears at once; mix: the old picture dissolves into the new one; wipe: an edge sweeps left to right with the new layout behind it; stinger: a full panel in the theme's colours (with the deal transition's stinger image, if any) sweeps in, covers the change at half time and sweeps out.")
    run_time: float = Field(0.5, gt=0, le=5, title="TAKE time", description="Seconds the mix, wipe or stinger takes.")
    ease: EaseName = Field("inout", title="TAKE easing", description="Easing of the mix, wipe or stinger.")


class Timing(BaseModel):
    """Timing of every step kind; the Director advances by ``total`` seconds per step."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    deal_start: StepTiming = _st(1.0, 1.5, "out", "Deal start")
    call: StepTiming = _st(0.35, 1.0, "back", "Call")
    discard: StepTiming = _st(0.5, 0.6, "inout", "Discard")
    card: StepTiming = _st(0.45, 0.8, "out", "Card")
    # tuned for a viewer (issue 10): the winning card is marked, then the trick is gathered
    # under it and leaves, each flight about 0.45 s (it was 0.2 s, too quick for television)
    trick_taken: StepTiming = _st(1.4, 0.8, "inout", "Trick taken")
    deal_scored: StepTiming = _st(1.0, 2.5, "out", "Deal scored")
    game_over: StepTiming = _st(1.0, 6.0, "back", "Game over")
    transition: Transition = Field(default_factory=Transition, title="Deal transition", description="Between deals: a cut or a wipe.")
    take: TakeTransition = Field(default_factory=TakeTransition, title="TAKE transition", description="How a layout the producer takes goes on air: a cut, a mix or a wipe (a TAKE may name another).")
    analysis: StepTiming = Field(
        default_factory=lambda: StepTiming(run_time=0.6, hold=0.0, ease="inout"),
        title="Analysis",
        description="How analysis elements move when a new analysis is shown: the win-probability bar slides from its last value over the run time; marks and tables fade in (hold is not used).",
    )
    # live catch-up (issue 10): a live output stays within ``live_lag`` of a fast feed
    live_lag: float = Field(
        1.0,
        ge=0,
        le=60,
        title="Live lag bound",
        description="Live playback never trails the newest step by more than this many seconds: when behind, holds and runs are shortened (0 turns catch-up off).",
    )
    live_skip: float = Field(
        12.0,
        ge=0,
        le=600,
        title="Live skip threshold",
        description="With more than this many seconds of steps waiting (at normal speed), live playback cuts ahead to the newest step instead of speeding up (never over a deal-scored banner).",
    )

    def of(self, kind: StepKind) -> StepTiming:
        t: StepTiming = getattr(self, kind.value)
        return t


DEFAULT_TIMING = Timing()


def durations_of(steps: Sequence[GameState] | Timeline | None, timing: Timing) -> list[float]:
    """Seconds per step: ``timing``'s run time + hold for the step's kind (the Director's
    step lengths, the same for a channel and for a render)."""
    if steps is None:
        return []
    if isinstance(steps, Timeline):
        steps = steps.steps
    return [float(timing.of(s.kind).total) for s in steps]


def parse_clock(text: str) -> float:
    """A time on a video's clock, in seconds: ``75.5`` or ``[h:]mm:ss[.fff]`` (``1:15.5``,
    ``0:01:15.5``), as an editor reads it off a timeline (``render --from``, the studio's
    Render tab).

    Raises:
        ValueError: not such a time, or a negative one.
    """
    parts = text.strip().split(":")
    try:
        if len(parts) > 3 or any(not p.strip() for p in parts):
            raise ValueError(text)
        *whole, last = parts
        seconds = float(last)
        units = [int(p) for p in whole]
        if any(u < 0 for u in units) or (units and not 0 <= seconds < 60) or (len(units) == 2 and units[1] >= 60):
            raise ValueError(text)
    except ValueError:
        raise ValueError("expected seconds (75.5) or [h:]mm:ss[.fff] (1:15.5)") from None
    minutes = 0
    for u in units:  # hours, minutes
        minutes = minutes * 60 + u
    value = minutes * 60 + seconds
    if not math.isfinite(value) or value < 0:
        raise ValueError("expected a time of 0 or more")
    return value
