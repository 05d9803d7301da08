"""The Director is pure: positions are a function of the clock value passed in."""

from __future__ import annotations

import pytest

from overlay.service.director import Director, Playhead

DUR = [1.0, 0.5, 0.5, 2.0]  # starts 0, 1, 1.5, 2 ; end 4


def at(d: Director, t: float) -> tuple[int | None, float]:
    p = d.position(t)
    return p.step, round(p.offset, 6)


@pytest.mark.parametrize(
    "t, expected",
    [
        (100.0, (0, 0.0)),
        (100.5, (0, 0.5)),
        (101.0, (1, 0.0)),
        (101.6, (2, 0.1)),
        (103.9, (3, 1.9)),
        (104.0, (3, 2.0)),
        (200.0, (3, 2.0)),  # waits at the end
        (50.0, (0, 0.0)),  # before history: oldest state, frozen
    ],
)
def test_play_maps_clock_to_step(t: float, expected: tuple[int, float]) -> None:
    d = Director(DUR, now=100.0)
    assert at(d, t) == expected


def test_next_change_is_the_step_boundary() -> None:
    d = Director(DUR, now=0.0)
    p = d.position(0.2)
    assert p.next_change == pytest.approx(1.0)
    assert p.playing and p.rate == 1.0
    assert d.position(10).next_change is None and not d.position(10).playing


def test_pause_play_speed() -> None:
    d = Director(DUR, now=0.0)
    d.pause(0.5)
    assert at(d, 3.0) == (0, 0.5)
    assert d.position(3.0).rate == 0.0
    d.play(3.0)
    assert at(d, 3.5) == (1, 0.0)
    d.set_speed(3.5, 2.0)
    assert at(d, 3.75) == (2, 0.0)
    assert d.position(3.8).rate == 2.0


def test_delayed_output_sees_the_past() -> None:
    d = Director(DUR, now=0.0)
    d.pause(0.5)
    d.seek(10.0, 3)
    assert at(d, 10.0) == (3, 2.0)
    # a program output 5 s behind still shows the paused step 0 at clock 10
    assert at(d, 10.0 - 5.0) == (0, 0.5)
    assert d.position(5.0).next_change == pytest.approx(10.0)
    assert d.position(10.0).jump


def test_loop_restarts_after_the_hold() -> None:
    d = Director(DUR, now=0.0, playhead=Playhead(loop=True), loop_hold=1.0)
    assert at(d, 4.5) == (3, 2.0)  # holding the last step
    assert d.position(4.5).next_change == pytest.approx(5.0)
    assert at(d, 5.2) == (0, pytest.approx(0.2))
    assert d.position(5.2).key != d.position(0.2).key  # a new cycle sends a new scene


def test_live_feed_appends_animate_from_now() -> None:
    d = Director(DUR, now=0.0)
    assert at(d, 10.0) == (3, 2.0)  # waiting for the feed
    d.timeline_changed(10.0, DUR + [1.0], first_changed=4)
    assert at(d, 10.0) == (4, 0.0)
    assert at(d, 10.5) == (4, 0.5)
    assert d.position(10.5).playing


def test_correction_cuts_without_animation() -> None:
    d = Director(DUR, now=0.0)
    d.timeline_changed(10.0, [1.0, 0.5, 0.7, 2.0], first_changed=2)
    p = d.position(10.0)
    assert (p.step, p.progress, p.jump) == (3, 1.0, True)


def test_undo_past_the_playhead_shows_new_last_step() -> None:
    d = Director(DUR, now=0.0)
    d.timeline_changed(10.0, DUR[:2], first_changed=2)
    p = d.position(10.0)
    assert (p.step, p.progress) == (1, 1.0)


def test_operator_next_holds_each_step() -> None:
    d = Director(DUR, now=0.0, playhead=Playhead(auto=False, hold=0))
    assert at(d, 5.0) == (0, 1.0)
    d.next(5.0)
    assert at(d, 5.2) == (1, 0.2)
    assert at(d, 9.0) == (1, 0.5)  # holds after the step
    d.next(9.0)
    d.next(9.1)  # queued: two steps further
    assert at(d, 20.0) == (3, 2.0)


def test_step_and_back_are_cuts() -> None:
    d = Director(DUR, now=0.0)
    d.step_forward(0.1)
    assert at(d, 5.0) == (1, 0.5)
    d.step_back(5.0)
    d.step_back(5.0)
    assert at(d, 6.0) == (0, 1.0)


def test_playhead_round_trip() -> None:
    d = Director(DUR, now=0.0)
    d.set_loop(0.0, True)
    d.pause(1.25)
    ph = d.playhead(7.0)
    assert ph == Playhead.from_json(ph.to_json())
    d2 = Director(DUR, now=500.0, playhead=ph)
    assert at(d2, 600.0) == (1, 0.25)


def test_history_is_pruned() -> None:
    d = Director(DUR, now=0.0, max_delay=10.0)
    for i in range(1, 100):
        d.pause(float(i))
    assert len(d.history) < 20
    assert at(d, 98.0 - 5) == (1, 0.0)  # paused on the boundary: the next step began


def test_empty_timeline_then_first_game() -> None:
    d = Director([], now=0.0)
    assert d.position(1.0).step is None
    d.timeline_changed(2.0, DUR, first_changed=0)
    assert at(d, 2.5) == (0, 0.5)


