"""View: canvas size, background, perspective and the placed elements (pydantic).

Element coordinates are pixels on the view's own canvas (``width`` x ``height``), top-left of
the element's box, as in the EGN Renderer's legacy ``views``; ``scale`` grows the element
from that corner.  A view drawn at another output size is scaled as a whole.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .ops import IMAGE_ID
from .theme import HEX_COLOUR

__all__ = ["ElementType", "ElementStyle", "Element", "ExtraType", "Extra", "Perspective", "View", "default_view"]


class ElementType(str, Enum):
    NS_SCORE = "ns-score"
    EW_SCORE = "ew-score"
    TRICK_TRACKER = "trick-tracker"
    PLAY_AREA = "play-area"
    KITTY_TRACKER = "kitty-tracker"
    SUIT_TRACKER = "suit-tracker"
    ANNOTATIONS = "annotations"
    HAND_SOUTH = "hand-south"
    HAND_WEST = "hand-west"
    HAND_NORTH = "hand-north"
    HAND_EAST = "hand-east"
    NS_TRICK_BOXES = "ns-trick-boxes"
    EW_TRICK_BOXES = "ew-trick-boxes"
    TRUMP_TRACKER = "trump-tracker"
    NS_TRUMP_TRACKER = "ns-trump-tracker"
    EW_TRUMP_TRACKER = "ew-trump-tracker"
    # broadcast additions
    TITLE = "title"
    BANNER = "banner"
    TRICK_CALLOUT = "trick-callout"


class ElementStyle(BaseModel):
    """Per-element style; ``None`` means the theme's choice."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    background: str | None = Field(None, pattern=HEX_COLOUR, title="Background", description="Panel fill, #rrggbbaa.")
    text_colour: str | None = Field(None, pattern=HEX_COLOUR, title="Text colour", description="Main text colour, #rrggbbaa.")
    font_size: float | None = Field(None, gt=0, le=200, title="Font size", description="Main text size in px (element units).")
    radius: float | None = Field(None, ge=0, le=200, title="Corner radius", description="Panel corner radius in px.")
    padding: float | None = Field(None, ge=0, le=200, title="Padding", description="Inner padding in px.")
    show_player_names: bool = Field(True, title="Player names", description="Hands: draw the name plate.")
    show_card_outlines: bool = Field(True, title="Card outlines", description="Hands: draw a hairline around cards.")


class Element(BaseModel):
    """One placed element."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, title="Id", description="Unique id within the view.")
    type: ElementType = Field(title="Type", description="What the element shows.")
    x: float = Field(0, ge=-7680, le=7680, allow_inf_nan=False, title="X", description="Left edge in view pixels.")
    y: float = Field(0, ge=-4320, le=4320, allow_inf_nan=False, title="Y", description="Top edge in view pixels.")
    scale: float = Field(1.0, gt=0, le=10, title="Scale", description="Size factor from the top-left corner.")
    visible: bool = Field(True, title="Visible", description="Hidden elements are not drawn.")
    style: ElementStyle = Field(default_factory=ElementStyle, title="Style", description="Style overrides.")


class ExtraType(str, Enum):
    """Broadcast extras (drawn by :mod:`renderer.extras`, placed like elements)."""

    EVENT_TITLE = "event-title"  # event title and subtitle, team names
    PLAYER_INTRO = "player-intro"  # lower third for the player the operator introduces
    LOGO = "logo"  # an uploaded logo or sponsor image, fitted inside the box
    MATCH_STATS = "match-stats"  # per team and player statistics of the match, and the streak
    STATS_LOWER_THIRD = "stats-lower-third"  # one team's or player's statistics on one line
    DEAL_HISTORY = "deal-history"  # a cell per deal: dealer, trump, maker, alone, points
    # analysis on air (drawn by renderer.insights, only when the output gets analysis)
    WIN_BAR = "win-bar"  # win probability per team, moving smoothly to each new value
    WIN_GRAPH = "win-graph"  # win probability over the match, euchres and loners marked
    BEST_PLAY = "best-play"  # the best card(s) of the player to act, marked in a face-up hand
    PLAY_QUALITY = "play-quality"  # badge: what the card just played gave up ("-1 TRICK")
    BIDDING_TABLE = "bidding-table"  # during the bidding: each call open and its points


class Extra(BaseModel):
    """One placed broadcast extra; kept apart from :class:`Element` so that every executor of
    ``view.elements`` stays as it is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, title="Id", description="Unique id within the view (elements and extras).")
    type: ExtraType = Field(title="Type", description="What the extra shows.")
    x: float = Field(0, ge=-7680, le=7680, allow_inf_nan=False, title="X", description="Left edge in view pixels.")
    y: float = Field(0, ge=-4320, le=4320, allow_inf_nan=False, title="Y", description="Top edge in view pixels.")
    scale: float = Field(1.0, gt=0, le=10, title="Scale", description="Size factor from the top-left corner.")
    visible: bool = Field(True, title="Visible", description="Hidden extras are not drawn.")
    style: ElementStyle = Field(default_factory=ElementStyle, title="Style", description="Style overrides.")
    image: str | None = Field(None, pattern=IMAGE_ID.pattern, title="Image", description="Logo or sponsor slots: the uploaded image (id), fitted inside the slot's box keeping its aspect ratio.")


