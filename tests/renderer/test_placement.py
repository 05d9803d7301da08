"""Defaults that never cover the game (issue 23 item 7): the default views open with no
overlap, and a new extra goes into free space inside title-safe, clear of the hands, the
table, the scores and the other extras; where none is free the answer says what it covers."""

from __future__ import annotations

import pytest

from renderer.placement import CRITICAL, GAP, TITLE_SAFE, Box, boxes, overlaps, place_extra
from renderer.panels import PANEL_OPACITY, opaque
from renderer.settings import default_views
from renderer.view import Element, ElementType, Extra, ExtraType, View

#: the kinds that fit beside the default layout (the wide segment graphics do not: below)
FITTING = [
    ExtraType.EVENT_TITLE, ExtraType.PLAYER_INTRO, ExtraType.LOGO, ExtraType.WIN_BAR, ExtraType.WIN_GRAPH,
    ExtraType.BEST_PLAY, ExtraType.PLAY_QUALITY, ExtraType.BIDDING_TABLE,
]
WIDE = [ExtraType.MATCH_STATS, ExtraType.STATS_LOWER_THIRD, ExtraType.DEAL_HISTORY]


def _in_safe(view: View, b: Box) -> bool:
    m = (1 - TITLE_SAFE) / 2
    return b.x >= view.width * m - 0.5 and b.y >= view.height * m - 0.5 and b.x + b.w <= view.width * (1 - m) + 0.5 and b.y + b.h <= view.height * (1 - m) + 0.5


def _add(view: View, kind: ExtraType, x: float, y: float) -> View:
    n = sum(1 for e in view.extras if e.type is kind)
    ex = Extra(id=kind.value if not n else f"{kind.value}-{n + 1}", type=kind, x=x, y=y)
    return view.model_copy(update={"extras": (*view.extras, ex)})


@pytest.mark.parametrize("output", ["program", "preview", "clean"])
def test_the_default_views_open_with_no_overlap_and_inside_title_safe(output: str) -> None:
    view = default_views()[output]  # type: ignore[index]
    assert overlaps(view) == []
    assert all(_in_safe(view, b) for b in boxes(view))


@pytest.mark.parametrize("kind", FITTING, ids=lambda k: k.value)
@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)], ids=["1080p", "720p"])
def test_a_new_extra_goes_into_free_space(kind: ExtraType, size: tuple[int, int]) -> None:
    base = default_views()["preview"]
    if size != (1920, 1080):  # the same layout made for another picture size
        sx, sy = size[0] / 1920, size[1] / 1080
        base = base.model_copy(update={"width": size[0], "height": size[1], "elements": tuple(
            e.model_copy(update={"x": e.x * sx, "y": e.y * sy, "scale": e.scale * min(sx, sy)}) for e in base.elements)})
    scale = min(size[0] / 1920, size[1] / 1080)
    p = place_extra(base, kind, scale=scale)
    assert p.fits and p.covers == (), p
    ex = Extra(id="new", type=kind, x=p.x, y=p.y, scale=scale)
    placed = base.model_copy(update={"extras": (*base.extras, ex)})
    new = next(b for b in boxes(placed) if b.id == "new")
    assert _in_safe(placed, new)
    assert not [b.id for b in boxes(placed) if b.id != "new" and b.hits(new)]
    assert overlaps(placed) == []


def test_extras_added_one_after_another_never_cover_each_other() -> None:
    view = default_views()["preview"]
    for kind in (ExtraType.EVENT_TITLE, ExtraType.LOGO, ExtraType.PLAYER_INTRO, ExtraType.LOGO):
        p = place_extra(view, kind)
        view = _add(view, kind, p.x, p.y)
        if p.fits:
            assert overlaps(view) == [], (kind, overlaps(view))
        else:  # no room left: said, with what it would cover
            assert p.covers
    assert sum(1 for e in view.extras) == 4


@pytest.mark.parametrize("kind", WIDE, ids=lambda k: k.value)
def test_where_nothing_is_free_the_answer_says_what_it_covers(kind: ExtraType) -> None:
    view = default_views()["preview"]
    p = place_extra(view, kind)
    assert not p.fits and p.covers
    placed = _add(view, kind, p.x, p.y)
    new = next(b for b in boxes(placed) if b.type == kind.value)
    assert _in_safe(placed, new)
    assert set(p.covers) == {b.id for b in boxes(placed) if b.id != new.id and b.hits(new, GAP)}


def test_the_game_is_covered_last() -> None:
    """No free room anywhere: the top is the annotations', the bottom the south hand's; a
    player intro goes over the annotations, never over the hand."""
    view = View(elements=(
        Element(id="annotations", type=ElementType.ANNOTATIONS, x=96, y=54, scale=2.88),
        Element(id="hand-south", type=ElementType.HAND_SOUTH, x=96, y=500, scale=4.1),
    ))
    p = place_extra(view, ExtraType.PLAYER_INTRO)
    assert not p.fits and p.covers == ("annotations",), p
    assert "hand-south" in CRITICAL and "annotations" not in CRITICAL


def test_an_empty_view_centres_nothing_and_places_by_kind() -> None:
    empty = View(elements=())
    title = place_extra(empty, ExtraType.EVENT_TITLE)
    intro = place_extra(empty, ExtraType.PLAYER_INTRO)
    assert title.fits and intro.fits and title.y < 300 < intro.y


def test_an_extras_panel_is_opaque_enough_to_read_over_anything() -> None:
    assert opaque("#10162480") == f"#101624{round(PANEL_OPACITY * 255):02x}"
    assert opaque("#101624") == "#101624" and opaque("#101624ff") == "#101624ff"
