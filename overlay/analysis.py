"""Live analysis beside the event loop: a process pool, stale results dropped.

The double-dummy solver takes tens of milliseconds per step and the bidding table more, which
must never delay a frame.  So a page gets its scene at once (the pump does not wait), and the
analysis of the same step follows as its own message when a worker process has it:

    {"type": "analysis", "channel": ..., "output": ..., "step": N, "analysis": {...}}

(``analysis`` is the ``analyse --json`` step object).  Each (channel, output) keeps only its
newest request: a request still queued is cancelled when a newer one arrives, and a result
whose step is no longer the newest is dropped, never sent.  The clean output never gets
analysis computed from hidden cards: it is analysed with ``public=True`` (score, dealer and
contract only, labelled an estimate), or not at all, as :data:`CLEAN` says.

Workers keep one :class:`engine.analysis.Analyst` per ruleset, so stepping through a deal
reuses the solver's tables.  Off unless enabled (``EUCHRE_OVERLAY_ANALYSIS=1`` in the
service's environment, or :func:`configure`): the page player draws no analysis element yet.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import multiprocessing
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.analysis import Analyst
from engine.ruleset import Ruleset
from engine.state import GameState

__all__ = ["CLEAN", "AnalysisPool", "configure", "enabled", "pool", "after_scene", "rules_of", "shutdown"]

log = logging.getLogger("overlay.analysis")

#: what the clean output gets: analysis from public information only, or none
CLEAN: dict[str, Literal["public", "none"]] = {"policy": "public"}

_enabled: bool | None = None
_pool: AnalysisPool | None = None

# -- the worker side (runs in the pool's processes) --------------------------------------------

_analysts: dict[Ruleset, Analyst] = {}


def _work(rules: Ruleset, state: GameState, public: bool) -> dict[str, Any]:
    """Analyse one state in a worker; the analyst (and its tables) stays for the next call."""
    analyst = _analysts.get(rules)
    if analyst is None:
        analyst = _analysts[rules] = Analyst(rules)
    return analyst.analyse(state, public=public).to_json()


def _warm(rules: Ruleset) -> bool:
    """Fit the win-probability prior of a ruleset before the first real request."""
    if rules not in _analysts:
        _analysts[rules] = Analyst(rules)
    return True


# -- the service side ----------------------------------------------------------------------------


@dataclass
class _Latest:
    token: int = 0
    future: concurrent.futures.Future[dict[str, Any]] | None = None


@dataclass
class AnalysisPool:
    """A process pool for analyses, with the newest request per key kept and older dropped."""

    workers: int = 1
    latest: dict[tuple[str, str], _Latest] = field(default_factory=dict)
    dropped: int = 0
    _executor: concurrent.futures.ProcessPoolExecutor | None = None

    def executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            # spawn: the service's event loop and sockets are not forked into the workers
            self._executor = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))
            self._executor.submit(_warm, Ruleset())
        return self._executor

    async def analyse(self, key: tuple[str, str], state: GameState, rules: Ruleset, *, public: bool) -> dict[str, Any] | None:
        """The analysis of ``state``, or ``None`` when a newer request for ``key`` came first
        (the stale result is dropped; a request still queued is cancelled)."""
        slot = self.latest.setdefault(key, _Latest())
        if slot.future is not None and slot.future.cancel():
            self.dropped += 1
        slot.token += 1
        token = slot.token
        future = self.executor().submit(_work, rules, state, public)
        slot.future = future
        try:
            result = await asyncio.wrap_future(future)
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


def configure(*, on: bool, clean: Literal["public", "none"] = "public", workers: int = 1) -> None:
    """Turn live analysis on or off for this process (the service reads it per scene)."""
    global _enabled, _pool
    _enabled = on
    CLEAN["policy"] = clean
    if _pool is not None and _pool.workers != workers:
        _pool.shutdown()
        _pool = None
    if on and _pool is None:
        _pool = AnalysisPool(workers=workers)


def enabled() -> bool:
    global _enabled
    if _enabled is None:
        _enabled = os.environ.get("EUCHRE_OVERLAY_ANALYSIS", "") not in ("", "0", "off")
    return _enabled


def pool() -> AnalysisPool:
    global _pool
    if _pool is None:
        _pool = AnalysisPool()
    return _pool


def shutdown() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown()
        _pool = None


def rules_of(document: dict[str, Any], game_index: int = 0) -> Ruleset:
    """The ruleset of a channel's game (EGN JSON, or the ``game_index``-th game of an EMN
    match); the defaults when the file has none or an unreadable one."""
    try:
        meta = document.get("metadata", {}) if "games" not in document else document["games"][game_index].get("metadata", {})
        return Ruleset.model_validate(meta.get("ruleset") or {})
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return Ruleset()


def message(channel: str, output: str, step: int, analysis: dict[str, Any], *, took_ms: float) -> str:
    return json.dumps({"type": "analysis", "channel": channel, "output": output, "step": step, "tookMs": round(took_ms, 2), "analysis": analysis}, separators=(",", ":"))


def after_scene(channel: Any, output: str, size: tuple[int, int], step: int | None, pages: Iterable[Any]) -> None:
    """The pump's hook: the scene of ``step`` was just sent to ``pages`` (one group: an output
    at one size); start its analysis and send it to those pages when ready (never awaited by
    the pump)."""
    if step is None or not enabled():
        return
    public = output == "clean"
    if public and CLEAN["policy"] == "none":
        return
    # the game this output shows now (its delay applied): while an alternative line is on
    # air there, the line game, whose states are the line's (overlay.branching)
    pos = channel.director.position(channel.hub.clock() - channel.settings.output(output).delay)
    game = channel.shown(pos.version)
    if game is None or step >= len(game.steps):
        return
    state = game.steps[step]
    part = game.part_of(step) if getattr(game, "parts", ()) else None
    rules = rules_of(game.document, part.index if part is not None else 0)
    targets = list(pages)
    key = (channel.id, f"{output}@{size[0]}x{size[1]}")
    task = asyncio.get_running_loop().create_task(_deliver(channel, key, output, step, state, rules, public, targets), name=f"analysis:{key}")
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


_tasks: set[asyncio.Task[None]] = set()


async def _deliver(channel: Any, key: tuple[str, str], output: str, step: int, state: GameState, rules: Ruleset, public: bool, pages: list[Any]) -> None:
    from .clients import send_text

    began = time.perf_counter()
    try:
        result = await pool().analyse(key, state, rules, public=public)
    except Exception:  # a failed analysis must not touch the channel
        log.exception("channel %s: analysis of step %s failed", channel.id, step)
        return
    if result is None or channel.closed:
        return
    text = message(channel.id, output, step, result, took_ms=(time.perf_counter() - began) * 1000)
    for page in pages:
        if page in channel.pages:
            await send_text(page.ws, text)
