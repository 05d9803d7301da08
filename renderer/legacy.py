"""Import the legacy ``views`` of an EGN file into :class:`View`.

Older EGN files carry the layouts of the EGN Renderer, the format's first broadcast tool: a
``views`` list whose entries hold a ``layout`` (canvas size, background, ``elements`` with
``id``, ``type``, ``x``, ``y``, ``scale``, ``visible`` and ``styleSettings``) and the
hand visibility and focus seat of that view.

Legacy elements keep their place: ``x``/``y`` (top-left, view pixels), ``scale`` and
``visible``; ``styleSettings`` map to :class:`ElementStyle` (CSS ``rgba()`` colours become
``#rrggbbaa``).  ``handVisibility`` maps to the perspective, ``focusSeat`` to the focus seat.
"""

from __future__ import annotations

import re
from typing import Any

from .view import Element, ElementStyle, ElementType, Perspective, View

__all__ = ["views_from_legacy", "css_colour"]

_RGBA = re.compile(r"^rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)$")
_HEX = re.compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_VIS = {"all": Perspective.ALL, "focus": Perspective.FOCUS, "none": Perspective.NONE, "played": Perspective.PLAYED}


def css_colour(text: Any) -> str | None:
    """``rgba(20, 24, 33, 0.85)`` / ``#fff`` / ``#ffffff`` -> ``#rrggbbaa``; None if unreadable."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    m = _RGBA.match(s)
    if m:
        r, g, b = (max(0, min(255, round(float(v)))) for v in m.group(1, 2, 3))
        a = 1.0 if m.group(4) is None else max(0.0, min(1.0, float(m.group(4))))
        return f"#{r:02x}{g:02x}{b:02x}{round(a * 255):02x}"
    m = _HEX.match(s)
    if m:
        h = m.group(1)
        if len(h) == 3:
            h = "".join(c * 2 for c in h)
        return f"#{h.lower()}" + ("" if len(h) == 8 else "ff")
    return None


def _style(raw: Any) -> ElementStyle:
    raw = raw if isinstance(raw, dict) else {}

    def num(key: str) -> float | None:
        v = raw.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return ElementStyle(
        background=css_colour(raw.get("backgroundColor")),
        text_colour=css_colour(raw.get("textColor")),
        font_size=num("fontSize"),
        radius=num("borderRadius"),
        padding=num("padding"),
        show_player_names=bool(raw.get("showPlayerNames", True)),
        show_card_outlines=bool(raw.get("showCardOutlines", True)),
    )


def views_from_legacy(views: Any) -> list[View]:
    """Convert a legacy ``views`` array; unknown element types are skipped.

    Raises:
        ValueError: ``views`` is not a list of view objects.
    """
    if not isinstance(views, list):
        raise ValueError(f"legacy views: expected a list, got {type(views).__name__}")
    known = {t.value for t in ElementType}
    out: list[View] = []
    for i, v in enumerate(views):
        if not isinstance(v, dict):
            raise ValueError(f"legacy views[{i}]: expected an object")
        raw_layout = v.get("layout")
        layout: dict[str, Any] = raw_layout if isinstance(raw_layout, dict) else {}
        elements = []
        for e in layout.get("elements", []) or []:
            if not isinstance(e, dict) or e.get("type") not in known:
                continue
            elements.append(
                Element(
                    id=str(e.get("id") or e["type"]),
                    type=ElementType(e["type"]),
                    x=float(e.get("x", 0)),
                    y=float(e.get("y", 0)),
                    scale=float(e.get("scale", 1) or 1),
                    visible=bool(e.get("visible", True)),
                    style=_style(e.get("styleSettings")),
                )
            )
        bg = css_colour(layout.get("backgroundColor"))
        focus = v.get("focusSeat", 0)
        out.append(
            View(
                id=str(v.get("id") or f"view-{i}"),
                name=str(v.get("name") or f"View {i + 1}"),
                width=int(layout.get("width", 1920)),
                height=int(layout.get("height", 1080)),
                background=None if bg is None or bg.endswith("00") else bg,
                perspective=_VIS.get(str(v.get("handVisibility", "all")), Perspective.ALL),
                focus_seat=int(focus) % 4 if isinstance(focus, int) else 0,
                elements=tuple(elements),
            )
        )
    return out
