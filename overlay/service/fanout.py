"""Output fan-out: one pump per channel sends each output's pages the scene of their step.

The pump sleeps until the next moment a step changes on some output (the Director says
when), or until something wakes it (a feed update, a control command, a page joining), then
builds one scene per (output, size) and sends it to every page of that group.  State-stream
clients get the state of their output the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from typing import Any

from collections.abc import Callable, Sequence

from engine.state import GameState
from renderer.scene import Scene
from renderer.statboard import stats_book
from renderer.settings import OUTPUTS, OutputName

from .branching import LineGame
from .feed import Loaded
from .clients import Page, StateSub, bye, bye_text
from .core import ChannelCore
from .outputs import SceneCache, TakeFx, frozen_scene
from .errors import BadRequest
from .masking import Mask, mask_of
from .protocol import SceneMessage, StateMessage, dump

__all__ = ["FanOut", "MAX_SIZES", "draw_size"]

#: distinct page sizes a channel draws at once for pages with the token and its outputs'
#: settings: each size is its own scene per step (100 pages at 100 widths cost ten times the
#: CPU of one size), so a new size past this many is refused
MAX_SIZES = 8


def draw_size(
    asked: tuple[int, int], *, trusted: bool, reserved: set[tuple[int, int]], taken: set[tuple[int, int]], channel: str = ""
) -> tuple[int, int]:
    """The size a page that asks for ``asked`` is drawn at (the page scales the scene to its
    own size).

    ``reserved``: the sizes in the channel's outputs settings; ``taken``: the sizes pages
    with the token draw at now.  Those always win: a page with the token gets its own size
    (refused past :data:`MAX_SIZES` of them), a page without shares the nearest of them
    (closest in scale on both axes), so anonymous pages at odd sizes cannot fill a channel's
    sizes and lock out the OBS page (issue 22 item 3).

    Raises:
        BadRequest: a page with the token asks for a new size past :data:`MAX_SIZES`.
    """
    allowed = reserved | taken
    if asked in allowed:
        return asked
    if not trusted:
        return min(sorted(allowed), key=lambda s: abs(math.log(s[0] / asked[0])) + abs(math.log(s[1] / asked[1])))
    if len(allowed) >= MAX_SIZES:
        raise BadRequest(
            f"channel {channel!r}: pages already draw at {len(allowed)} sizes (at most {MAX_SIZES}); "
            f"use one of {', '.join(f'{w}x{h}' for w, h in sorted(allowed))}"
        )
    return asked


log = logging.getLogger("overlay.service.fanout")


def _line_json(game: object) -> dict[str, Any] | None:
    """The ``line`` of a state message: which alternative line a line game plays."""
    line = game.line if isinstance(game, LineGame) else None
    if line is None:
        return None
    return {"deal": line.deal + 1, "line": line.line + 1, "game": None if line.game is None else line.game + 1}


def _sent(page: Page, seq: int, step: int | None, now: float) -> Callable[[], None]:
    return lambda: page.note_sent(seq, step, now)


class FanOut:
    """Scene and state messages of a channel, and the pump that sends them: the pages and
    state clients of the channel, its scene cache and what each group was last sent."""

    def __init__(self, channel: ChannelCore) -> None:
        self.channel = channel
        self.pages: set[Page] = set()
        self.subs: set[StateSub] = set()
        self.cache = SceneCache(size=8)
        #: per page group (output, width, height) or ("state", output): the key of the last scene sent
        self.last_key: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.out_seq = 0
        self.pump_task: asyncio.Task[None] | None = None

    def mask(self, output: OutputName, state: GameState) -> Mask | None:
        """What ``output`` may show of ``state`` (:mod:`overlay.service.masking`): every
        message it is sent is built from ``mask.state(state)`` (None: it shows every hand)."""
        return mask_of(self.channel.render.view(output, state.step), state)

    def shown_state(self, output: OutputName, state: GameState) -> GameState:
        mask = self.mask(output, state)
        return state if mask is None else mask.state(state)

    def _scene_key(self, output: OutputName, size: tuple[int, int], now: float) -> tuple[Any, ...]:
        pos = self.channel.director.position(now - self.channel.settings.output(output).delay)
        return (pos.key, pos.version, self.channel.render.revision, self.channel.take_seq, size)

    def scene_text(
        self, output: OutputName, size: tuple[int, int], now: float, *, snapshot: bool
    ) -> tuple[str, int, int | None]:
        """The scene message for ``output`` at ``now`` (its delay applied) drawn at ``size``;
        returns the text, its seq and its step."""
        out = self.channel.settings.output(output)
        pos = self.channel.director.position(now - out.delay)
        self.out_seq += 1
        step = pos.step
        game = self.channel.shown(pos.version)  # a delayed output shows the game as it was then
        steps = () if game is None else game.steps
        if step is not None and step >= len(steps):
            step = None
        if game is not None and not steps and game.timeline.players:
            # players seated, no deal yet: the pre-show picture, not a blank page
            scene = self.cache.preshow((pos.version, self.channel.render.revision, output, size, -1), game.timeline, self.channel.render, title=game.timeline.title)
        elif step is None or game is None:
            scene = "null"
        else:
            part = game.part_of(step)
            scene = self.cache.get(
                (pos.version, self.channel.render.revision, output, size, step),
                steps,
                self.channel.render,
                title=part.timeline.title,
                game=part.match_game,
                line=game.line if isinstance(game, LineGame) else None,
                stats_of=lambda: stats_book(part.timeline).at(step - part.first_step),
                shown=lambda st: self.shown_state(output, st),
            )
        age, rate = round(pos.offset, 4), pos.rate
        fx = self.channel.takes.get(output)
        if fx is not None:
            if fx.over(now):
                del self.channel.takes[output]
            elif step is not None and game is not None and scene != "null":
                scene, age, rate = self._taken(fx, output, size, now, pos.offset, pos.rate if pos.playing else 0.0, scene, steps, step, game, pos.version)
        w = self.channel.where(game, step)
        head = SceneMessage(
            seq=self.out_seq,
            channel=self.channel.id,
            output=output,
            step=step,
            steps=len(steps),
            deal=None if step is None else steps[step].deal,
            game=w["game"],
            games=w["games"],
            game_title=w["game_title"],
            age=age,
            rate=rate,
            playing=pos.playing,
            snapshot=snapshot,
            jump=pos.jump,
            width=size[0],
            height=size[1],
        )
        text = head.model_dump_json(by_alias=True, exclude={"scene"})  # dump(head) as compact JSON, without the scene
        return text[:-1] + ',"scene":' + scene + "}", self.out_seq, step

    def _taken(
        self,
        fx: TakeFx,
        output: OutputName,
        size: tuple[int, int],
        now: float,
        offset: float,
        rate: float,
        scene: str,
        steps: Sequence[GameState],
        step: int,
        game: Loaded,
        pos_version: int,
    ) -> tuple[str, float, float]:
        """The scene of ``step`` with the TAKE under way on ``output`` (:mod:`renderer.take`),
        and the age and rate the page draws it at.

        Moving, the take sits on the step's clock (the step's own animation goes on under
        it).  Still (paused, or a live game waiting for its next action), both pictures are
        frozen where they stand and the message runs a clock of its own (age 0, rate 1) for
        the take; the next message puts the step's clock back."""
        from renderer.take import in_take, take_scene

        before_mask = mask_of(fx.before.view(output, step), steps[step])
        part = game.part_of(step)
        before = self.cache.get(
            (pos_version, fx.before.revision, output, size, step),
            steps,
            fx.before,
            title=part.timeline.title,
            game=part.match_game,
            line=game.line if isinstance(game, LineGame) else None,
            stats_of=lambda: stats_book(part.timeline).at(step - part.first_step),
            shown=lambda st: st if before_mask is None else before_mask.state(st),
        )
        old, new = Scene.from_json(json.loads(before), source="take"), Scene.from_json(json.loads(scene), source="take")
        elapsed = now - fx.at
        rs = self.channel.render
        accent, panel, image = rs.theme.accent, rs.theme.panel, rs.timing.transition.image
        if rate > 0.0:
            start = offset - elapsed * rate
            tr = fx.transition.model_copy(update={"run_time": fx.transition.run_time * rate})
            if not in_take(tr, start):
                return scene, round(offset, 4), rate
            return take_scene(old, new, tr, start, accent=accent, panel=panel, image=image).dumps(), round(offset, 4), rate
        old, new = frozen_scene(old, offset), frozen_scene(new, offset)
        return take_scene(old, new, fx.transition, -elapsed, accent=accent, panel=panel, image=image).dumps(), 0.0, 1.0

    def state_text(self, output: OutputName, now: float) -> str:
        pos = self.channel.director.position(now - self.channel.settings.output(output).delay)
        game = self.channel.shown(pos.version)
        steps = () if game is None else game.steps
        step = pos.step if pos.step is not None and pos.step < len(steps) else None
        w = self.channel.where(game, step)
        msg = StateMessage(
            channel=self.channel.id,
            output=output,
            delay=self.channel.settings.output(output).delay,
            step=step,
            steps=len(steps),
            playing=pos.playing,
            game=w["game"],
            games=w["games"],
            game_title=w["game_title"],
            line=_line_json(game),
            state=None if step is None else self._state_json(output, steps[step]),
        )
        return json.dumps(dump(msg), separators=(",", ":"), ensure_ascii=False)

    def _state_json(self, output: OutputName, state: GameState) -> dict[str, Any]:
        mask = self.mask(output, state)
        return state.to_json() if mask is None else mask.json(mask.state(state).to_json())

    def page_size(self, asked: tuple[int, int], *, trusted: bool) -> tuple[int, int]:
        """The size a page asking for ``asked`` is drawn at (:func:`draw_size`).

        Raises:
            BadRequest: a page with the token asks for a new size past :data:`MAX_SIZES`."""
        reserved = {(o.width, o.height) for o in (self.channel.settings.output(n) for n in OUTPUTS)}
        taken = {p.size for p in self.pages if p.trusted}
        return draw_size(asked, trusted=trusted, reserved=reserved, taken=taken, channel=self.channel.id)

    def send_snapshot(self, page: Page) -> None:
        """Queue the full picture for ``page`` (its sender delivers it; nothing waits)."""
        now = self.channel.hub.clock()
        text, seq, step = self.scene_text(page.output, page.size, now, snapshot=True)
        # the pump need not send this picture again to a first page of its group
        self.last_key.setdefault(page.group, self._scene_key(page.output, page.size, now))
        page.outbox.offer(text, lambda: page.note_sent(seq, step, now))
        # the last analysis of that step, if any
        self.channel.hub.analysis.after_snapshot(self.channel, page, step, self._group_sender(page.output, page.size))

    def _group_sender(self, output: OutputName, size: tuple[int, int]) -> Callable[[str], None]:
        """Offers a message, beside the scenes, to the pages of one group as they are then."""

        def send(text: str) -> None:
            for page in [p for p in self.pages if p.output == output and p.size == size]:
                page.outbox.offer_aside(text)

        return send

    def send_state(self, sub: StateSub) -> None:
        now = self.channel.hub.clock()
        self.last_key.setdefault(("state", sub.output), self._scene_key(sub.output, (0, 0), now))
        sub.outbox.offer(self.state_text(sub.output, now))

    def start(self) -> None:
        """Start the pump (the channel's :meth:`~overlay.service.channel.Channel.start`)."""
        self.pump_task = asyncio.get_running_loop().create_task(self.pump(), name=f"pump:{self.channel.id}")

    async def close(self, *, reason: str) -> None:
        """Stop the pump (awaited) and say goodbye to every page and state client, each
        within a time limit (a page that never reads cannot hold up the others')."""
        task, self.pump_task = self.pump_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        text = bye_text(reason)
        members: list[Page | StateSub] = [*self.pages, *self.subs]
        for member in members:
            await member.outbox.stop()
        for member in members:
            await bye(member.ws, member.transport, text, reason)

    async def pump(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self.channel.wake.clear()
            try:
                self.channel.director.catch_up(self.channel.hub.clock())  # live catch-up (overlay.service.director)
                deadline = await self._broadcast(self.channel.hub.clock())
            except Exception:  # a bad scene must not kill the channel's pump
                log.exception("channel %s: broadcast failed", self.channel.id)
                deadline = self.channel.hub.clock() + 1.0
            handle = None
            if deadline is not None:
                delay = max(0.0, deadline - self.channel.hub.clock()) + 0.0005
                handle = loop.call_later(delay, self.channel.wake.set)
            await self.channel.wake.wait()
            if handle is not None:
                handle.cancel()

    async def _broadcast(self, now: float) -> float | None:
        deadline: float | None = None
        groups: dict[tuple[Any, ...], list[Page]] = {}
        for page in self.pages:
            groups.setdefault(page.group, []).append(page)
        for group in [g for g in self.last_key if g not in groups and g[0] != "state"]:
            del self.last_key[group]
        outputs = {g[0] for g in groups} | {s.output for s in self.subs}
        for (output, width, height), pages in groups.items():
            size = (width, height)
            key = self._scene_key(output, size, now)
            if key != self.last_key.get((output, width, height)):
                self.last_key[(output, width, height)] = key
                woke = time.time() * 1000 if any(p.trace for p in pages) else 0.0
                text, seq, step = self.scene_text(output, size, now, snapshot=False)
                for page in pages:
                    out = text
                    if page.trace:
                        trace = {**self.channel.feed_trace, "woke": woke, "built": time.time() * 1000}
                        out = text[:-1] + ',"trace":' + json.dumps(trace) + "}"
                    # never awaits a page: a slow one gets the latest scene when it catches up
                    page.outbox.offer(out, _sent(page, seq, step, now))
                # the analysis of this step follows when ready (off unless enabled)
                self.channel.hub.analysis.after_scene(self.channel, output, size, step, self._group_sender(output, size))
        for output in OUTPUTS:
            if output not in outputs:
                continue
            subs = [s for s in self.subs if s.output == output]
            if subs:
                skey = ("state", output)
                key = self._scene_key(output, (0, 0), now)
                if key != self.last_key.get(skey):
                    self.last_key[skey] = key
                    state = self.state_text(output, now)
                    for sub in subs:
                        sub.outbox.offer(state)
            delay = self.channel.settings.output(output).delay
            pos = self.channel.director.position(now - delay)
            if pos.next_change is not None:
                at = pos.next_change + delay
                deadline = at if deadline is None else min(deadline, at)
        return deadline
