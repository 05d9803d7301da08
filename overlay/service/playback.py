"""Director wiring: control commands and settings changes reach a channel's Director.

The :class:`~overlay.service.director.Director` is a pure function of commands and time; this part
turns HTTP control requests into its calls (resolving seek targets inside a match), retimes
it when the timing settings change, and stores the playhead after each command.  ``branch``
and ``mainline`` put an alternative line on air and take it off (:mod:`overlay.service.branching`).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from renderer.matchdata import MatchData
from renderer.settings import OUTPUTS, ChannelSettings, RenderSettings
from renderer.timing import TakeTransition, Timing, durations_of

from .branching import OnAir, find_branch, line_game
from .core import ChannelCore
from .director import Director, Playhead
from .errors import BadRequest, Unprocessable
from .protocol import ControlRequest
from .outputs import TakeFx, lags_of, marks_of

__all__ = ["Playback"]


#: playback speeds the control accepts: 1/16 to 16 times (5e-324 was taken, and a step then
#: lasted for ever; the Director's clock arithmetic assumes a sane rate)
MIN_SPEED = 0.0625
MAX_SPEED = 16.0


log = logging.getLogger("overlay.service.playback")

#: lower thirds that hide by themselves: the match field shown, and the field of its seconds
AUTO_OUT = (("intro", "intro_seconds"), ("stats", "stats_seconds"))


class Playback:
    """Control commands and settings of a channel: they change its Director, its line on air
    and its settings, stored first."""

    def __init__(self, channel: ChannelCore) -> None:
        self.channel = channel
        #: the auto-out of each lower third on air (match field -> its timer)
        self.outs: dict[str, asyncio.TimerHandle] = {}

    def schedule_outs(self, old: MatchData | None, new: MatchData) -> None:
        """A lower third put on air with an auto-out time (``match.intro_seconds``,
        ``match.stats_seconds``) hides by itself that many seconds later: the settings change
        (stored, so every output and every process follows it).  ``old`` None: the channel
        starts with one on air (after a restart its time counts again from the start)."""
        for field, seconds_field in AUTO_OUT:
            value, seconds = getattr(new, field), float(getattr(new, seconds_field))
            fired = old is None or getattr(old, field) != value or float(getattr(old, seconds_field)) != seconds
            if value is None or seconds <= 0:
                timer = self.outs.pop(field, None)
                if timer is not None:
                    timer.cancel()
            elif fired or field not in self.outs:
                timer = self.outs.pop(field, None)
                if timer is not None:
                    timer.cancel()
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:  # no loop (a tool building a channel): nothing times out
                    continue
                self.outs[field] = loop.call_later(seconds, self._auto_out, field, value)

    def _auto_out(self, field: str, value: object) -> None:
        self.outs.pop(field, None)
        ch = self.channel
        cur = ch.settings
        if ch.closed or getattr(cur.match, field) != value:
            return  # hidden, or another one fired, meanwhile
        try:
            self.put_settings(cur.model_copy(update={"match": cur.match.model_copy(update={field: None})}))
        except Exception as exc:  # a store refusal: it stays on air until Hide, as without the timer
            log.warning("channel %s: the %s auto-out was not stored: %s", ch.id, field, exc)

    def stop_outs(self) -> None:
        for timer in self.outs.values():
            timer.cancel()
        self.outs.clear()

    def control(self, req: ControlRequest) -> dict[str, Any]:
        """Apply a Director command; returns the new playhead.

        Raises:
            BadRequest: a command without its argument, or a deal/step that does not exist.
            Unprocessable: ``branch`` naming a line the game does not have (or no game),
                ``mainline`` with no line on air, a deal/game ``seek`` during a line.
            StoreFailed, StoreFull: the playhead could not be stored (nothing changed).
        """
        ch = self.channel
        ch.check_alive()
        now = ch.hub.clock()
        # commands run on a copy that replaces the Director only once the store has its
        # playhead: a refused write leaves the playhead where it was
        d = copy.deepcopy(ch.director)
        op = req.op
        on_air = ch.on_air
        shown: dict[int, Any] = {}  # new timeline versions (a line going on or off air)
        if op == "branch":
            on_air = self._line_on(d, req, now)
            shown[on_air.version] = on_air.game
        elif op == "mainline" or op == "live" and on_air is not None:
            if on_air is None:
                raise Unprocessable(f"channel {ch.id!r}: no alternative line is on air")
            version = self._line_off(d, on_air, now)
            shown[version] = None if ch.game is None else ch.game.slim()
            on_air = None
            if op == "live":
                d.live(now)  # the newest step of the main line
        elif op == "seek" and on_air is not None:
            d.seek(now, self._line_seek(req, on_air))
        elif op == "loop" and on_air is not None:
            # a line never loops into the game before it: looping is the main line's, from its return
            on_air = replace(on_air, resume=replace(on_air.resume, loop=_switch(req)))
        else:
            self._command(d, req, now)
        ch.record.save_playhead((on_air.resume if on_air is not None else d.playhead(now)).to_json())
        for version, game in shown.items():
            ch.versions[version] = game
            ch.revision = version
        ch.director = d
        ch.on_air = on_air
        ch.prune_versions()
        ch.poke()
        return ch.playhead_json(now)

    def _command(self, d: Director, req: ControlRequest, now: float) -> None:
        """A transport command on ``d`` (the same on the main line and on a line).

        Raises:
            BadRequest: a command without its argument, or a deal/step that does not exist.
        """
        op = req.op
        # the commands that take nothing but the time
        plain: dict[str, Callable[[float], object]] = {
            "play": d.play,
            "pause": d.pause,
            "toggle": d.toggle,
            "next": d.next,
            "step": d.step_forward,
            "back": d.step_back,
            "live": d.live,
        }
        if op in plain:
            plain[op](now)
        elif op == "seek":
            d.seek(now, self._seek_target(req, now))
        elif op == "speed":
            speed = req.speed if req.speed is not None else req.value
            if speed is None or isinstance(speed, bool):
                raise BadRequest(f"speed needs 'value' (a number from {MIN_SPEED} to {MAX_SPEED:g}, e.g. speed?value=2)")
            if not MIN_SPEED <= float(speed) <= MAX_SPEED:  # NaN fails too
                raise BadRequest(f"speed {float(speed)!r} is outside {MIN_SPEED}..{MAX_SPEED:g} (1/16 to 16 times)")
            d.set_speed(now, float(speed))
        elif op in ("loop", "auto"):
            (d.set_loop if op == "loop" else d.set_auto)(now, _switch(req))

    def _line_on(self, d: Director, req: ControlRequest, now: float) -> OnAir:
        """Put the line ``req`` names on air on ``d``: its first step animates (paused: shows
        complete), in the transport mode the main line had; the line does not loop.

        Raises:
            Unprocessable: no game, or no such game, deal or line.
        """
        ch = self.channel
        game = ch.game
        left = ch.on_air.resume if ch.on_air is not None else d.playhead(now)
        part, branch = find_branch(game, ch.id, deal=req.deal, line=req.line, game_no=req.game, on_screen=left.step)
        assert game is not None
        lg = line_game(game, part, branch)
        first = part.first_step + branch.parent_step + 1
        durations = durations_of(lg.steps, ch.render.timing)
        a = d.anchor
        start = Playhead(
            step=first,
            offset=0.0 if a.playing else durations[first],
            playing=a.playing,
            speed=a.speed,
            loop=False,
            auto=a.auto,
            hold=None if a.auto else first,
            follow=False,
        )
        version = ch.revision + 1
        d.switch(now, durations, start, version=version, marks=marks_of(lg.steps), jump=not a.playing)
        return OnAir(game=lg, branch=branch, part=part.index, first=first, resume=left, version=version)

    def _line_off(self, d: Director, on_air: OnAir, now: float) -> int:
        """Back to the main line on ``d`` where it left (the operator's current speed kept);
        returns the new timeline version.  The main line may have grown meanwhile (a live
        feed is held, not lost): a playhead that followed it catches up from there."""
        ch = self.channel
        steps = () if ch.game is None else ch.game.steps
        version = ch.revision + 1
        resume = replace(on_air.resume, speed=d.anchor.speed)
        d.switch(now, durations_of(steps, ch.render.timing), resume, version=version, marks=marks_of(steps), jump=True)
        return version

    def _line_seek(self, req: ControlRequest, on_air: OnAir) -> int:
        """The global step of ``seek?step=N`` inside the line on air (N from the line's first step).

        Raises:
            Unprocessable: a deal or game seek (leave the line first), or no such step.
        """
        ch = self.channel
        n = len(on_air.game.steps) - on_air.first
        if req.deal is not None or req.game is not None or req.step is None:
            raise Unprocessable(
                f"channel {ch.id!r}: an alternative line is on air: seek takes 'step' (0..{n - 1}, from the line's first step); "
                "'mainline' returns to the main line"
            )
        if req.step >= n:
            raise Unprocessable(f"channel {ch.id!r}: no step {req.step} in the alternative line (it has {n}: 0..{n - 1})")
        return on_air.first + req.step

    def _seek_target(self, req: ControlRequest, now: float) -> int:
        """The global step a seek names.  With ``game`` (a match), ``deal`` and ``step`` count
        inside that game; without it, ``step`` is global and ``deal`` is in the game on screen.

        Raises:
            BadRequest: no such game, deal or step, or nothing to seek to.
        """
        ch = self.channel
        g = ch.game
        # people count games and deals from 1 (as the screen and ``inspect`` do)
        if req.game is not None:
            if g is None or not any(p.index == req.game - 1 for p in g.parts):
                have = "no game" if g is None else ", ".join(str(p.index + 1) for p in g.parts)
                raise BadRequest(f"channel {ch.id!r}: no game {req.game} in the match (games: {have})")
            part = next(p for p in g.parts if p.index == req.game - 1)
        elif req.deal is not None and g is not None:
            part = g.part_of(ch.director.position(now).step or 0)
        else:
            part = None
        if req.deal is not None:
            if part is None:
                raise BadRequest(f"channel {ch.id!r}: no deal {req.deal} (no game loaded)")
            tl = part.timeline
            if req.deal > len(tl.deals):
                where = f"game {part.index + 1} of the match" if g is not None and g.match else "the game"
                have = f"deals 1..{len(tl.deals)}" if tl.deals else "no deals yet"
                raise BadRequest(f"channel {ch.id!r}: no deal {req.deal} ({where} has {have})")
            return part.first_step + tl.deal_start(req.deal - 1)
        if req.step is not None:
            if part is not None:
                n = len(part.timeline.steps)
                if req.step >= n:
                    raise BadRequest(f"channel {ch.id!r}: no step {req.step} in game {part.index + 1} (it has {n})")
                return part.first_step + req.step
            if req.step >= max(ch.steps, 1):
                raise BadRequest(f"channel {ch.id!r}: no step {req.step} (the game has {ch.steps})")
            return req.step
        if part is not None:
            return part.first_step
        raise BadRequest("seek needs 'step', 'deal' or 'game'")

    def put_settings(self, doc: ChannelSettings, *, take: TakeTransition | None = None) -> ChannelSettings:
        """Validate with the renderer's models, store (revision-checked), apply.

        ``take``: the outputs whose view this changes go over to it by that transition
        (:mod:`renderer.take`; a cut, or None, shows the new view at once).

        Raises:
            pydantic.ValidationError: a view/theme/timing the renderer refuses.
            StaleRevision: ``doc.revision`` is not the current one.
        """
        ch = self.channel
        ch.check_alive()
        RenderSettings(doc)  # validate before storing
        old_match = ch.settings.match
        stored = ch.record.save_settings(doc)
        old_timing = ch.render.timing
        before = ch.render
        ch.settings = stored
        ch.render = RenderSettings(stored)
        self._start_takes(before, take)
        ch.director.max_delay = ch.window
        if ch.render.timing != old_timing:
            now = ch.hub.clock()
            lags = lags_of(ch.render.timing)
            ch.director.max_lag, ch.director.skip_lag = lags["max_lag"], lags["skip_lag"]
            played = ch.played
            ch.director.retime(now, durations_of(() if played is None else played.steps, ch.render.timing))
            if ch.on_air is not None:
                # the main line's saved place keeps its progress through its step, in the new timing
                ch.on_air = replace(ch.on_air, resume=self._retimed(ch.on_air.resume, old_timing))
        self.schedule_outs(old_match, stored.match)
        ch.poke()
        return stored

    def _start_takes(self, before: RenderSettings, take: TakeTransition | None) -> None:
        """Start ``take`` on every output whose view the new settings change (where the
        output stands now); a cut ends any take under way on them."""
        ch = self.channel
        now = ch.hub.clock()
        for output in OUTPUTS:
            step = ch.director.position(now - ch.settings.output(output).delay).step
            if before.view(output, step) == ch.render.view(output, step):
                continue
            if take is None or take.style == "cut":
                ch.takes.pop(output, None)
            else:
                ch.takes[output] = TakeFx(before, now, take)
                ch.take_seq += 1

    def take_over(self, take: TakeTransition) -> None:
        """Run ``take`` on program and clean over the layout they show (a stinger cue: the
        picture does not change, the stinger goes over it)."""
        ch = self.channel
        ch.check_alive()
        now = ch.hub.clock()
        for output in ("program", "clean"):
            ch.takes[output] = TakeFx(ch.render, now, take)
        ch.take_seq += 1
        ch.poke()

    def _retimed(self, resume: Playhead, old_timing: Timing) -> Playhead:
        """``resume`` (a place on the main line timed by ``old_timing``) at the same progress
        through its step under the current timing; a complete step stays complete."""
        ch = self.channel
        steps = () if ch.game is None else ch.game.steps
        if not 0 <= resume.step < len(steps):
            return resume
        kind = steps[resume.step].kind
        old = float(old_timing.of(kind).total)
        new = float(ch.render.timing.of(kind).total)
        progress = min(max(resume.offset / old, 0.0), 1.0) if old > 0.0 else 1.0
        return replace(resume, offset=progress * new)


def _switch(req: ControlRequest) -> bool:
    """The true/false ``value`` of ``loop`` and ``auto``.

    Raises:
        BadRequest: no value, or one that is not a switch.
    """
    if req.value is None or not isinstance(req.value, bool) and req.value not in (0.0, 1.0):
        raise BadRequest(f"{req.op} needs 'value' (true or false, e.g. {req.op}?value=true)")
    return bool(req.value)
