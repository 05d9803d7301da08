"""Where a new broadcast extra goes on a view: free space, inside title-safe, never over what
the game needs (the hands, the table with its trick, the scores) nor over another extra.

The studio asks here (``POST /studio/api/place``) when a producer adds an extra, and shows the
same boxes in its editor and its overlap warnings (:data:`ON_FELT`, :func:`boxes`): one
description of what covers what.  Pure: a view and a size in, a place out.

A candidate is every position on an 8 px grid inside title-safe; obstacles are the boxes of the
view's visible elements and extras (the analysis extras drawn by default when the view places
none, too), each kept :data:`GAP` px away.  The free candidate nearest the extra's usual spot
(an event title at the top, a player intro or a statistics line at the bottom, a logo in a
corner...) wins.  Where nothing is free, the spot that covers the least goes, weighted so that
the game's own parts (:data:`CRITICAL`) are covered only when nothing else can be, and the
answer says so (``fits`` false, ``covers``): the producer decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .analysis import analysis_extras
from .build import element_size
from .extras import EVENT_GROWTH, extra_size
from .reading import ANALYSIS_TYPES
from .view import ElementType, ExtraType, View

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Box", "Placement", "place_extra", "place_extras", "boxes", "overlaps", "ON_FELT", "CRITICAL", "TITLE_SAFE", "GAP"]

#: the title-safe share of the picture (the studio's guide)
TITLE_SAFE = 0.9
#: px kept between a placed extra and its neighbours
GAP = 8.0
#: grid step of the search, px
STEP = 8.0
#: elements drawn on the table's felt by design: the play area under them is not a problem
ON_FELT: dict[str, frozenset[str]] = {
    ElementType.PLAY_AREA.value: frozenset({ElementType.BANNER.value, ElementType.TRICK_CALLOUT.value}),
}
#: what the game needs on screen: a new extra covers these only where nothing else is possible
CRITICAL = frozenset(
    t.value
    for t in (
        ElementType.PLAY_AREA, ElementType.HAND_NORTH, ElementType.HAND_EAST, ElementType.HAND_SOUTH,
        ElementType.HAND_WEST, ElementType.NS_SCORE, ElementType.EW_SCORE, ElementType.NS_TRICK_BOXES,
        ElementType.EW_TRICK_BOXES, ElementType.TRICK_CALLOUT,
    )
)
#: where each kind usually goes, as a share of the view (the centre of its box)
_HOME: dict[str, tuple[float, float]] = {
    ExtraType.EVENT_TITLE.value: (0.5, 0.12),
    ExtraType.PLAYER_INTRO.value: (0.5, 0.84),
    ExtraType.LOGO.value: (0.88, 0.12),
    ExtraType.MATCH_STATS.value: (0.5, 0.5),
    ExtraType.STATS_LOWER_THIRD.value: (0.5, 0.86),
    ExtraType.DEAL_HISTORY.value: (0.5, 0.78),
    ExtraType.WIN_BAR.value: (0.1, 0.35),
    ExtraType.WIN_GRAPH.value: (0.86, 0.2),
    ExtraType.BEST_PLAY.value: (0.7, 0.62),
    ExtraType.PLAY_QUALITY.value: (0.7, 0.68),
    ExtraType.BIDDING_TABLE.value: (0.15, 0.68),
}


@dataclass(frozen=True)
class Box:
    """What a view draws where: an element's or extra's id, its type and its box in view px."""

    id: str
    type: str
    x: float
    y: float
    w: float
    h: float

    def hits(self, other: Box, gap: float = 0.0) -> bool:
        return self.x < other.x + other.w + gap and other.x < self.x + self.w + gap and self.y < other.y + other.h + gap and other.y < self.y + self.h + gap


@dataclass(frozen=True)
class Placement:
    """Where the new extra goes; ``fits`` false when no free spot exists (``covers``: the ids it
    covers there)."""

    x: int
    y: int
    fits: bool
    covers: tuple[str, ...] = ()


def extra_box_size(t: ExtraType) -> tuple[float, float]:
    """The box of an extra kind, at its largest (an event title with its subtitle line)."""
    w, h = extra_size(t)
    return (w, h + EVENT_GROWTH) if t is ExtraType.EVENT_TITLE else (w, h)


def boxes(view: View, *, implicit: bool = False) -> list[Box]:
    """The boxes of what ``view`` places: its visible elements and extras; with ``implicit``,
    also the analysis extras drawn by default (when analysis is on) while it places none."""
    out: list[Box] = []
    for e in view.elements:
        if not e.visible:
            continue
        try:
            w, h = element_size(e.type)
        except KeyError:  # a type with no box draws nothing
            continue
        out.append(Box(e.id, e.type.value, e.x, e.y, w * e.scale, h * e.scale))
    placed = [x for x in view.extras if x.visible and x.type not in ANALYSIS_TYPES]
    shown = analysis_extras(view) if implicit or any(x.type in ANALYSIS_TYPES for x in view.extras) else ()
    for x in (*placed, *shown):
        w, h = extra_box_size(x.type)
        out.append(Box(x.id, x.type.value, x.x, x.y, w * x.scale, h * x.scale))
    return out


def overlaps(view: View) -> list[tuple[str, str]]:
    """Pairs of ids whose boxes overlap, leaving out what is drawn on the felt by design
    (:data:`ON_FELT`): the studio's overlap warnings."""
    bs = boxes(view)
    out = []
    for i, a in enumerate(bs):
        for b in bs[i + 1 :]:
            if b.type in ON_FELT.get(a.type, ()) or a.type in ON_FELT.get(b.type, ()):
                continue
            if a.hits(b):
                out.append((a.id, b.id))
    return out


