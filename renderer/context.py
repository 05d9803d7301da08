"""Shared state of one scene build: the game state, settings, the op builder and helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from engine.cards import Card, Suit, sort_key
from engine.state import GameState, StepKind

from .altline import AltLine
from .cardart import back_sprite, card_sprite
from .contrast import legible, parse_colour
from .fonts import MIN_TEXT, fit, measure, uses_fallback
from .gametitle import MatchGame
from .scene import Builder, Num, Op, keep
from .theme import CardStyle, Theme
from .timing import StepTiming, Timing
from .view import Element, ElementType, Perspective, View

__all__ = ["Ctx", "HAND_TYPES", "MIN_TEXT", "is_preshow", "fits"]


def is_preshow(state: GameState) -> bool:
    """Whether ``state`` is the pre-show picture (players seated, no deal yet): ``deal < 0``."""
    return state.deal < 0

#: hand elements by screen position: 0 south, 1 west, 2 north, 3 east
HAND_TYPES = (ElementType.HAND_SOUTH, ElementType.HAND_WEST, ElementType.HAND_NORTH, ElementType.HAND_EAST)


@dataclass
class Ctx:
    state: GameState
    view: View
    theme: Theme
    timing: Timing
    title: str | None
    b: Builder = field(default_factory=Builder)
    #: team names from the match data (team 0, team 1); an empty or missing one falls back
    #: to the players' names
    teams: tuple[str, ...] = ()
    #: per seat, an image id (photo or flag) drawn on the name plate; None = none
    photos: tuple[str | None, ...] = ()
    #: the alternative line on air (its cards are marked), None on the main line
    line: AltLine | None = None
    #: the event's subtitle (match data): a line of its own under the title
    subtitle: str = ""
    #: which game of a match is drawn (None: a game alone): its label on the title's last
    #: line, so an event title does not hide it, and the match score the game-over banner
    #: carries on
    game: MatchGame | None = None

    def __post_init__(self) -> None:
        self.st: StepTiming = self.timing.of(self.state.kind)
        self.run: float = self.st.run_time
        self.kind: StepKind = self.state.kind
        self.placed: dict[ElementType, Element] = {}
        for el in self.view.elements:
            if el.visible and el.type not in self.placed:
                self.placed[el.type] = el

    # seats and positions -------------------------------------------------------------
    @property
    def players(self) -> int:
        return self.state.num_players or 4

    def pos_of(self, seat: int) -> int:
        """Screen position of a seat (0 south, 1 west, 2 north, 3 east); focus seat at south."""
        return (seat - self.view.focus_seat) % 4

    def seat_at(self, pos: int) -> int:
        return (pos + self.view.focus_seat) % 4

    def name(self, seat: int) -> str:
        p = self.state.players
        return p[seat] if seat < len(p) and p[seat] else f"Seat {seat + 1}"

    def team_colour(self, team: int) -> str:
        return self.theme.team_ns if team == 0 else self.theme.team_ew

    def team_name(self, team: int) -> str:
        """The match data's team name, else the players' names joined."""
        if team < len(self.teams) and self.teams[team]:
            return self.teams[team]
        seats = [s for s in range(self.players) if s % 2 == team]
        return " & ".join(self.name(s) for s in seats)

    def team_label(self, team: int, font: str, size: float, width: float, *, ls: float = 0.0, suffix: str = "") -> str:
        """The team's name as the audience should read it, in capitals, fitting ``width``.

        Until match data names the teams, the fallback is built from whole words of the
        players' display names, never from a cut: the full names ("PRIYA RAMAN & MARGUERITE
        OKAFOR") when they fit (:func:`renderer.fonts.fit`, no smaller than :data:`MIN_TEXT`),
        else the first word of each ("PRIYA & MARGUERITE"), else the side of the table
        ("NORTH · SOUTH").  Guessing a surname from the last word turned "Orde® Me Up" into
        "UP".  Names in CJK scripts are kept whole at the second stage (they are short and
        the family name comes first).  The match data's team name, when set, is used instead.
        """
        if team < len(self.teams) and self.teams[team]:
            return self.teams[team].upper() + suffix
        seats = [s for s in range(self.players) if s % 2 == team]
        names = [self.name(s) for s in seats]
        firsts = [n if uses_fallback("bold", n) else (n.split() or [n])[0] for n in names]
        side = "NORTH \u00b7 SOUTH" if team == 0 else "EAST \u00b7 WEST"
        for parts in (names, firsts):
            text = " & ".join(parts).upper() + suffix
            if fits(font, size, text, width, ls=ls):
                return text
        return side + suffix

    def player_label(self, seat: int, font: str, size: float, width: float, *, ls: float = 0.0) -> str:
        """A player's name in capitals for a narrow place: the whole name when it fits (no
        smaller than :data:`MIN_TEXT`), else its first word (a name, never a cut; the label
        still ellipsises a first word too long for the place)."""
        name = self.name(seat).upper()
        if fits(font, size, name, width, ls=ls) or uses_fallback("bold", name):
            return name
        return (name.split() or [name])[0]

    def ink(self, colour: str, el: Element | None = None) -> str:
        """``colour`` as text on a panel (the element's background or the theme's, under the
        sheen): the theme's colour, or the least lighter tint of it that reads at 4.5:1 over
        any picture (a team colour keeps its hue)."""
        bg = el.style.background if el is not None and el.style.background else self.theme.panel
        return _ink(colour, bg, self.theme.panel_top)

    def photo(self, seat: int) -> str | None:
        """The image id of the seat's photo or flag (match data), or None."""
        return self.photos[seat] if seat < len(self.photos) else None

    # cards ---------------------------------------------------------------------------
    def face_up(self, seat: int) -> bool:
        p = self.view.perspective
        return p is Perspective.ALL or (p is Perspective.FOCUS and seat == self.view.focus_seat)

    def leaving_slot(self, seat: int, before: list[Card], card: Card) -> int:
        """The slot of the sorted hand ``before`` that ``card`` leaves from (played or
        discarded).  A hand shown face down gives nothing away: the card always leaves from
        the middle slot, so neither its flight nor the gap closing behind it tells a viewer
        where it sat in the sorted hand (and so which suit or rank it was)."""
        if not self.face_up(seat):
            return len(before) // 2
        return next((i for i, c in enumerate(before) if c.same(card)), len(before) - 1)

    def sprite_id(self, card: Card | None, *, face: bool = True, outline: bool = True) -> str:
        sid, ops = _sprite(card if face else None, self.state.trump, self.theme.cards, outline, self.theme.font_card)
        if sid not in self.b.defs:
            self.b.defs[sid] = ops
            for op in ops:
                if op[0] == "t":
                    self.b.fonts.add(op[1])
        return sid

    def sorted_hand(self, cards: tuple[Card, ...] | list[Card]) -> list[Card]:
        return list(_sorted(tuple(cards), self.state.trump))

    # placement -----------------------------------------------------------------------
    def to_view(self, el: Element, x: float, y: float) -> tuple[float, float]:
        return el.x + x * el.scale, el.y + y * el.scale

    # drawing helpers -----------------------------------------------------------------
    def panel(self, x: float, y: float, w: float, h: float, *, el: Element | None = None, r: float = 10.0, shadow: bool = True) -> None:
        """A broadcast panel: dark gradient, hairline edge, soft shadow."""
        th = self.theme
        bg = el.style.background if el is not None and el.style.background else None
        r = el.style.radius if el is not None and el.style.radius is not None else r
        fill = bg if bg else th.panel
        b = self.b
        if shadow:
            b.save()
            s = (el.scale if el is not None else 1.0) * self.out_scale
            b.shadow(th.shadow, 14 * s, 0, 4 * s)
            b.rrect(x, y, w, h, r, fill, th.panel_edge, 1.0)
            b.restore()
        else:
            b.rrect(x, y, w, h, r, fill, th.panel_edge, 1.0)
        if not bg:
            # a soft top sheen instead of a gradient (gradients are slow on the CPU raster)
            b.rrect(x + 1, y + 1, w - 2, min(h * 0.45, 30.0), max(0.0, r - 1), th.panel_top, None, 0)

    out_scale: float = 1.0

    def text_colour(self, el: Element | None) -> str:
        if el is not None and el.style.text_colour:
            return el.style.text_colour
        return self.theme.text

    def label(
        self,
        font: str,
        size: float,
        x: float,
        y: float,
        text: str,
        colour: str,
        *,
        align: str = "left",
        width: float | None = None,
        ls: float = 0.0,
        floor: float = MIN_TEXT,
    ) -> float:
        """Draw text placed by its left edge, centre or right edge; fit to ``width``. Returns its width.

        Text too wide is fitted by :func:`renderer.fonts.fit`: its letter spacing taken back,
        then its size brought down to ``floor`` (:data:`MIN_TEXT`, the least that reads at
        720p; never above the size asked), and an ellipsis only after that.
        """
        text, size, ls, w, dx = _layout(font, size, text, width, ls, align, floor)
        self.b.text(font, size, x - dx, y, text, colour, ls)
        return w

    def still(self, key: tuple[Any, ...], el: Element, draw: Callable[[], None]) -> None:
        """Draw what ``draw`` draws, a still picture of element ``el`` that is a function of
        ``key``, the theme, the timing and ``el`` alone (``key`` names whatever it reads of
        the state): the first time it is drawn, its ops, fonts, images and sprites are kept
        and the next draws with an equal key, the same theme, timing and element objects and
        the same output scale put them back (a panel that a live game redraws at
        every action, e.g. the suit tracker).  Nothing animated is kept: a draw that made a
        track is not."""
        b = self.b
        key = (id(self.theme), id(self.timing), id(el), self.out_scale, *key)
        kept = _STILLS.get(key)
        if kept is not None and kept[0] is self.theme and kept[1] is self.timing and kept[2] is el:
            _, _, _, ops, kept_fonts, kept_images, kept_defs = kept
            b.ops.extend(ops)
            b.fonts |= kept_fonts
            b.images |= kept_images
            for sid, sops in kept_defs.items():
                b.defs.setdefault(sid, sops)
            return
        at, tracks, fonts, images, defs = len(b.ops), len(b.tracks), b.fonts, b.images, b.defs
        b.fonts, b.images, b.defs = set(), set(), {}
        try:
            draw()
        finally:
            my_fonts, my_images, new = b.fonts, b.images, b.defs
            b.fonts, b.images, b.defs = fonts | my_fonts, images | my_images, defs
            for sid, sops in new.items():
                defs.setdefault(sid, sops)
        if len(b.tracks) == tracks:
            keep(_STILLS, key, (self.theme, self.timing, el, b.ops[at:], frozenset(my_fonts), frozenset(my_images), new), 4096)

    def pop(self, t0: float, dur: float, *, start: float = 0.6) -> tuple[Num, Num]:
        """Scale and alpha tracks for something appearing at ``t0`` with a small overshoot."""
        b = self.b
        return b.tween(t0, t0 + dur, start, 1.0, "back"), b.tween(t0, t0 + dur * 0.6, 0.0, 1.0, "out")


