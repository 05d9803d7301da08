"""The project's own card art: faces, backs and suit shapes, as scene ops.

A card is a sprite of ``CARD_W`` x ``CARD_H`` units (100 x 140) drawn by ``["sp", id, x, y, s]``;
everything is vector (paths and text through the same ops, written by the scene's
:class:`~renderer.scene.Builder`), so it is crisp at any scale and both executors draw it
alike.  Suits are our own paths, not font glyphs.
"""

from __future__ import annotations

from functools import lru_cache

from engine.cards import Card, Rank, Suit, bower, resolve

from .fonts import measure
from .scene import Builder, Op
from .theme import CardStyle

__all__ = ["CARD_W", "CARD_H", "PRINT", "MIN_CARD_SCALE", "suit_path", "card_sprite", "back_sprite", "suit_colour", "star_path"]

CARD_W = 100.0
CARD_H = 140.0

# Suit outlines in a 100 x 100 box (absolute SVG commands).
_SHAPES: dict[str, list[tuple[str, tuple[float, ...]]]] = {
    "h": [
        ("M", (50, 94)),
        ("C", (22, 70, 2, 52, 2, 30)),
        ("C", (2, 13, 14, 3, 28, 3)),
        ("C", (39, 3, 46, 10, 50, 19)),
        ("C", (54, 10, 61, 3, 72, 3)),
        ("C", (86, 3, 98, 13, 98, 30)),
        ("C", (98, 52, 78, 70, 50, 94)),
        ("Z", ()),
    ],
    "d": [
        ("M", (50, 0)),
        ("Q", (68, 27, 90, 50)),
        ("Q", (68, 73, 50, 100)),
        ("Q", (32, 73, 10, 50)),
        ("Q", (32, 27, 50, 0)),
        ("Z", ()),
    ],
    "s": [
        ("M", (50, 2)),
        ("C", (62, 20, 96, 36, 96, 60)),
        ("C", (96, 75, 85, 84, 72, 84)),
        ("C", (63, 84, 57, 80, 53, 74)),
        ("C", (54, 85, 58, 92, 67, 98)),
        ("L", (33, 98)),
        ("C", (42, 92, 46, 85, 47, 74)),
        ("C", (43, 80, 37, 84, 28, 84)),
        ("C", (15, 84, 4, 75, 4, 60)),
        ("C", (4, 36, 38, 20, 50, 2)),
        ("Z", ()),
    ],
}


def _circle(cx: float, cy: float, r: float) -> list[tuple[str, tuple[float, ...]]]:
    k = 0.5523 * r
    return [
        ("M", (cx, cy - r)),
        ("C", (cx + k, cy - r, cx + r, cy - k, cx + r, cy)),
        ("C", (cx + r, cy + k, cx + k, cy + r, cx, cy + r)),
        ("C", (cx - k, cy + r, cx - r, cy + k, cx - r, cy)),
        ("C", (cx - r, cy - k, cx - k, cy - r, cx, cy - r)),
        ("Z", ()),
    ]


_SHAPES["c"] = (
    _circle(50, 27, 22)
    + _circle(26, 59, 22)
    + _circle(74, 59, 22)
    + [
        ("M", (55, 55)),
        ("C", (55, 78, 59, 90, 69, 98)),
        ("L", (31, 98)),
        ("C", (41, 90, 45, 78, 45, 55)),
        ("Z", ()),
    ]
)


def _star() -> list[tuple[str, tuple[float, ...]]]:
    import math

    pts: list[tuple[str, tuple[float, ...]]] = []
    for i in range(10):
        r = 50 if i % 2 == 0 else 21
        a = -math.pi / 2 + i * math.pi / 5
        pts.append(("M" if i == 0 else "L", (50 + r * math.cos(a), 52 + r * math.sin(a))))
    pts.append(("Z", ()))
    return pts


_SHAPES["*"] = _star()


def _fmt(v: float) -> str:
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


@lru_cache(maxsize=4096)
def _shape_path(key: str, x: float, y: float, size: float) -> str:
    f = size / 100.0
    parts: list[str] = []
    for cmd, nums in _SHAPES[key]:
        coords = [(x + nums[i] * f, y + nums[i + 1] * f) for i in range(0, len(nums), 2)]
        parts.append(cmd + " ".join(f"{_fmt(a)} {_fmt(b)}" for a, b in coords))
    return "".join(parts)


def suit_path(suit: Suit, x: float, y: float, size: float) -> str:
    """SVG path data of a suit shape filling the square (x, y, size, size)."""
    return _shape_path(suit.value, round(x, 2), round(y, 2), round(size, 2))


def star_path(x: float, y: float, size: float) -> str:
    return _shape_path("*", round(x, 2), round(y, 2), round(size, 2))