def _weights(obstacles: Iterable[Box]) -> np.ndarray:
    import numpy as np

    return np.array([1000.0 if b.type in CRITICAL else 1.0 for b in obstacles])


def place_extra(view: View, kind: ExtraType, *, scale: float = 1.0) -> Placement:
    """Where a new extra of ``kind`` (at ``scale``) goes on ``view`` (see the module)."""
    import numpy as np  # here, not at the top: the service loads this module at start, numpy only when the studio places an extra

    w, h = (v * scale for v in extra_box_size(kind))
    m = (1 - TITLE_SAFE) / 2
    x0, y0 = view.width * m, view.height * m
    x1, y1 = view.width * (1 - m) - w, view.height * (1 - m) - h
    if x1 < x0 or y1 < y0:  # larger than title-safe: centred
        return Placement(round((view.width - w) / 2), round((view.height - h) / 2), False, ())
    xs = np.append(np.arange(x0, x1, STEP), x1)
    ys = np.append(np.arange(y0, y1, STEP), y1)
    cx, cy = np.meshgrid(xs, ys)
    cx, cy = cx.ravel(), cy.ravel()
    obstacles = boxes(view)
    hx, hy = _HOME.get(kind.value, (0.5, 0.5))
    dist = np.hypot(cx + w / 2 - hx * view.width, cy + h / 2 - hy * view.height)
    if not obstacles:
        k = int(np.argmin(dist))
        return Placement(round(float(cx[k])), round(float(cy[k])), True)
    ob = np.array([(b.x, b.y, b.x + b.w, b.y + b.h) for b in obstacles])
    # overlap of each candidate (rows) with each obstacle (columns), the gap included
    ox = np.clip(np.minimum(cx[:, None] + w + GAP, ob[None, :, 2]) - np.maximum(cx[:, None] - GAP, ob[None, :, 0]), 0, None)
    oy = np.clip(np.minimum(cy[:, None] + h + GAP, ob[None, :, 3]) - np.maximum(cy[:, None] - GAP, ob[None, :, 1]), 0, None)
    area = ox * oy
    free = ~(area > 0).any(axis=1)
    if free.any():
        k = int(np.flatnonzero(free)[np.argmin(dist[free])])
        return Placement(round(float(cx[k])), round(float(cy[k])), True)
    cost = (area * _weights(obstacles)[None, :]).sum(axis=1)
    best = cost.min()
    near = np.flatnonzero(cost <= best * 1.0001)
    k = int(near[np.argmin(dist[near])])
    covered = tuple(obstacles[j].id for j in np.flatnonzero(area[k] > 0))
    return Placement(round(float(cx[k])), round(float(cy[k])), False, covered)


def place_extras(view: View, kinds: Iterable[ExtraType], *, scale: float = 1.0) -> list[Placement]:
    """Several new extras, one after another: each goes where :func:`place_extra` puts it on
    the view with the ones before it placed."""
    from .view import Extra

    out = []
    for n, kind in enumerate(kinds):
        p = place_extra(view, kind, scale=scale)
        out.append(p)
        ex = Extra(id=f"__placing-{n}", type=kind, x=p.x, y=p.y, scale=scale)
        view = view.model_copy(update={"extras": (*view.extras, ex)})
    return out
