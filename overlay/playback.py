"""Director wiring: control commands and settings changes reach a channel's Director.

The :class:`~overlay.director.Director` is a pure function of commands and time; this part
turns HTTP control requests into its calls (resolving seek targets inside a match), retimes
it when the timing settings change, and stores the playhead after each command.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .core import ChannelCore
from .errors import BadRequest
from .protocol import ChannelSettings, ControlRequest
from .outputs import RenderSettings, durations_of, lags_of

__all__ = ["Playback"]


class Playback(ChannelCore):
    """Control commands and settings of a channel."""

    def control(self, req: ControlRequest) -> dict[str, Any]:
        """Apply a Director command; returns the new playhead.

        Raises:
            BadRequest: a command without its argument, or a deal/step that does not exist.
            StoreFailed, StoreFull: the playhead could not be stored (nothing changed).
        """
        self._alive()
        now = self.hub.clock()
        # commands run on a copy that replaces the Director only once the store has its
        # playhead: a refused write leaves the playhead where it was
        d = copy.deepcopy(self.director)
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
            if speed is None or isinstance(speed, bool) and not speed:
                raise BadRequest("speed needs 'value' (a number from 0.0625 to 16, e.g. speed?value=2)")
            if not 0.0 < float(speed) <= 16.0:
                raise BadRequest(f"speed {float(speed)!r} is outside 0..16")
            d.set_speed(now, float(speed))
        elif op in ("loop", "auto"):
            if req.value is None or not isinstance(req.value, bool) and req.value not in (0.0, 1.0):
                raise BadRequest(f"{op} needs 'value' (true or false, e.g. {op}?value=true)")
            (d.set_loop if op == "loop" else d.set_auto)(now, bool(req.value))
        self.record.save_playhead(d.playhead(now).to_json())
        self.director = d
        self.poke()
        return self.playhead_json(now)

    def _seek_target(self, req: ControlRequest, now: float) -> int:
        """The global step a seek names.  With ``game`` (a match), ``deal`` and ``step`` count
        inside that game; without it, ``step`` is global and ``deal`` is in the game on screen.

        Raises:
            BadRequest: no such game, deal or step, or nothing to seek to.
        """
        g = self.game
        # people count games and deals from 1 (as the screen and ``inspect`` do)
        if req.game is not None:
            if g is None or not any(p.index == req.game - 1 for p in g.parts):
                have = "no game" if g is None else ", ".join(str(p.index + 1) for p in g.parts)
                raise BadRequest(f"channel {self.id!r}: no game {req.game} in the match (games: {have})")
            part = next(p for p in g.parts if p.index == req.game - 1)
        elif req.deal is not None and g is not None:
            part = g.part_of(self.director.position(now).step or 0)
        else:
            part = None
        if req.deal is not None:
            if part is None:
                raise BadRequest(f"channel {self.id!r}: no deal {req.deal} (no game loaded)")
            tl = part.timeline
            if req.deal > len(tl.deals):
                where = f"game {part.index + 1} of the match" if g is not None and g.match else "the game"
                have = f"deals 1..{len(tl.deals)}" if tl.deals else "no deals yet"
                raise BadRequest(f"channel {self.id!r}: no deal {req.deal} ({where} has {have})")
            return part.first_step + tl.deal_start(req.deal - 1)
        if req.step is not None:
            if part is not None:
                n = len(part.timeline.steps)
                if req.step >= n:
                    raise BadRequest(f"channel {self.id!r}: no step {req.step} in game {part.index + 1} (it has {n})")
                return part.first_step + req.step
            if req.step >= max(self.steps, 1):
                raise BadRequest(f"channel {self.id!r}: no step {req.step} (the game has {self.steps})")
            return req.step
        if part is not None:
            return part.first_step
        raise BadRequest("seek needs 'step', 'deal' or 'game'")

    def put_settings(self, doc: ChannelSettings) -> ChannelSettings:
        """Validate with the renderer's models, store (revision-checked), apply.

        Raises:
            pydantic.ValidationError: a view/theme/timing the renderer refuses.
            StaleRevision: ``doc.revision`` is not the current one.
        """
        self._alive()
        RenderSettings(doc)  # validate before storing
        stored = self.record.save_settings(doc)
        old_timing = self.render.timing
        self.settings = stored
        self.render = RenderSettings(stored)
        self.director.max_delay = self.window
        if self.render.timing != old_timing:
            now = self.hub.clock()
            lags = lags_of(self.render.timing)
            self.director.max_lag, self.director.skip_lag = lags["max_lag"], lags["skip_lag"]
            self.director.retime(now, durations_of(self.game_steps, self.render.timing))
        self.poke()
        return stored