#: :meth:`Ctx.still`'s pictures: key -> (theme, timing, element, ops, fonts, images, sprite
#: defs); the theme, timing and element are kept so that their ids in the key cannot name
#: other objects later
_STILLS: dict[tuple[Any, ...], tuple[Theme, Timing, Element, list[Op], frozenset[str], frozenset[str], dict[str, list[Op]]]] = {}


@lru_cache(maxsize=4096)
def _layout(font: str, size: float, text: str, width: float | None, ls: float, align: str, floor: float) -> tuple[str, float, float, float, float]:
    """Fitted text, its size, letter spacing, width and the shift of its left edge for ``align``."""
    if width is not None:
        f = fit(font, size, text, width, spacing=ls, floor=floor)
        text, size, ls, w = f.text, f.size, f.spacing, f.width
    else:
        w = measure(font, size, text, ls)
    dx = w / 2 if align == "center" else w if align == "right" else 0.0
    return text, size, ls, w, dx


def fits(font: str, size: float, text: str, width: float, *, ls: float = 0.0) -> bool:
    """Whether ``text`` fits ``width`` whole (tightened and shrunk no further than
    :func:`renderer.fonts.fit` goes, without an ellipsis)."""
    return fit(font, size, text, width, spacing=ls).text == text


@lru_cache(maxsize=256)
def _ink(colour: str, panel: str, sheen: str) -> str:
    return legible(colour, [(parse_colour(panel), 1.0), (parse_colour(sheen), 1.0)])


@lru_cache(maxsize=2048)
def _sprite(card: Card | None, trump: Suit | None, style: CardStyle, outline: bool, font: str) -> tuple[str, list[Op]]:
    if card is None:
        return back_sprite(style, outline=outline)
    return card_sprite(card, trump, style, outline=outline, font=font)


@lru_cache(maxsize=2048)
def _sorted(cards: tuple[Card, ...], trump: Suit | None) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=lambda c: sort_key(c, trump)))
