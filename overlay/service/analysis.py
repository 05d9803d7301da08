"""Live analysis beside the event loop: a process pool, stale results dropped, drawn on air.

The double-dummy solver takes tens of milliseconds per step and the bidding table more, which
must never delay a frame.  So a page gets its scene at once (the pump does not wait), and the
analysis of the same step follows as its own message when a worker process has it:

    {"type": "analysis", "channel": ..., "output": ..., "step": N, "tookMs": ...,
     "analysis": {...}, "graph": [{deals, p, mark, team}, ...], "layer": {scene}}

(``analysis`` is the ``analyse --json`` step object, ``graph`` the match graph's points,
:meth:`engine.analysis.Analyst.graph`).  Each (channel, output) keeps only its newest request:
a request still queued is cancelled when a newer one arrives, and a result whose step is no
longer the newest is dropped, never sent.  The clean output never gets analysis computed from
hidden cards: it is analysed with ``public=True`` (score, dealer and contract only, labelled an
estimate), or not at all, as the channel's settings say.  Every output's message and layer
go through its mask (:mod:`overlay.service.masking`): no card it hides in the numbers, and an
output that draws some hand face down gets the bar and graph only.

**Hindsight.**  Hands the file does not list are rebuilt from the deal's play
(:mod:`engine.hindsight`); ``analysis.hands`` says ``"recorded"`` or ``"reconstructed"`` and
``analysis.reason`` why a step got nothing from hands (the studio shows it).  An output
analyses the game version it shows (its delay applied), so rebuilt hands reach it only once
that version holds the deal's whole play: every card was public at the table by then.  An
output whose view hides hole cards gets rebuilt hands only from the deal's last card on (it
shows them all by then); before, it is analysed from public information, with a reason.

**Why a layer scene, built here.**  ``layer`` is the analysis elements of the output's view
(:func:`renderer.analysis.build_analysis_layer`), a small scene of its own that the page's
player draws over the step scene on a clock of its own.  Rebuilding the step scene with the
analysis in it would restart (or have to re-time) the step's animation and send the whole
scene twice; drawing analysis in the page from the raw numbers would be a second renderer in
JavaScript.  The layer keeps one renderer (the same ops as the video, where
:func:`renderer.analysis.compose` appends it to the step scene) and costs a few milliseconds
on the event loop, once per (output, size) and step.  The page draws its step scene at once,
keeps a layer only for the step it shows and drops it when it leaves that step; a page that
reconnects gets the last layer of its step after the snapshot.

Where: per channel (``ChannelSettings.analysis``: on/off and the clean output's policy), or
for every channel of a service (``ServerSettings.analysis``, from ``EUCHRE_OVERLAY_ANALYSIS=1``
in the service's environment).  Off by default.  Each service (each aiohttp application) has
one :class:`LiveAnalysis`, kept on the app and its hub: its switch, its pool and the deliveries
in flight, closed with the app; nothing here is process-wide but the workers' own analysts.
The workers run :mod:`overlay.service.analysis_worker` (the engine only, so a spawned worker
starts sooner); each keeps one :class:`engine.analysis.Analyst` per ruleset, so stepping
through a deal reuses the solver's tables.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from engine.analysis import DealEnd, deal_ends
from engine.ruleset import Ruleset
from engine.state import GameState
from renderer.settings import ChannelSettings, OutputName, RenderSettings

from .analysis_worker import warm, work, work_frame
from .clients import Page
from .director import Director
from .feed import Loaded
from .lifeline import exit_with_parent
from .masking import mask_of

if TYPE_CHECKING:
    from renderer.analysis import AnalysisFrame

__all__ = ["AnalysisPool", "AnalysedChannel", "CleanPolicy", "LiveAnalysis", "Send", "WITHHELD", "message", "rules_of"]

log = logging.getLogger("overlay.service.analysis")

#: what the clean output gets: analysis from public information only, or none
CleanPolicy = Literal["public", "none"]

#: offers a message to the pages of one group (an output at one size) as they are when it is ready
Send = Callable[[str], None]

# -- the service side ----------------------------------------------------------------------------


@dataclass
class _Latest:
    token: int = 0
    future: concurrent.futures.Future[dict[str, Any]] | None = None
    #: the last analysis sent for this key (the bar moves from it; it values the card played)
    shown: dict[str, Any] | None = None
    #: (game, step, settings revision, message) of the last message sent, for snapshots
    sent: tuple[int, int, int, str] | None = None
    #: the step of the newest request
    pending: int | None = None


@dataclass
class AnalysisPool:
    """A process pool for analyses, with the newest request per key kept and older dropped."""

    workers: int = 1
    latest: dict[tuple[str, str], _Latest] = field(default_factory=dict)
    dropped: int = 0
    _executor: concurrent.futures.ProcessPoolExecutor | None = None

    def executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            # spawn: the service's event loop and sockets are not forked into the workers;
            # each worker ends with the service, even one killed with SIGKILL (lifeline)
            self._executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=exit_with_parent
            )
            self._executor.submit(warm, Ruleset())
        return self._executor

    async def analyse(self, key: tuple[str, str], state: GameState, rules: Ruleset, *, public: bool) -> dict[str, Any] | None:
        """The analysis of ``state``, or ``None`` when a newer request for ``key`` came first
        (the stale result is dropped; a request still queued is cancelled)."""
        return await self._run(key, work, rules, state, public)

    async def analyse_frame(
        self, key: tuple[str, str], state: GameState, rules: Ruleset, *, public: bool, first: GameState, ends: tuple[DealEnd, ...]
    ) -> dict[str, Any] | None:
        """``{"analysis": ..., "graph": [...]}`` of ``state`` (``first``: its game's first
        state, ``ends``: the game's scored deals so far), or ``None`` as :meth:`analyse`."""
        return await self._run(key, work_frame, rules, state, public, first, ends)

    async def _run(self, key: tuple[str, str], fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any] | None:
        slot = self.latest.setdefault(key, _Latest())
        if slot.future is not None and slot.future.cancel():
            self.dropped += 1
        slot.token += 1
        token = slot.token
        future = self.executor().submit(fn, *args)
        slot.future = future
        try:
            result: dict[str, Any] = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if future.cancelled():  # superseded while queued: not this task's cancellation
                return None
            raise
        if slot.token != token:
            self.dropped += 1
            return None
        slot.future = None
        return result

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def rules_of(document: dict[str, Any], game_index: int = 0) -> Ruleset:
    """The ruleset of a channel's game (EGN JSON, or the ``game_index``-th game of an EMN
    match); the defaults when the file has none or an unreadable one."""
    try:
        meta = document.get("metadata", {}) if "games" not in document else document["games"][game_index].get("metadata", {})
        return Ruleset.model_validate(meta.get("ruleset") or {})
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return Ruleset()


def message(channel: str, output: OutputName, step: int, analysis: dict[str, Any], *, took_ms: float, graph: list[dict[str, Any]] | None = None, layer: str | None = None) -> str:
    """The analysis message (``layer``: the layer scene's JSON text, spliced in as it is)."""
    head: dict[str, Any] = {"type": "analysis", "channel": channel, "output": output, "step": step, "tookMs": round(took_ms, 2), "analysis": analysis}
    if graph is not None:
        head["graph"] = graph
    text = json.dumps(head, separators=(",", ":"))
    return text if layer is None else text[:-1] + ',"layer":' + layer + "}"



#: ``analysis.reason`` where :meth:`LiveAnalysis.hides_hindsight` kept rebuilt hands from an output
WITHHELD = "this output hides hole cards: hands rebuilt from the play are used once the deal's last card is played"


class Clocked(Protocol):
    """The channel's host, as analysis reads it: its clock."""

    @property
    def clock(self) -> Callable[[], float]: ...


class AnalysedChannel(Protocol):
    """What live analysis reads of a channel (:class:`overlay.service.core.ChannelCore`):
    its id, settings, renderer models, playhead and game versions."""

    @property
    def id(self) -> str: ...

    @property
    def hub(self) -> Clocked: ...

    @property
    def settings(self) -> ChannelSettings: ...

    @property
    def render(self) -> RenderSettings: ...

    @property
    def director(self) -> Director: ...

    @property
    def closed(self) -> bool: ...

    def shown(self, version: int) -> Loaded | None: ...


def _key(channel: AnalysedChannel, output: OutputName, size: tuple[int, int]) -> tuple[str, str]:
    return (channel.id, f"{output}@{size[0]}x{size[1]}")


def _shown_game(channel: AnalysedChannel, output: OutputName) -> Loaded | None:
    """The game ``output`` shows now (its delay applied): while an alternative line is on air
    there, the line game, whose states are the line's (overlay.service.branching)."""
    pos = channel.director.position(channel.hub.clock() - channel.settings.output(output).delay)
    return channel.shown(pos.version)


def hides_hindsight(channel: AnalysedChannel, output: OutputName, state: GameState) -> bool:
    """``state``'s analysis would read hands rebuilt from the play that ``output`` does not
    show yet: its view draws some hand face down and the deal is not played out there."""
    from engine.hindsight import RECONSTRUCTED, hands_for, played_out
    from renderer.view import Perspective

    if played_out(state) or hands_for(state).source != RECONSTRUCTED:
        return False
    return bool(channel.render.view(output, state.step).perspective is not Perspective.ALL)


def layer_text(channel: AnalysedChannel, output: OutputName, size: tuple[int, int], state: GameState, frame: AnalysisFrame, *, public: bool) -> str:
    """The analysis layer scene of ``output`` at ``size`` for ``state`` (compact JSON)."""
    from renderer.onair import analysis_layer

    rs = channel.render
    view = rs.view(output, state.step)
    # the layer part of what is on air (renderer.onair): the one builder every output uses
    scene = analysis_layer(state, view, frame, rs.theme, rs.timing, rs.match, size=size, public=public)
    return scene.dumps()


@dataclass(frozen=True)
class _Job:
    """One analysis to run and deliver: a step of the game an output shows."""

    key: tuple[str, str]
    output: OutputName
    size: tuple[int, int]
    step: int
    game: Loaded
    rules: Ruleset
    public: bool
    first: GameState
    ends: tuple[DealEnd, ...]
    withheld: bool


class LiveAnalysis:
    """Live analysis of one service: the switch for every channel (``on``, ``clean``), the
    process pool, and the deliveries in flight; made by ``create_app``, kept on the app and
    its hub, closed with it (:meth:`close`)."""

    def __init__(self, *, on: bool = False, clean: CleanPolicy = "public", workers: int = 1) -> None:
        self.on = on
        self.clean: CleanPolicy = clean
        self.pool = AnalysisPool(workers=workers)
        self.tasks: set[asyncio.Task[None]] = set()

    def policy(self, channel: AnalysedChannel, output: OutputName) -> Literal["full", "public", "none"]:
        """What ``output`` of ``channel`` gets: analysis from all four hands, from public
        information only (the clean output's "public"), or none (analysis off, or the clean
        output's "none").  The channel's settings decide where they turn analysis on; else
        the service's switch (``on``, ``clean``)."""
        own = channel.settings.analysis
        if own.enabled:
            clean: CleanPolicy = own.clean
        elif self.on:
            clean = self.clean
        else:
            return "none"
        if output != "clean":
            return "full"
        return "public" if clean == "public" else "none"

    def after_scene(self, channel: AnalysedChannel, output: OutputName, size: tuple[int, int], step: int | None, send: Send) -> None:
        """The pump's hook: the scene of ``step`` was just sent to the pages of one group (an
        output at one size); start its analysis and ``send`` it, with its layer, to the
        group's pages when ready (never awaited by the pump)."""
        if step is None:
            return
        how = self.policy(channel, output)
        if how == "none":
            return
        public = how == "public"
        game = _shown_game(channel, output)
        if game is None or step >= len(game.steps):
            return
        state = game.steps[step]
        withheld = not public and hides_hindsight(channel, output, state)
        public = public or withheld
        part = game.part_of(step) if game.parts else None
        rules = rules_of(game.document, part.index if part is not None else 0)
        begin = part.first_step if part is not None else 0
        ends = deal_ends(game.steps[begin : step + 1])
        key = _key(channel, output, size)
        self.pool.latest.setdefault(key, _Latest()).pending = step
        job = _Job(key, output, size, step, game, rules, public, game.steps[begin], ends, withheld)
        task = asyncio.get_running_loop().create_task(self._deliver(channel, job, send), name=f"analysis:{key}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def after_snapshot(self, channel: AnalysedChannel, page: Page, step: int | None, send: Send) -> None:
        """A page just got a snapshot of ``step``: send it the last analysis of that step, when
        there is one (a page that reconnects or is shown again by OBS gets it back at once);
        else start it (``send`` reaches the page's group)."""
        if step is None or self.policy(channel, page.output) == "none":
            return
        slot = self.pool.latest.get(_key(channel, page.output, page.size))
        if slot is not None and slot.sent is not None:
            game, at, revision, text = slot.sent
            if at == step and game == id(_shown_game(channel, page.output)) and revision == channel.render.revision:
                page.outbox.offer_aside(text)
                return
        if slot is not None and slot.pending == step and slot.future is not None and not slot.future.done():
            return  # on its way: it goes to every page of the group
        self.after_scene(channel, page.output, page.size, step, send)

    async def _deliver(self, channel: AnalysedChannel, job: _Job, send: Send) -> None:
        from renderer.analysis import AnalysisFrame

        began = time.perf_counter()
        state: GameState = job.game.steps[job.step]
        work = self.pool
        try:
            result = await work.analyse_frame(job.key, state, job.rules, public=job.public, first=job.first, ends=job.ends)
        except Exception:  # a failed analysis must not touch the channel
            log.exception("channel %s: analysis of step %s failed", channel.id, job.step)
            return
        if channel.closed:
            work.latest.pop(job.key, None)  # a deleted channel's keys go with it
            return
        if result is None:
            return
        slot = work.latest.setdefault(job.key, _Latest())
        analysis, graph = result["analysis"], result["graph"]
        if job.withheld:
            analysis["reason"] = WITHHELD
        # what the output may show (overlay.service.masking): no card it hides in the numbers,
        # and an output that hides a hand draws no mark on its cards (only the bar and graph)
        mask = mask_of(channel.render.view(job.output, state.step), state)
        if mask is not None:
            analysis = mask.json(analysis)
            state = mask.state(state)
        try:
            frame = AnalysisFrame.from_json(analysis, slot.shown, graph)
            layer: str | None = layer_text(channel, job.output, job.size, state, frame, public=job.public or mask is not None)
        except Exception:  # a layer that cannot be drawn: the numbers still go out
            log.exception("channel %s: analysis layer of step %s failed", channel.id, job.step)
            layer = None
        slot.shown = analysis
        text = message(channel.id, job.output, job.step, analysis, took_ms=(time.perf_counter() - began) * 1000, graph=graph, layer=layer)
        slot.sent = (id(job.game), job.step, channel.render.revision, text)
        # every page of the group now (one that joined while the worker ran included), through
        # each page's outbox: after its scene, never replacing it (a remote group of
        # ``serve --redis`` publishes it to the processes that have the pages)
        send(text)

    async def close(self) -> None:
        """Cancel the deliveries in flight (awaited) and stop the pool's workers."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.pool.shutdown()
