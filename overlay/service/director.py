"""The Director: maps a clock value to (step, progress) for a channel's timeline.

Pure: every method takes the clock value ``now`` as an argument, nothing here reads a
clock.  The playhead is a history of **anchors**; each anchor says "at clock ``c`` the
playhead was ``offset`` seconds into step ``s``, playing (or not) at ``speed``, with
``available`` steps known".  Evaluating the position at any clock value finds the anchor in
force and runs the timeline forward from it, so a delayed output (the anti-cheat program
feed) is simply the same function evaluated at ``now - delay``.

Timeline time: step ``i`` occupies ``[starts[i], starts[i] + durations[i])`` seconds.  A
step's duration comes from the Timing settings for its kind (the caller passes the list).

Every anchor also records the :class:`StepTimes` in force when it was pushed: the step durations
and an opaque ``version`` tag (the channel's timeline revision).  A delayed output evaluated
at ``now - delay`` therefore uses the durations *and* the version of the game that were live
then, so a correction reaches a delayed output only when the delay has passed.  History
older than ``max_delay`` (the largest delay of the channel) is pruned, which bounds memory.

**Live catch-up.**  A playhead that follows the feed (``follow``: the live position, set by
``live`` and whenever playback has caught up with the newest step) never drifts behind a fast
table.  When new steps arrive and the newest one would start more than ``max_lag`` seconds
from now, the anchor gets a ``boost``: playback runs ``boost`` times faster (holds and runs
alike) until the newest step starts, exactly ``max_lag`` from now (a little later when that
would need more than ``MAX_BOOST``), and plays that one at the normal speed.  With more than ``skip_lag`` seconds of steps waiting (at normal speed), the
playhead cuts ahead to the newest step instead, but never
over a step its StepTimes mark (a deal-scored banner): it cuts to the latest marked step and
catches up from there.  Deciding this here, where step times are decided, keeps the page,
video export and headless capture in agreement: they all play the positions they are sent.

**Transport** (what an SPX / NodeCG / vMix operator expects): ``play`` always plays (it also
resumes auto-advance after ``next``/``step``/``back``/``seek``); ``next`` starts the next
step's animation at once and holds at its end; ``step`` and ``back`` cut to the finished
picture of the next / previous step and pause.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = ["StepTimes", "Anchor", "Position", "Playhead", "Director", "place", "LOOP_HOLD", "LIVE_LAG", "LIVE_SKIP", "MAX_BOOST"]

#: seconds the last step stays on screen before a looping channel starts again
LOOP_HOLD = 4.0
#: default bound (seconds) on how far a live playhead may trail the newest step's arrival
LIVE_LAG = 1.0
#: default backlog (seconds of steps at normal speed) past which a live playhead cuts ahead
#: instead of speeding up.  A table acting every 0.3 s with the default timing keeps about
#: 4 s waiting (a card step is 1.25 s), a trick and a deal-scored banner arriving with the
#: last card add 6 s more: 12 s plays every state of such a table
LIVE_SKIP = 12.0
#: fastest catch-up (times the operator's speed): a card step then lasts 0.16 s, long enough
#: for the pump to send it on a busy machine.  A backlog needing more trails the bound for a
#: moment rather than lose a state (only ``skip_lag`` cuts)
MAX_BOOST = 8.0


@dataclass(frozen=True, eq=False)
class StepTimes:
    """Step durations (and their start times) of one timeline version."""

    durations: tuple[float, ...]
    starts: tuple[float, ...]
    version: int = 0
    #: steps live catch-up never cuts over (the channel marks deal-scored banners)
    marks: frozenset[int] = frozenset()

    @classmethod
    def of(cls, durations: Sequence[float], version: int = 0, marks: frozenset[int] | Sequence[int] = frozenset()) -> StepTimes:
        ds = tuple(d if d > 0.0 else 0.0 for d in map(float, durations))
        return cls(ds, (0.0, *itertools.accumulate(ds)), version, frozenset(marks))

    def amended(self, start: int, tail: Sequence[float], *, version: int, marks: Sequence[int] = ()) -> StepTimes:
        """These times with every step from ``start`` on replaced by ``tail`` (a live action
        changes or adds the last steps only): the steps before ``start`` keep their durations,
        start times and marks, which are not walked again (a tuple slice is a copy of pointers),
        so the cost is the tail's, at step 3,000 as at step 30.  ``marks``: the tail's marked
        steps, counted from ``start``.  Equal to :meth:`of` over the whole new list."""
        start = min(max(start, 0), len(self.durations))
        ds = tuple(d if d > 0.0 else 0.0 for d in map(float, tail))
        starts = self.starts[: start + 1]
        kept = self.marks if not self.marks or max(self.marks) < start else frozenset(m for m in self.marks if m < start)
        return StepTimes(
            self.durations[:start] + ds,
            starts + tuple(itertools.accumulate(ds, initial=starts[-1]))[1:],
            version,
            kept.union(start + m for m in marks) if marks else kept,
        )


@dataclass(frozen=True)
class Anchor:
    id: int
    clock: float
    step: int
    offset: float  # timeline seconds into ``step``
    playing: bool
    speed: float
    loop: bool
    auto: bool  # auto-advance; False = operator-driven NEXT
    hold: int | None  # manual mode: the last step the playhead may enter
    available: int  # steps known at ``clock``
    jump: bool = False  # this anchor began with a cut (correction, seek): no animation
    times: StepTimes = StepTimes((), (0.0,))  # durations and timeline version in force from ``clock``
    follow: bool = True  # the live position: catch-up keeps it near the newest step
    boost: float = 1.0  # catch-up: playback runs ``boost`` x faster ...
    boost_until: float = 0.0  # ... until this timeline time (the newest step's start)


@dataclass(frozen=True)
class Position:
    """Where the playhead is at one clock value."""

    step: int | None  # None: no steps (empty channel)
    offset: float  # timeline seconds into the step
    duration: float
    playing: bool  # the picture is moving at this moment
    rate: float  # timeline seconds per clock second (0 when still)
    key: tuple[int, int | None, int]  # changes exactly when a new scene must be sent
    next_change: float | None  # clock value at which ``key`` changes by itself
    jump: bool
    version: int = 0  # the timeline version on screen at this clock value

    @property
    def progress(self) -> float:
        if self.duration <= 0:
            return 1.0
        return min(1.0, max(0.0, self.offset / self.duration))


@dataclass(frozen=True)
class Playhead:
    """The persisted form of a Director (position in step space, no clock values)."""

    step: int = 0
    offset: float = 0.0
    playing: bool = True
    speed: float = 1.0
    loop: bool = False
    auto: bool = True
    hold: int | None = None
    follow: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "offset": self.offset,
            "playing": self.playing,
            "speed": self.speed,
            "loop": self.loop,
            "auto": self.auto,
            "hold": self.hold,
            "follow": self.follow,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Playhead:
        """The stored values, typed; a Director places them on its timeline (:func:`place`:
        a negative step, an offset or a hold out of range, a speed of 0)."""
        hold = data.get("hold")
        return cls(
            step=int(data.get("step", 0)),
            offset=float(data.get("offset", 0.0)),
            playing=bool(data.get("playing", True)),
            speed=float(data.get("speed", 1.0)),
            loop=bool(data.get("loop", False)),
            auto=bool(data.get("auto", True)),
            hold=None if hold is None else int(hold),
            follow=bool(data.get("follow", True)),
        )


class Director:
    """Playback clock of one channel.

    ``durations`` holds one duration (seconds) per step of the current timeline.
    ``max_delay`` bounds how far back positions may be asked for (older anchors are pruned).
    ``max_lag`` and ``skip_lag`` are the live catch-up bounds (seconds; ``max_lag`` 0 turns
    catch-up off); ``marks`` are steps catch-up never cuts over.
    """

    def __init__(
        self,
        durations: Sequence[float],
        *,
        now: float,
        playhead: Playhead | None = None,
        max_delay: float = 600.0,
        loop_hold: float = LOOP_HOLD,
        version: int = 0,
        marks: Sequence[int] = (),
        max_lag: float = LIVE_LAG,
        skip_lag: float = LIVE_SKIP,
    ) -> None:
        self._ids = 0
        self.max_delay = max_delay
        self.loop_hold = loop_hold
        self.max_lag = max_lag
        self.skip_lag = skip_lag
        self.times = StepTimes.of(durations, version, frozenset(marks))
        p = place(playhead or Playhead(), self.durations)
        n = len(self.durations)
        # the placed playhead's fields are the anchor's position fields, by name
        self.history: list[Anchor] = [Anchor(id=self._next_id(), clock=now, available=n, jump=True, times=self.times, **asdict(p))]
        self._clocks: list[float] = [now]

    def __deepcopy__(self, memo: dict[int, Any]) -> Director:
        """A Director to change apart from this one (a command or a new game is tried on a
        copy until the store has it).  Anchors and step times are frozen, so only the two
        lists are new: a full deep copy walked every anchor's durations, about 4 % of a
        live channel's CPU per action."""
        new = copy.copy(self)
        new.history = list(self.history)
        new._clocks = list(self._clocks)
        return new

    # ------------------------------------------------------------------ internals

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _set_durations(self, durations: Sequence[float] | StepTimes, version: int | None = None, marks: Sequence[int] | None = None) -> None:
        if isinstance(durations, StepTimes):  # made by the caller (StepTimes.amended): its version and marks
            self.times = durations
            return
        self.times = StepTimes.of(
            durations,
            self.times.version if version is None else version,
            self.times.marks if marks is None else frozenset(marks),
        )

    @property
    def durations(self) -> tuple[float, ...]:
        return self.times.durations

    @property
    def starts(self) -> tuple[float, ...]:
        return self.times.starts

    @property
    def version(self) -> int:
        return self.times.version

    def _anchor_at(self, clock: float) -> tuple[Anchor, float | None]:
        """The anchor in force at ``clock`` and the clock of the one after it."""
        hist = self.history
        lo = bisect.bisect_right(self._clocks, clock) - 1
        if lo < 0:
            # before recorded history: the oldest known state, frozen
            first = hist[0]
            return replace(first, playing=False), first.clock
        nxt = hist[lo + 1].clock if lo + 1 < len(hist) else None
        return hist[lo], nxt

    @staticmethod
    def _end(a: Anchor, n: int) -> float:
        starts = a.times.starts
        if a.auto or a.hold is None:
            return starts[n]
        return starts[min(max(a.hold, 0), n - 1) + 1]

    @staticmethod
    def _locate(times: StepTimes, tau: float, n: int) -> tuple[int, float]:
        step = bisect.bisect_right(times.starts, tau, 0, n) - 1
        step = min(max(step, 0), n - 1)
        return step, min(tau - times.starts[step], times.durations[step])

    # ------------------------------------------------------------------ queries

    @property
    def anchor(self) -> Anchor:
        return self.history[-1]

    @property
    def steps(self) -> int:
        return len(self.durations)

    def position(self, clock: float) -> Position:
        """The playhead at ``clock`` (any value: delayed outputs ask for the past), with the
        durations and timeline version that were in force at ``clock``."""
        a, next_anchor = self._anchor_at(clock)
        st = a.times
        durations, starts = st.durations, st.starts
        n = min(a.available, len(durations))
        if n <= 0:
            return Position(None, 0.0, 0.0, False, 0.0, (a.id, None, 0), next_anchor, a.jump, st.version)
        s0 = min(a.step, n - 1)
        off0 = min(a.offset, durations[s0])
        tau0 = starts[s0] + off0
        end = self._end(a, n)
        end_step = n - 1 if (a.auto or a.hold is None) else min(max(a.hold, 0), n - 1)
        cycle = 0
        moving = False
        next_change: float | None = None
        # a still playhead keeps (step, offset) as given: "end of step s" is not "start of s+1"
        step, offset = s0, off0
        rate = 0.0
        if a.playing and a.speed > 0:
            tau = _advance(a, tau0, clock - a.clock)
            period = starts[n] + self.loop_hold
            if a.loop and a.auto and period > 0 and tau >= period:
                cycle = int(tau // period)
                tau -= cycle * period
            if tau < end:
                moving = True
                step, offset = self._locate(st, tau, n)
                rate = a.speed * (a.boost if tau < a.boost_until else 1.0)
                next_change = a.clock + _elapsed(a, tau0, starts[step + 1]) if not cycle else clock + (starts[step + 1] - tau) / a.speed
            elif tau0 < end or cycle:
                step, offset = end_step, durations[end_step]
                if a.loop and a.auto:
                    next_change = clock + (period - tau) / a.speed
        if next_anchor is not None and (next_change is None or next_anchor < next_change):
            next_change = next_anchor
        jump = a.jump and step == s0 and cycle == 0
        return Position(
            step=step,
            offset=offset,
            duration=durations[step],
            playing=moving,
            rate=rate if moving else 0.0,
            key=(a.id, step, cycle),
            next_change=next_change,
            jump=jump,
            version=st.version,
        )

    def playhead(self, now: float) -> Playhead:
        """The persisted form of the live position."""
        a = self.anchor
        pos = self.position(now)
        return Playhead(
            step=pos.step or 0,
            offset=pos.offset,
            playing=a.playing,
            speed=a.speed,
            loop=a.loop,
            auto=a.auto,
            hold=a.hold,
            follow=a.follow,
        )

    def lag(self, now: float) -> float:
        """Clock seconds from ``now`` until the newest known step starts playing, with any
        catch-up in force: how far the live picture trails the feed (0 once it shows the
        newest step; infinite while paused or held short of it)."""
        n = len(self.durations)
        pos = self.position(now)
        if pos.step is None or n == 0 or pos.step >= n - 1:
            return 0.0
        a = self.anchor
        if not pos.playing or a.speed <= 0:
            return float("inf")
        tau = self.starts[pos.step] + pos.offset
        target = self.starts[n - 1]
        if a.boost > 1.0 and tau < a.boost_until:
            fast = a.speed * a.boost
            reach = min(target, a.boost_until)
            return (reach - tau) / fast + max(0.0, target - a.boost_until) / a.speed
        return (target - tau) / a.speed

    # ------------------------------------------------------------------ commands

    def _push(self, now: float, **changes: Any) -> Anchor:
        pos = self.position(now)
        prev = self.anchor
        base: dict[str, Any] = dict(
            id=self._next_id(),
            clock=now,
            step=pos.step or 0,
            offset=pos.offset,
            playing=prev.playing,
            speed=prev.speed,
            loop=prev.loop,
            auto=prev.auto,
            hold=prev.hold,
            available=len(self.durations),
            jump=False,
            times=self.times,
            follow=prev.follow,
            # a boost lasts until the step it aims at (commands that move the playhead drop it)
            boost=prev.boost,
            boost_until=prev.boost_until,
        )
        base.update(changes)
        anchor = Anchor(**base)
        if self.history and self.history[-1].clock > now:
            raise ValueError(f"clock went backwards: {now} < {self.history[-1].clock}")
        self.history.append(anchor)
        self._clocks.append(now)
        self._prune(now)
        return anchor

    def _prune(self, now: float) -> None:
        # a second of slack for delayed outputs; with no delay only the live anchor matters
        cutoff = now - self.max_delay - (1.0 if self.max_delay > 0 else 0.0)
        # the last anchor at or before the cutoff stays (it is in force there); clocks only grow
        keep = bisect.bisect_right(self._clocks, cutoff) - 1
        if keep > 0:
            del self.history[:keep]
            del self._clocks[:keep]

    @property
    def oldest_version(self) -> int:
        """The oldest timeline version any kept anchor still shows (older ones may go)."""
        return min(a.times.version for a in self.history)

    def _cut(self, now: float, step: int, **changes: Any) -> Anchor:
        """Show ``step`` complete at once (no animation)."""
        n = len(self.durations)
        step = min(max(step, 0), max(n - 1, 0))
        offset = self.durations[step] if n else 0.0
        return self._push(now, step=step, offset=offset, jump=True, **changes)

    def play(self, now: float) -> Anchor:
        """Play from here, always: also resumes auto-advance after ``next``, ``step``,
        ``back`` or ``seek`` (which hold the playhead on one step)."""
        return self._push(now, playing=True, auto=True, hold=None)

    def pause(self, now: float) -> Anchor:
        return self._push(now, playing=False, boost=1.0, boost_until=0.0)

    def toggle(self, now: float) -> Anchor:
        return self.pause(now) if self.anchor.playing else self.play(now)

    def next(self, now: float) -> Anchor:
        """Operator NEXT: start the next step's animation now, then hold at its end
        (auto-advance off until ``play``).  Pressed during an animation, it does not wait for
        it: the operator sees the next card move at the press."""
        pos = self.position(now)
        n = len(self.durations)
        cur = pos.step or 0
        if cur + 1 >= n:  # nothing further: finish what is on screen and hold there
            return self._push(now, playing=True, auto=False, hold=max(n - 1, 0), follow=False, boost=1.0, boost_until=0.0)
        return self._push(now, step=cur + 1, offset=0.0, playing=True, auto=False, hold=cur + 1, follow=False, boost=1.0, boost_until=0.0)

    def step_forward(self, now: float) -> Anchor:
        """Cut to the next step's finished picture (no animation) and pause there."""
        pos = self.position(now)
        target = (pos.step or 0) + 1
        return self._cut(now, target, playing=False, hold=target, follow=False, boost=1.0, boost_until=0.0)

    def step_back(self, now: float) -> Anchor:
        """Cut to the previous step's finished picture and pause there."""
        pos = self.position(now)
        target = (pos.step or 0) - 1
        return self._cut(now, target, playing=False, hold=max(target, 0), follow=False, boost=1.0, boost_until=0.0)

    def seek(self, now: float, step: int) -> Anchor:
        """Go to ``step``: playing, it animates from its start (and plays on unless the
        operator drives with ``next``); paused, it shows complete and ``play`` goes on from it."""
        if self.anchor.playing:
            n = len(self.durations)
            step = min(max(step, 0), max(n - 1, 0))
            return self._push(now, step=step, offset=0.0, jump=True, hold=step, follow=False, boost=1.0, boost_until=0.0)
        return self._cut(now, step, hold=step, follow=False, boost=1.0, boost_until=0.0)

    def set_speed(self, now: float, speed: float) -> Anchor:
        if not speed > 0:
            raise ValueError(f"speed must be positive, got {speed!r}")
        return self._push(now, speed=speed)

    def set_loop(self, now: float, loop: bool) -> Anchor:
        return self._push(now, loop=loop)

    def set_auto(self, now: float, auto: bool) -> Anchor:
        pos = self.position(now)
        return self._push(now, auto=auto, hold=None if auto else (pos.step or 0))

    def live(self, now: float) -> Anchor:
        """Jump to the newest step and follow the feed (auto-advance, playing, catch-up on)."""
        return self._cut(now, len(self.durations) - 1, playing=True, auto=True, hold=None, follow=True, boost=1.0, boost_until=0.0)

    def catch_up(self, now: float) -> Anchor | None:
        """Keep a live playhead within ``max_lag`` of the newest step (see the module text).

        Returns the anchor pushed, or None when nothing needed to change.
        """
        a = self.anchor
        n = len(self.durations)
        if not (a.follow and a.playing and a.auto and not a.loop and self.max_lag > 0 and n > 0 and a.speed > 0):
            return None
        pos = self.position(now)
        if pos.step is None:
            return None
        starts = self.starts
        newest = n - 1
        tau = starts[pos.step] + pos.offset
        backlog = (starts[newest] - tau) / a.speed  # clock seconds at normal speed
        if a.boost > 1.0 and tau < a.boost_until and a.boost_until == starts[newest]:
            return None  # already on its way: the newest step starts when it was promised
        if a.jump and a.step == pos.step and pos.step in self.times.marks and tau < a.boost_until:
            return None  # a banner cut to by catch-up plays to its end first
        if backlog <= self.max_lag:
            if a.boost != 1.0 and a.boost_until > tau:
                # the newest step is near enough now: back to normal speed from here
                return self._push(now, boost=1.0, boost_until=0.0)
            return None
        if backlog > self.skip_lag:
            # cut ahead to the newest step; over a marked step (a deal-scored banner), cut to
            # the latest such step instead and show it for ``max_lag`` seconds: the next
            # call (the channel calls this on every wake, and one comes when the step ends)
            # cuts on from there
            skipped = [m for m in self.times.marks if pos.step < m < newest]
            if not skipped:
                return self._push(now, step=newest, offset=0.0, jump=True, boost=1.0, boost_until=0.0)
            target = max(skipped)
            boost = max(1.0, self.durations[target] / a.speed / self.max_lag)
            return self._push(now, step=target, offset=0.0, jump=True, boost=boost, boost_until=starts[target + 1])
        boost = min(backlog / self.max_lag, MAX_BOOST)
        return self._push(now, boost=boost, boost_until=starts[newest])

    def timeline_changed(
        self,
        now: float,
        durations: Sequence[float] | StepTimes,
        *,
        first_changed: int | None,
        version: int | None = None,
        marks: Sequence[int] | None = None,
    ) -> Anchor | None:
        """A new replay of the game arrived.

        ``durations``: the new timeline's, or its :class:`StepTimes` (then ``version`` and
        ``marks`` are its own: a live action amends the times in force, :meth:`StepTimes.amended`).
        ``first_changed`` is the first step that differs from the previous timeline (``None``
        when nothing changed).  Steps only appended animate as the playhead reaches them (a
        live playhead catches up, see :meth:`catch_up`); a change at or before the step on
        screen (a correction, an undo) cuts to the corrected picture without animation.
        """
        if isinstance(durations, StepTimes):
            version = durations.version
        same_version = version is None or version == self.version
        if first_changed is None and len(durations.durations if isinstance(durations, StepTimes) else durations) == len(self.durations) and same_version:
            return None
        pos = self.position(now)
        cur = pos.step
        old_n = len(self.durations)
        waiting_at_end = cur is not None and cur == old_n - 1 and pos.offset >= self.durations[cur]
        self._set_durations(durations, version, marks)
        n = len(self.durations)
        if cur is None:
            # the first steps: a few (a logger starting a game) are followed live; a whole
            # game arriving at once is played from its start, as a replay
            return self._push(now, step=0, offset=0.0, available=n, follow=self._fresh_follow(0), boost=1.0, boost_until=0.0)
        if first_changed is not None and first_changed <= cur:
            return self._cut(now, min(cur, n - 1))
        if waiting_at_end and n > old_n and self.anchor.auto and self.anchor.playing:
            # the playhead was waiting for the feed: it is live, the new step starts now
            pushed = self._push(now, step=old_n, offset=0.0, available=n, follow=True, boost=1.0, boost_until=0.0)
        else:
            pushed = self._push(now, step=cur, offset=min(pos.offset, self.durations[cur]), available=n)
        return self.catch_up(now) or pushed

    def retime(self, now: float, durations: Sequence[float]) -> Anchor:
        """New step durations (Timing settings changed): keep the step and its progress."""
        pos = self.position(now)
        self._set_durations(durations)
        n = len(self.durations)
        if pos.step is None or n == 0:
            return self._push(now, step=0, offset=0.0, available=n, boost=1.0, boost_until=0.0)
        step = min(pos.step, n - 1)
        pushed = self._push(now, step=step, offset=pos.progress * self.durations[step], available=n, boost=1.0, boost_until=0.0)
        return self.catch_up(now) or pushed

    def reset(
        self, now: float, durations: Sequence[float], *, step: int = 0, version: int | None = None, marks: Sequence[int] | None = None
    ) -> Anchor:
        """A different game: start it at ``step`` with its first step animating."""
        self._set_durations(durations, version, marks)
        n = len(self.durations)
        step = min(max(step, 0), max(n - 1, 0))
        return self._push(
            now,
            step=step,
            offset=0.0,
            available=n,
            jump=False,
            hold=None if self.anchor.auto else step,
            follow=self._fresh_follow(step),
            boost=1.0,
            boost_until=0.0,
        )

    def switch(
        self, now: float, durations: Sequence[float], playhead: Playhead, *, version: int, marks: Sequence[int] = (), jump: bool = True
    ) -> Anchor:
        """Another timeline takes over (an alternative line goes on or off air): go on from
        ``playhead`` (step, offset, playing, speed, loop, auto, hold, follow) over
        ``durations``, placed by :func:`place` as a starting Director places it;
        ``jump``: the picture cuts there (no animation into it)."""
        self._set_durations(durations, version, marks)
        p = place(playhead, self.durations)
        return self._push(now, **asdict(p), available=len(self.durations), jump=jump, boost=1.0, boost_until=0.0)

    def _fresh_follow(self, step: int) -> bool:
        """Whether a playhead starting at ``step`` of a newly arrived game follows it live: only
        when the rest of the game is within ``skip_lag`` (more is a replay, played in full)."""
        n = len(self.durations)
        return n == 0 or (self.starts[n - 1] - self.starts[min(step, n - 1)]) / max(self.anchor.speed, 1e-9) <= self.skip_lag


def place(playhead: Playhead, durations: Sequence[float]) -> Playhead:
    """Where ``playhead`` lands on a timeline of ``durations``: the one rule for a Director
    that starts (a restart, a new channel) and for one that switches timeline (an
    alternative line on or off air), so both show the same picture for the same playhead.

    * no steps: step 0, offset 0 (nothing is on screen until steps arrive);
    * a step before the first (negative): the first step, from its start;
    * a step past the last (the game shrank meanwhile: an undo, a correction, a shorter
      game): the last step, **complete** (the playhead had gone beyond it; an offset into
      a later step means nothing here);
    * otherwise the step, its offset within ``[0, duration]`` (not a number: 0);
    * ``hold`` (operator NEXT's last step) within ``[0, n - 1]``; a speed that is not a
      positive number plays at 1 (``set_speed`` refuses one).
    """
    n = len(durations)
    step, offset = playhead.step, playhead.offset
    if math.isnan(offset):
        offset = 0.0
    if n == 0 or step < 0:
        step, offset = 0, 0.0
    elif step >= n:
        step, offset = n - 1, float(durations[n - 1])
    else:
        offset = min(max(offset, 0.0), float(durations[step]))
    hold = playhead.hold
    if hold is not None:
        hold = min(max(hold, 0), max(n - 1, 0))
    speed = playhead.speed if math.isfinite(playhead.speed) and playhead.speed > 0 else 1.0
    return replace(playhead, step=step, offset=offset, hold=hold, speed=speed)


def _advance(a: Anchor, tau0: float, dt: float) -> float:
    """Timeline time ``dt`` clock seconds after ``a`` (which starts at ``tau0``): boosted
    until ``a.boost_until``, at the operator's speed after it."""
    if a.boost > 1.0 and tau0 < a.boost_until:
        fast = a.speed * a.boost
        switch = (a.boost_until - tau0) / fast
        if dt <= switch:
            return tau0 + dt * fast
        return a.boost_until + (dt - switch) * a.speed
    return tau0 + dt * a.speed


def _elapsed(a: Anchor, tau0: float, tau: float) -> float:
    """Clock seconds after ``a`` at which the playhead reaches timeline time ``tau``."""
    if a.boost > 1.0 and tau0 < a.boost_until:
        fast = a.speed * a.boost
        if tau <= a.boost_until:
            return (tau - tau0) / fast
        return (a.boost_until - tau0) / fast + (tau - a.boost_until) / a.speed
    return (tau - tau0) / a.speed