def suit_colour(suit: Suit, style: CardStyle) -> str:
    if style.four_colour and suit is Suit.DIAMONDS:
        return style.diamonds4
    if style.four_colour and suit is Suit.CLUBS:
        return style.clubs4
    return style.red if suit.colour == "red" else style.black


_RANK_TEXT = {Rank.TEN: "10"}

#: the card index font of the default theme (``Theme.font_card``)
FONT = "bold"

#: the size of the card's small print (the bower tab's word, the joker's letters), in card
#: units: a card in a hand or the trick is drawn 0.96 of its size, 0.64 at 1280x720, so this
#: is 14 px there, over the 13 px floor (at 17 units the tab read 10.9 px)
PRINT = 22.0
#: the least scale (of the 100 x 140 card) at which a card's print is drawn at 720p no smaller
#: than the floor: a smaller card would make it unreadable (the kitty draws its cards this big)
MIN_CARD_SCALE = 0.9


def _face_base(b: Builder, style: CardStyle, outline: bool) -> None:
    r = round(CARD_W * style.radius, 2)
    stroke = style.edge if outline else None
    b.rrect(0, 0, CARD_W, CARD_H, r, style.face, stroke, 1.5 if outline else 0)


def _text(b: Builder, font: str, size: float, cx: float, baseline: float, text: str, colour: str) -> None:
    """``text`` centred on ``cx``."""
    w = measure(font, size, text)
    b.text(font, size, round(cx - w / 2, 2), baseline, text, colour)


@lru_cache(maxsize=512)
def _face_ops(text: str, bower: str, outline: bool, style: CardStyle, font: str) -> list[Op]:
    from engine.cards import parse_card

    card = parse_card(text)
    b = Builder()
    _face_base(b, style, outline)
    if card.joker:
        ink = style.black
        for i, ch in enumerate("JOKER"):
            _text(b, font, PRINT, 16, 26 + i * PRINT, ch, ink)
        b.path(star_path(30, 38, 64), style.bower, style.black, 2)
        return b.ops
    assert card.suit is not None and card.rank is not None
    ink = suit_colour(card.suit, style)
    label = _RANK_TEXT.get(card.rank, card.rank.letter)
    _text(b, font, 44 if len(label) == 1 else 38, 20, 44, label, ink)
    b.path(suit_path(card.suit, 6, 52, 28), ink)
    if card.rank >= Rank.JACK and card.rank != Rank.ACE:
        _court(b, card.suit, label, ink, style, font)
    else:
        big = 56 if card.rank == Rank.ACE else 46
        b.path(suit_path(card.suit, 66 - big / 2, 88 - big / 2, big), ink)
    if bower:
        word = "RIGHT" if bower == "R" else "LEFT"
        b.rrect(3, 109, 58, 27, 4, style.bower)
        _text(b, font, PRINT, 32, 130, word, "#16181dff")
    return b.ops


# the court panel: right of the index column, so a fanned hand still shows rank and pip
_CX, _CY, _CW, _CH = 38.0, 8.0, 55.0, 124.0


def _court(b: Builder, suit: Suit, label: str, ink: str, style: CardStyle, font: str) -> None:
    """A court face: a framed panel with the figure's headgear, a big rank letter and a pip.

    Plain shapes and one letter read at a glance on a screen, and the panel sits right of
    the index column, which a fanned hand leaves uncovered.
    """
    cx = _CX + _CW / 2
    b.rrect(_CX, _CY, _CW, _CH, 5, "#f4ecd8", ink, 1.5)
    b.rrect(_CX + 3.5, _CY + 3.5, _CW - 7, _CH - 7, 3, None, style.bower, 1.2)
    b.path(_ORNAMENT[label](cx, _CY + 16, 1.5), ink)
    _text(b, font, 50, cx, _CY + 82, label, ink)
    b.path(suit_path(suit, cx - 14, _CY + 89, 28), ink)


def _crown(cx: float, top: float, k: float) -> str:
    """A three-point crown (kings)."""
    pts = [(-9, 7), (-9, 0), (-4.5, 4), (0, -2), (4.5, 4), (9, 0), (9, 7)]
    return "M" + "L".join(f"{_fmt(cx + x * k)} {_fmt(top + y * k)}" for x, y in pts) + "Z"


def _tiara(cx: float, top: float, k: float) -> str:
    """A low arc with a jewel (queens)."""
    return _scaled(cx, top, k, _tiara_raw(0.0, 0.0))


