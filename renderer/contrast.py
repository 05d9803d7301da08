"""Colour contrast (WCAG 2 relative luminance), for text that must read at 720p.

The overlay is composited over a picture we never see, and its panels are translucent, so a
text colour is judged against its panel laid over black *and* over white: the worse of the
two is what a viewer may get.  Used by the renderer to pick black or white ink for a badge,
and by the tests that hold every label of the default view to 4.5:1.
"""

from __future__ import annotations

__all__ = ["parse_colour", "over", "luminance", "contrast", "worst_contrast", "legible", "ink_on", "DARK_INK", "LIGHT_INK", "MIN_CONTRAST", "RGB", "RGBA"]

RGB = tuple[float, float, float]
RGBA = tuple[float, float, float, float]

#: the least contrast text must have against what it sits on (WCAG AA for body text)
MIN_CONTRAST = 4.5


def parse_colour(text: str) -> RGBA:
    """``#rrggbb`` or ``#rrggbbaa`` as straight-alpha floats 0..1.

    Raises:
        ValueError: not a hex colour of that form.
    """
    h = text.lstrip("#")
    if len(h) not in (6, 8) or any(c not in "0123456789abcdefABCDEF" for c in h):
        raise ValueError(f"not a colour: {text!r}")
    vals = [int(h[i : i + 2], 16) / 255.0 for i in range(0, len(h), 2)]
    if len(vals) == 3:
        vals.append(1.0)
    return vals[0], vals[1], vals[2], vals[3]


def over(top: RGBA, below: RGB, alpha: float = 1.0) -> RGB:
    """``top`` (times an extra ``alpha``) composited source-over an opaque ``below``."""
    a = top[3] * alpha
    return (top[0] * a + below[0] * (1 - a), top[1] * a + below[1] * (1 - a), top[2] * a + below[2] * (1 - a))


def _lin(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(rgb: RGB) -> float:
    """WCAG relative luminance of an sRGB colour."""
    r, g, b = (_lin(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    """WCAG contrast ratio, 1..21."""
    la, lb = luminance(a), luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def worst_contrast(text: RGBA, layers: list[tuple[RGBA, float]], *, text_alpha: float = 1.0) -> float:
    """Contrast of ``text`` over the stack ``layers`` (bottom first, each a colour and the
    global alpha it was drawn with), the stack laid over black and over white: the worse."""
    worst = 21.0
    for base in ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)):
        bg: RGB = base
        for colour, alpha in layers:
            bg = over(colour, bg, alpha)
        worst = min(worst, contrast(over(text, bg, text_alpha), bg))
    return worst


def _hex(rgb: RGB, alpha: float) -> str:
    return "#" + "".join(f"{round(min(1.0, max(0.0, v)) * 255):02x}" for v in (*rgb, alpha))


def legible(text: str, layers: list[tuple[RGBA, float]], *, target: float = MIN_CONTRAST) -> str:
    """``text`` (a colour), or the least tint of it towards white or black that reaches
    ``target`` contrast over ``layers`` (as :func:`worst_contrast` judges it), as
    ``#rrggbbaa``.  A team or signal colour keeps its hue where a theme's own value is a
    shade too dark for a translucent panel over a bright picture."""
    colour = parse_colour(text)
    if worst_contrast(colour, layers) >= target:
        return text
    rgb, alpha = colour[:3], colour[3]
    for step in range(1, 21):
        k = step / 20
        for end in ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0)):
            mixed: RGB = (rgb[0] + (end[0] - rgb[0]) * k, rgb[1] + (end[1] - rgb[1]) * k, rgb[2] + (end[2] - rgb[2]) * k)
            if worst_contrast((*mixed, 1.0), layers) >= target:
                return _hex(mixed, 1.0 if alpha < 1.0 else alpha)
    return _hex((1.0, 1.0, 1.0), 1.0)


#: text that sits on a saturated badge: black or white, whichever contrasts more
DARK_INK, LIGHT_INK = "#000000ff", "#ffffffff"


def ink_on(fill: str) -> str:
    """Black or white text for a badge of colour ``fill`` (whichever has more contrast)."""
    rgb = parse_colour(fill)[:3]
    return DARK_INK if contrast(rgb, (0.0, 0.0, 0.0)) >= contrast(rgb, (1.0, 1.0, 1.0)) else LIGHT_INK