def test_clock_must_not_go_backwards() -> None:
    d = Director(DUR, now=10.0)
    with pytest.raises(ValueError):
        d.pause(5.0)


def test_seek_while_playing_animates_from_the_step_start() -> None:
    d = Director(DUR, now=0.0)
    d.seek(0.2, 3)
    p = d.position(0.7)
    assert (p.step, round(p.offset, 6), p.playing) == (3, 0.5, True)


def test_retime_keeps_step_and_progress() -> None:
    d = Director(DUR, now=0.0)
    d.retime(3.0, [2.0, 1.0, 1.0, 4.0])  # at 3.0: step 3, 1.0 of 2.0 s
    p = d.position(3.0)
    assert (p.step, p.offset) == (3, 2.0)


# ---------------------------------------------------------------- one placing rule


def _placed(d: Director) -> tuple[int, float, int | None, float]:
    a = d.anchor
    return a.step, round(a.offset, 6), a.hold, a.speed


@pytest.mark.parametrize(
    "durations, playhead, expected",
    [
        ([], Playhead(step=3, offset=0.4), (0, 0.0, None, 1.0)),  # empty game
        ([], Playhead(step=-2, offset=-1.0), (0, 0.0, None, 1.0)),
        (DUR, Playhead(step=-2, offset=0.3), (0, 0.0, None, 1.0)),  # negative step: the first, from its start
        (DUR, Playhead(step=2, offset=-1.0), (2, 0.0, None, 1.0)),  # negative offset
        (DUR, Playhead(step=1, offset=9.0), (1, 0.5, None, 1.0)),  # offset past the step's end
        (DUR, Playhead(step=1, offset=float("nan")), (1, 0.0, None, 1.0)),
        (DUR, Playhead(step=7, offset=0.25), (3, 2.0, None, 1.0)),  # past the end: the last step, complete
        (DUR, Playhead(step=4, offset=0.0), (3, 2.0, None, 1.0)),
        (DUR, Playhead(step=3, offset=0.25), (3, 0.25, None, 1.0)),  # in range: kept
        (DUR, Playhead(step=2, auto=False, hold=9), (2, 0.0, 3, 1.0)),
        (DUR, Playhead(step=2, auto=False, hold=-1), (2, 0.0, 0, 1.0)),
        (DUR, Playhead(step=1, speed=0.0), (1, 0.0, None, 1.0)),
        (DUR, Playhead(step=1, speed=-2.0), (1, 0.0, None, 1.0)),
    ],
)
def test_start_and_switch_place_a_playhead_alike(durations: list[float], playhead: Playhead, expected: tuple[int, float, int | None, float]) -> None:
    """A Director starting from a playhead and one switching to it (an alternative line on
    or off air) put it at the same place, by one rule (``place``)."""
    started = Director(durations, now=0.0, playhead=playhead)
    switched = Director([1.0] * 12, now=0.0, playhead=Playhead(step=9, offset=0.5))
    switched.switch(0.0, durations, playhead, version=1)
    assert _placed(started) == _placed(switched) == expected
    for clock in (0.0, 0.3, 50.0):
        a, b = started.position(clock), switched.position(clock)
        assert (a.step, a.offset, a.playing) == (b.step, b.offset, b.playing), clock
    # the persisted form reads back to the same place
    again = Director(durations, now=0.0, playhead=Playhead.from_json(started.playhead(0.0).to_json()))
    a, b = again.position(0.0), started.position(0.0)
    assert (a.step, a.offset) == (b.step, b.offset)


def test_a_main_line_that_shrank_while_a_line_was_on_air_resumes_at_its_last_step_complete() -> None:
    """The main line's playhead was mid-step 6 of 8 when a line went on air; an undo left it 4
    steps long: back on the main line (switch) and after a restart (start) alike, the
    picture is step 3 complete, not step 3 at step 6's offset."""
    main = [1.0] * 8
    d = Director(main, now=0.0)
    d.seek(0.0, 6)
    resume = d.playhead(0.25)
    assert (resume.step, resume.offset) == (6, 0.25)
    d.switch(0.25, [1.0] * 10, Playhead(step=7, playing=True), version=1)  # the line on air
    shrunk = [1.0, 0.5, 0.5, 2.0]
    d.switch(1.0, shrunk, resume, version=2)  # back, the main line now 4 steps long
    restarted = Director(shrunk, now=1.0, playhead=resume)
    for director in (d, restarted):
        p = director.position(1.0)
        assert (p.step, p.offset) == (3, 2.0)
        assert director.position(9.0).step == 3


def test_a_deep_copy_changes_apart_from_the_original() -> None:
    """Commands and new games are tried on a deep copy (kept only once stored): changing
    the copy leaves the original's positions and history as they were."""
    import copy

    d = Director(DUR, now=0.0)
    d.pause(0.5)
    before = [at(d, t) for t in (0.2, 0.7, 3.0)]
    anchors = list(d.history)
    c = copy.deepcopy(d)
    c.seek(1.0, 3)
    c.play(1.0)
    c.timeline_changed(2.0, [*DUR, 1.0], first_changed=4, version=1)
    assert [at(d, t) for t in (0.2, 0.7, 3.0)] == before and d.history == anchors
    assert at(c, 2.5) != at(d, 2.5) and len(c.durations) == 5 and len(d.durations) == 4
