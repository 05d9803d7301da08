"""The Director is pure: positions are a function of the clock value passed in."""

from __future__ import annotations

import pytest

from overlay.director import Director, Playhead

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
