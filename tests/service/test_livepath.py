"""The live path in the service: a logger action costs what its deal costs, not what the game
does.  The engine pushes the action (engine.live); the service then reads only what the
action changed: the Director's step times are amended from the first changed step
(StepTimes.amended, equal to StepTimes.of over the whole list), the engine's Change says
which steps stand (no comparison of the old and new games), and the store logs the action
(the game's bytes and digest are made only for a snapshot or when asked).  The speed itself
is measured by ``euchre-overlay bench live`` (its ``service_*`` figures), not here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlay.service import feed
from overlay.service.director import StepTimes
from overlay.service.feed import actions_of
from overlay.service.hub import Hub
from overlay.service.outputs import marks_of
from renderer.timing import durations_of
from overlay.service.protocol import ActionIn
from overlay.service.record import SNAPSHOT_EVERY
from overlay.service.store import Store
from tests.support import empty_game, game

durations = st.lists(st.floats(min_value=-1.0, max_value=5.0, allow_nan=False), max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    old=durations,
    tail=durations,
    start=st.integers(min_value=-2, max_value=45),
    old_marks=st.sets(st.integers(min_value=0, max_value=45)),
    tail_marks=st.sets(st.integers(min_value=0, max_value=45)),
    version=st.integers(min_value=0, max_value=9),
)
def test_amended_times_equal_the_times_of_the_whole_list(
    old: list[float], tail: list[float], start: int, old_marks: set[int], tail_marks: set[int], version: int
) -> None:
    times = StepTimes.of(old, 0, old_marks)
    amended = times.amended(start, tail, version=version, marks=sorted(tail_marks))
    cut = min(max(start, 0), len(old))
    whole = StepTimes.of(old[:cut] + tail, version, {m for m in old_marks if m < cut} | {cut + m for m in tail_marks})
    assert amended.durations == whole.durations
    assert amended.starts == pytest.approx(whole.starts)
    assert amended.marks == whole.marks and amended.version == whole.version


def test_an_action_reads_only_what_it_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the first deals, an action neither makes step times from the whole list, nor
    compares the old and new games, nor makes the game's bytes or digest, except for the
    snapshot every SNAPSHOT_EVERY actions; the Director's times and marks are still those
    of the whole game, and the channel's steps are the engine's timeline's own."""
    doc = game(23, deals=6)
    acts = actions_of(doc)
    store = Store(tmp_path / "overlay.sqlite3")
    try:
        ch = Hub(store).create("k")
        ch.ingest.put_game(json.dumps(empty_game(doc)).encode(), source="k.egn")
        for a in acts[:3]:
            ch.ingest.apply_action(ActionIn.model_validate(a))
        made: list[int] = []
        real_data = feed.Loaded.data.func  # type: ignore[attr-defined]

        def counted(self: feed.Loaded) -> bytes:
            made.append(1)
            return bytes(real_data(self))

        def refused(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("an action walked the whole game")

        monkeypatch.setattr(StepTimes, "of", classmethod(refused))
        monkeypatch.setattr(feed, "compare", refused)
        monkeypatch.setattr(feed, "digest", refused)
        monkeypatch.setattr(feed.Loaded, "data", property(counted))
        for a in acts[3 : SNAPSHOT_EVERY + 3]:
            ch.ingest.apply_action(ActionIn.model_validate(a))
        assert len(made) == 1  # the snapshot at seq SNAPSHOT_EVERY
        monkeypatch.undo()
        game_ = ch.game
        assert game_ is not None and game_.steps is game_.timeline.steps
        times = ch.director.times
        assert list(times.durations) == durations_of(game_.steps, ch.render.timing)
        assert times.marks == frozenset(marks_of(game_.steps)) and times.version == ch.revision
    finally:
        store.close()
