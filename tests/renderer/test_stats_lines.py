"""The statistics extras and the marks of an alternative line, in the renderer (pure): what
the scene says and draws, the per-game statistics cache, the models the studio edits."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pydantic
import pytest

from engine.load import load_game
from engine.state import StepKind, Timeline
from engine.stats import match_stats
from renderer.altline import AltLine, alt_card
from renderer.extras import EXTRA_SIZES, build_broadcast_scene
from renderer.matchdata import MatchData
from renderer.raster import raster, to_rgba
from renderer.statboard import StatsBook, needs_stats, stats_book
from renderer.view import Extra, ExtraType, View, default_view
from tests.lines import lined_game
from tests.support import game


@pytest.fixture(scope="module")
def tl() -> Timeline:
    return load_game(json.dumps(lined_game()), source="lines.egn").timeline


@pytest.fixture(scope="module")
def long() -> Timeline:
    return load_game(json.dumps(game(21, deals=8)), source="long.egn").timeline


def joined(scene: Any) -> str:
    return json.dumps(json.loads(scene.dumps())["ops"], ensure_ascii=False)


def view_with(*kinds: ExtraType) -> View:
    place = {ExtraType.MATCH_STATS: (410, 250), ExtraType.STATS_LOWER_THIRD: (460, 880), ExtraType.DEAL_HISTORY: (340, 700)}
    return default_view().model_copy(update={"extras": tuple(Extra(id=k.value, type=k, x=place[k][0], y=place[k][1]) for k in kinds)})


# ---- the statistics cache -------------------------------------------------------------------


def test_the_book_answers_every_step_as_match_stats_does_computing_each_answer_once(long: Timeline) -> None:
    book = StatsBook(long)
    for step in range(len(long.steps)):
        assert book.at(step) == match_stats(long, step=step), step
    assert book.computed <= 2 * len(long.deals)
    again = book.computed
    for step in range(len(long.steps)):
        book.at(step)
    assert book.computed == again
    assert stats_book(long) is stats_book(long)


# ---- the extras -------------------------------------------------------------------------------


def test_the_match_panel_shows_every_tally_and_the_streak(long: Timeline) -> None:
    step = long.deals[5].first_step
    stats = stats_book(long).at(step)
    scene = build_broadcast_scene(long.steps[step], view_with(ExtraType.MATCH_STATS), stats=stats)
    text = joined(scene)
    assert "MATCH STATISTICS" in text
    for head in ("TRICKS", "PTS", "CALLS R1", "CALLS R2", "EUCHRED", "EUCHRED BY", "ALONE", "MARCH", "BOWERS"):
        assert f'"{head}"' in text
    team, deals = stats.streak
    assert team is not None and f"\u00d7{deals}" in text
    # every team's points and every player's bowers are drawn as their own text
    for t in stats.teams:
        assert f'"{t.points}"' in text and f'"{t.loners_made}/{t.loners_tried}"' in text
    assert sum(p.tricks for p in stats.players) == sum(t.tricks for t in stats.teams) > 0


@pytest.mark.parametrize("pick, needle", [("team-0", "TEAM STATISTICS"), ("team-1", "TEAM STATISTICS"), ("seat-2", "PLAYER STATISTICS"), (None, None)])
def test_the_lower_third_shows_whom_the_match_data_picks(long: Timeline, pick: str | None, needle: str | None) -> None:
    step = long.deals[4].first_step
    stats = stats_book(long).at(step)
    scene = build_broadcast_scene(long.steps[step], view_with(ExtraType.STATS_LOWER_THIRD), match=MatchData(stats=pick), stats=stats)
    text = joined(scene)
    if needle is None:
        assert "STATISTICS" not in text
        return
    kind, n = pick.split("-") if pick else ("", "0")
    tally = stats.teams[int(n)] if kind == "team" else stats.players[int(n)]
    assert needle in text and f"TRICKS {tally.tricks}" in text and f"BOWERS {tally.bowers}" in text
    # points are a team's: a player's line has none
    assert (f"PTS {tally.points}" in text) == (kind == "team") and ("PTS" in text) == (kind == "team")


def test_the_history_strip_has_a_cell_per_deal_started(long: Timeline) -> None:
    step = long.deals[3].first_step + 2  # deal 4 under way
    stats = stats_book(long).at(step)
    scene = build_broadcast_scene(long.steps[step], view_with(ExtraType.DEAL_HISTORY), stats=stats)
    text = joined(scene)
    assert [c.deal for c in stats.history] == [0, 1, 2, 3]
    for i in range(4):
        assert f'"DEAL {i + 1}"' in text  # each cell: its deal, then its dealer ("D NAME")
    assert text.count('"D ') == 4
    assert "DEAL 5" not in text and "\u2026" in text  # the unfinished deal has no points yet
    scored = [c for c in stats.history if c.points is not None]
    for c in scored:
        if max(c.points or (0,)) > 0:
            assert f"+{max(c.points or (0,))} " in text


def test_a_long_game_shows_its_latest_deals_in_cells_that_read_at_720p() -> None:
    """A cell's lines are 20 px (13 px at 720p): a game with more deals than cells of that
    width fit shows its latest deals, numbered as they were played."""
    from renderer.statboard import MIN_CELL, STATS_SIZES

    tl = load_game(json.dumps(game(6, deals=20)), source="g14.egn").timeline  # 14 deals
    step = len(tl.steps) - 1
    stats = stats_book(tl).at(step)
    assert len(stats.history) == 14
    scene = build_broadcast_scene(tl.steps[step], view_with(ExtraType.DEAL_HISTORY), stats=stats)
    text = joined(scene)
    w = STATS_SIZES[ExtraType.DEAL_HISTORY][0]
    fit = int((w - 112 - 12 + 6) // (MIN_CELL + 6))
    assert fit < 14
    shown = [n for n in range(1, 15) if f'"DEAL {n}"' in text]
    assert shown == list(range(15 - fit, 15))
    sizes = [op[2] for op in json.loads(scene.dumps())["ops"] if op[0] == "t"]
    assert min(sizes) >= 20


def test_statistics_extras_draw_nothing_without_statistics_and_inside_their_box(long: Timeline) -> None:
    st = long.steps[long.deals[2].first_step]
    view = view_with(ExtraType.MATCH_STATS, ExtraType.STATS_LOWER_THIRD, ExtraType.DEAL_HISTORY)
    assert needs_stats(view.extras) and not needs_stats(default_view().extras)
    plain = to_rgba(raster(build_broadcast_scene(st, default_view()), 5.0))
    without = to_rgba(raster(build_broadcast_scene(st, view, match=MatchData(stats="team-0")), 5.0))
    assert np.array_equal(plain, without)
    drawn = to_rgba(raster(build_broadcast_scene(st, view, match=MatchData(stats="team-0"), stats=stats_book(long).at(st.step)), 5.0))
    changed = np.any(drawn != plain, axis=2)
    boxes = np.zeros_like(changed)
    for ex in view.extras:
        w, h = EXTRA_SIZES[ex.type]
        boxes[int(ex.y) - 20 : int(ex.y + h) + 30, int(ex.x) - 20 : int(ex.x + w) + 20] = True  # the panels' soft shadow
        assert changed[int(ex.y) : int(ex.y + h), int(ex.x) : int(ex.x + w)].mean() > 0.5, ex.type
    assert not (changed & ~boxes).any()


def test_the_studio_models_take_the_new_extras_and_picks() -> None:
    schema = View.model_json_schema()
    assert {"match-stats", "stats-lower-third", "deal-history"} <= set(schema["$defs"]["ExtraType"]["enum"])
    field = MatchData.model_json_schema()["properties"]["stats"]
    assert field["title"] and field["description"]
    for bad in ("team-2", "seat-x", "everyone"):
        with pytest.raises(pydantic.ValidationError):
            MatchData(stats=bad)


# ---- the marks of an alternative line ---------------------------------------------------------


def test_the_lines_cards_are_marked_and_the_main_lines_are_not(tl: Timeline) -> None:
    br = next(b for b in tl.branches if b.deal == 1 and b.line == 0)
    first = br.steps[0]
    assert first.kind is StepKind.CARD and first.action is not None and first.action.index is not None
    line = AltLine(deal=1, line=0, first_card=first.action.index)
    per = 4
    for st in br.steps:
        trick = st.trick
        if trick is None or st.kind is not StepKind.CARD:
            continue
        scene = build_broadcast_scene(st, line=line)
        text = joined(scene)
        marked = sum(alt_card(line, st, trick.number, i, per) for i in range(len(trick.cards)))
        assert text.count('"ALT"') == marked, (st.step, marked)
        assert "ALTERNATIVE LINE" in text and "DEAL 2 \u00b7 LINE 1 \u00b7 NOT THE REAL PLAY" in text
        # a card played on the main line before the deviation is never the line's
        if trick.number * per < line.first_card:
            assert not alt_card(line, st, trick.number, 0, per)
    # without the line: no banner, no mark; a main-line state under the banner: no mark
    assert "ALT" not in joined(build_broadcast_scene(br.steps[0]))
    main = tl.steps[br.parent_step]
    text = joined(build_broadcast_scene(main, line=line))
    assert "ALTERNATIVE LINE" in text and '"ALT"' not in text


def test_video_frames_draw_the_statistics_as_the_page_does(long: Timeline) -> None:
    from renderer.frames import FrameSource, Schedule

    view = view_with(ExtraType.DEAL_HISTORY, ExtraType.MATCH_STATS)
    durations = [1.0] * len(long.steps)
    starts = [float(i) for i in range(len(long.steps))]
    src = FrameSource(long.steps, Schedule.of(starts, durations), view=view, size=(1280, 720), stats=stats_book(long).at)
    step = long.deals[3].first_step + 4
    want = build_broadcast_scene(long.steps[step], view, size=(1280, 720), stats=stats_book(long).at(step))
    assert src.scene(step).dumps() == want.dumps()
    assert "MATCH STATISTICS" in joined(want)


def test_the_frame_command_draws_the_statistics_extras(tmp_path: Any) -> None:
    """``euchre-overlay frame --view`` with statistics extras draws them as a page does (it
    used to build the bare table scene and leave every extra out)."""
    from PIL import Image

    from overlay.cli import main

    path = tmp_path / "long.egn"
    path.write_text(json.dumps(game(21, deals=8)), encoding="utf-8")
    timeline = load_game(path.read_bytes(), source="long.egn").timeline
    view = view_with(ExtraType.MATCH_STATS, ExtraType.DEAL_HISTORY)
    (tmp_path / "view.json").write_text(view.model_dump_json(), encoding="utf-8")
    step = len(timeline.steps) - 1
    assert main(["frame", str(path), "--step", str(step), "--view", str(tmp_path / "view.json"), "--size", "960x540", "-o", str(tmp_path / "f.png")]) == 0
    got = np.asarray(Image.open(tmp_path / "f.png").convert("RGBA")).astype(int)
    scene = build_broadcast_scene(timeline.steps[step], view, title=timeline.title, size=(960, 540), stats=stats_book(timeline).at(step))
    want = to_rgba(raster(scene, scene.duration)).astype(int)
    bare = build_broadcast_scene(timeline.steps[step], default_view(), title=timeline.title, size=(960, 540))
    assert np.abs(got - want).max() <= 8
    assert np.abs(got - to_rgba(raster(bare, bare.duration)).astype(int)).max() > 64  # the extras are there