class Perspective(str, Enum):
    ALL = "all"  # every hand face up
    FOCUS = "focus"  # only the focus seat face up
    NONE = "none"  # every hand face down
    PLAYED = "played"  # hands face down, cards revealed as they are played


class View(BaseModel):
    """A layout: size, background, perspective and elements."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field("default", max_length=64, title="Id", description="View id.")
    name: str = Field("Default", max_length=120, title="Name", description="Shown in the studio.")
    width: int = Field(1920, ge=320, le=7680, title="Width", description="Design width in px.")
    height: int = Field(1080, ge=180, le=4320, title="Height", description="Design height in px.")
    background: str | None = Field(None, pattern=HEX_COLOUR, title="Background", description="#rrggbbaa, or none for a transparent canvas.")
    perspective: Perspective = Field(Perspective.ALL, title="Perspective", description="Which hands are face up.")
    focus_seat: int = Field(0, ge=0, le=3, title="Focus seat", description="Seat drawn at the bottom (south).")
    elements: tuple[Element, ...] = Field((), max_length=256, title="Elements", description="Placed elements, drawn in order.")
    extras: tuple[Extra, ...] = Field((), max_length=32, title="Extras", description="Broadcast extras (event title, player intro), drawn over the elements.")

    @model_validator(mode="after")
    def _unique_ids(self) -> View:
        """Ids name an element in the studio's selection and patches: one each."""
        seen: set[str] = set()
        for eid in [e.id for e in self.elements] + [x.id for x in self.extras]:
            if eid in seen:
                raise ValueError(f"element id {eid!r} is used twice")
            seen.add(eid)
        return self


def _e(t: ElementType, x: float, y: float, scale: float = 1.0) -> Element:
    return Element(id=t.value, type=t, x=x, y=y, scale=scale)


def default_view() -> View:
    """The broadcast layout at 1920x1080; everything inside the 90% title-safe area."""
    T = ElementType
    return View(
        elements=(
            _e(T.PLAY_AREA, 730, 318),
            _e(T.HAND_NORTH, 790, 96),  # clear of the trump trackers and the trick callout
            _e(T.HAND_WEST, 110, 392),
            _e(T.HAND_EAST, 1390, 392),
            _e(T.HAND_SOUTH, 718, 762, 1.15),
            _e(T.NS_SCORE, 96, 54),
            _e(T.EW_SCORE, 96, 146),
            _e(T.NS_TRICK_BOXES, 404, 54),
            _e(T.EW_TRICK_BOXES, 404, 146),
            _e(T.NS_TRUMP_TRACKER, 556, 54),
            _e(T.EW_TRUMP_TRACKER, 556, 146),
            _e(T.TITLE, 1464, 54),
            _e(T.KITTY_TRACKER, 1584, 616),
            _e(T.SUIT_TRACKER, 1464, 834),
            _e(T.TRICK_TRACKER, 1464, 660, 1.0).model_copy(update={"visible": False}),
            _e(T.TRUMP_TRACKER, 1464, 140).model_copy(update={"visible": False}),
            _e(T.ANNOTATIONS, 96, 876),
            _e(T.BANNER, 560, 440),
            _e(T.TRICK_CALLOUT, 730, 294),
        )
    )