def _scaled(cx: float, top: float, k: float, d: str) -> str:
    """Path ``d`` (drawn about the origin) scaled by ``k`` and moved to (cx, top)."""
    import re

    out: list[str] = []
    pair: list[float] = []
    for token in re.findall(r"[MLQCZ]|-?[0-9.]+", d):
        if token in "MLQCZ":
            out.append(token)
            continue
        pair.append(float(token))
        if len(pair) == 2:
            sep = "" if out[-1] in "MLQC" else " "
            out.append(f"{sep}{_fmt(cx + pair[0] * k)} {_fmt(top + pair[1] * k)}")
            pair = []
    return "".join(out)


def _tiara_raw(cx: float, top: float) -> str:
    return (
        f"M{_fmt(cx - 9)} {_fmt(top + 7)}Q{_fmt(cx)} {_fmt(top - 3)} {_fmt(cx + 9)} {_fmt(top + 7)}"
        f"L{_fmt(cx + 6)} {_fmt(top + 7)}Q{_fmt(cx)} {_fmt(top + 2)} {_fmt(cx - 6)} {_fmt(top + 7)}Z"
        f"M{_fmt(cx)} {_fmt(top - 2)}L{_fmt(cx + 2.5)} {_fmt(top + 1.5)}L{_fmt(cx)} {_fmt(top + 4)}L{_fmt(cx - 2.5)} {_fmt(top + 1.5)}Z"
    )


def _feather(cx: float, top: float, k: float) -> str:
    """A cap with a feather (jacks)."""
    return _scaled(cx, top, k, _feather_raw(0.0, 0.0))


def _feather_raw(cx: float, top: float) -> str:
    return (
        f"M{_fmt(cx - 8)} {_fmt(top + 7)}Q{_fmt(cx - 8)} {_fmt(top)} {_fmt(cx)} {_fmt(top)}"
        f"Q{_fmt(cx + 8)} {_fmt(top)} {_fmt(cx + 8)} {_fmt(top + 7)}Z"
        f"M{_fmt(cx + 2)} {_fmt(top + 1)}Q{_fmt(cx + 8)} {_fmt(top - 6)} {_fmt(cx + 13)} {_fmt(top - 3)}"
        f"Q{_fmt(cx + 8)} {_fmt(top - 2)} {_fmt(cx + 4)} {_fmt(top + 2)}Z"
    )


_ORNAMENT = {"K": _crown, "Q": _tiara, "J": _feather}


@lru_cache(maxsize=16)
def _back_ops(outline: bool, style: CardStyle) -> list[Op]:
    r = round(CARD_W * style.radius, 2)
    b = Builder()
    b.rrect(0, 0, CARD_W, CARD_H, r, style.back, "#ffffff40" if outline else None, 1.5 if outline else 0)
    b.save()
    b.clip(8, 8, 84, 124, 4)
    lines: list[str] = []
    for i in range(-8, 16):
        x0 = i * 14.0
        lines.append(f"M{_fmt(x0)} 0L{_fmt(x0 + 140)} 140")
        lines.append(f"M{_fmt(x0 + 140)} 0L{_fmt(x0)} 140")
    b.path("".join(lines), None, style.back_accent + "55", 1.5)
    b.restore()
    b.rrect(8, 8, 84, 124, 4, None, style.back_accent, 2)
    b.rrect(30, 48, 40, 44, 20, style.back, style.back_accent, 2)
    b.path(suit_path(Suit.SPADES, 38, 58, 24), style.back_accent)
    return b.ops


def bower_of(card: Card, trump: Suit | None) -> str:
    """``"R"``/``"L"`` when the card is a bower under ``trump``, else ``""`` (judged by the engine)."""
    which = bower(card, trump)
    return "R" if which == "right" else "L" if which == "left" else ""


def card_sprite(
    card: Card, trump: Suit | None, style: CardStyle, *, outline: bool = True, font: str = FONT
) -> tuple[str, list[Op]]:
    """Sprite id and ops for a face-up card (a back if the card is not known); ``font`` is
    the font key of the rank and bower texts."""
    card = resolve(card, trump)
    if not card.known:
        return back_sprite(style, outline=outline)
    text = "B" if card.joker else (card.rank.letter if card.rank else "X") + (card.suit.value if card.suit else "x")
    bower = bower_of(card, trump)
    sid = f"f:{text}{':' + bower if bower else ''}{':o' if outline else ''}@{_tag(style)}{'' if font == FONT else ':' + font}"
    return sid, _face_ops(text, bower, outline, style, font)


def back_sprite(style: CardStyle, *, outline: bool = True) -> tuple[str, list[Op]]:
    return f"b{':o' if outline else ''}@{_tag(style)}", _back_ops(outline, style)


@lru_cache(maxsize=16)
def _tag(style: CardStyle) -> str:
    """Short content hash of the card style, so a sprite id names one drawing."""
    import hashlib

    return hashlib.sha1(style.model_dump_json().encode()).hexdigest()[:6]
