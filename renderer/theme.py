"""Theme: colours, fonts and card style (pydantic; the studio edits it through its schema)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from .fonts import FONT_KEYS

__all__ = ["Theme", "CardStyle", "DEFAULT_THEME", "Colour", "HEX_COLOUR", "FontKey"]

Colour = str
#: the colour form both executors read: ``#rrggbb`` or ``#rrggbbaa`` (straight alpha)
HEX_COLOUR = r"^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$"
_HEX = HEX_COLOUR


def _font_key(value: str) -> str:
    """Refuse a font key the renderer has no file for (it would fail at draw time)."""
    if value not in FONT_KEYS:
        raise ValueError(f"font {value!r} is not one of the pinned fonts: {', '.join(FONT_KEYS)}")
    return value


#: a key of :data:`renderer.fonts.FONT_KEYS`; the schema lists them as an enum (one source: the font table)
FontKey = Annotated[
    str,
    AfterValidator(_font_key),
    WithJsonSchema({"type": "string", "enum": list(FONT_KEYS)}),
]


def _c(default: str, title: str, description: str) -> Colour:
    return Field(default, title=title, description=description, pattern=_HEX)


#: the EGN quality tags an annotation can carry, best to worst
QUALITY_TAGS: tuple[str, ...] = ("!!", "!", "!?", "?!", "?", "??")


class CardStyle(BaseModel):
    """How the project's own card art is drawn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    face: Colour = _c("#fbfaf6", "Card face", "Paper colour of a face-up card.")
    edge: Colour = _c("#c9ccd3", "Card edge", "Outline of a face-up card (when outlines are on).")
    red: Colour = _c("#d3122c", "Red suits", "Ink for hearts and diamonds.")
    black: Colour = _c("#16181d", "Black suits", "Ink for spades and clubs.")
    four_colour: bool = Field(
        False,
        title="Four-colour deck",
        description="Draw diamonds blue and clubs green, which some viewers read faster.",
    )
    diamonds4: Colour = _c("#1565d8", "Diamonds (4-colour)", "Diamond ink in a four-colour deck.")
    clubs4: Colour = _c("#14844a", "Clubs (4-colour)", "Club ink in a four-colour deck.")
    back: Colour = _c("#1b2a4a", "Card back", "Main colour of card backs.")
    back_accent: Colour = _c("#c9a227", "Card back accent", "Frame and pattern of card backs.")
    bower: Colour = _c("#c9a227", "Bower mark", "Tab marking the right and left bowers once trump is set.")
    radius: float = Field(0.075, ge=0, le=0.3, title="Corner radius", description="Corner radius as a fraction of card width.")


class Theme(BaseModel):
    """Colours and fonts of every element; font values are keys of renderer.fonts.font_files()."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    panel: Colour = _c("#101624e6", "Panel", "Background of score, tracker and name panels.")
    panel_top: Colour = _c("#ffffff0d", "Panel sheen", "Translucent sheen over the top of panels.")
    panel_edge: Colour = _c("#ffffff24", "Panel edge", "Hairline around panels.")
    text: Colour = _c("#ffffff", "Text", "Main text colour.")
    muted: Colour = _c("#aab3c5", "Muted text", "Labels and secondary text.")
    accent: Colour = _c("#f2c230", "Accent", "Dealer button, highlights, trump marks.")
    team_ns: Colour = _c("#2f8cff", "Team N/S colour", "Colour of seats 0 and 2 (team 0).")
    team_ew: Colour = _c("#ff7a1a", "Team E/W colour", "Colour of seats 1 and 3 (team 1).")
    good: Colour = _c("#22c55e", "Positive", "Order/make callouts and good annotation marks.")
    bad: Colour = _c("#ef4444", "Negative", "Euchre callouts and mistake marks.")
    shadow: Colour = _c("#00000073", "Shadow", "Drop shadow under panels and cards.")
    felt: Colour = _c("#0b3d2e8c", "Play area", "Fill of the play area behind the trick.")
    font_title: FontKey = Field("extrabold", title="Title font", description="Font key for big numbers and banners.")
    font_heading: FontKey = Field("bold", title="Heading font", description="Font key for names and callouts.")
    font_body: FontKey = Field("semibold", title="Body font", description="Font key for labels and annotations.")
    font_card: FontKey = Field("bold", title="Card index font", description="Font key for the rank on cards.")
    cards: CardStyle = Field(default_factory=CardStyle, title="Cards", description="Card art style.")
    quality_colours: dict[str, Annotated[str, Field(pattern=HEX_COLOUR)]] = Field(
        default_factory=lambda: {
            "!!": "#14b8a6",
            "!": "#22c55e",
            "!?": "#8b5cf6",
            "?!": "#eab308",
            "?": "#f97316",
            "??": "#ef4444",
        },
        max_length=len(QUALITY_TAGS),
        title="Annotation marks",
        description="Badge colour of each EGN quality tag ([!!] brilliant ... [??] blunder).",
    )

    @field_validator("quality_colours")
    @classmethod
    def _quality_tags(cls, value: dict[str, str]) -> dict[str, str]:
        """Only the EGN quality tags have badges; another key would never be drawn."""
        bad = sorted(set(value) - set(QUALITY_TAGS))
        if bad:
            raise ValueError(f"unknown quality tag(s) {', '.join(map(repr, bad))}: use {', '.join(QUALITY_TAGS)}")
        return value


DEFAULT_THEME = Theme()
