"""A channel's state and its read-only views, shared by the channel's parts.

A channel is one table: settings, the last good game and its versions, the Director, the
alternative line on air.  That state is :class:`ChannelCore`; the channel's parts are objects
with state of their own that each hold the core: output fan-out (:mod:`overlay.service.fanout`:
the pages, the scene cache, the pump), feed ingestion (:mod:`overlay.service.ingest`: the
logger sockets), file following (:mod:`overlay.service.follow`: the watcher), director wiring
(:mod:`overlay.service.playback`); persistence goes through
:class:`~overlay.service.record.ChannelRecord`; :class:`overlay.service.channel.Channel` holds
the parts and wires them.

Broadcast delay: every accepted game gets a new revision, kept in :attr:`ChannelCore.versions`
while some Director anchor inside the largest output delay still shows it.  An output with
delay ``d`` asks the Director for the position at ``now - d``, which names the version (and
the step durations) in force then, so a delayed output shows exactly what preview showed
``d`` seconds earlier, corrections included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from engine.state import GameState, Timeline
from renderer.settings import OUTPUTS, ChannelSettings, OutputName, RenderSettings
from renderer.timing import durations_of

from . import feed
from .analysis import LiveAnalysis
from .branching import OnAir
from .clients import Page, StateSub
from .director import Director, Playhead
from .errors import NotFound
from .feedlog import FeedLog
from .outputs import SceneCache, TakeFx, lags_of, marks_of
from .record import ChannelRecord
from .store import Store

__all__ = ["Clock", "Host", "ChannelCore"]

Clock = Callable[[], float]


class Host(Protocol):
    """What a channel needs from the process that holds it (the :class:`~overlay.service.hub.Hub`)."""

    clock: Clock
    store: Store
    max_delay: float
    analysis: LiveAnalysis
    allow_dirs: tuple[Path, ...]


class ChannelCore:
    """One table's state: settings, the last good game and its versions, the Director, the
    line on air; plus the views every part reads."""

    def __init__(
        self,
        hub: Host,
        channel_id: str,
        settings: ChannelSettings,
        *,
        game: feed.Loaded | None = None,
        seq: int = 0,
        playhead: Playhead | None = None,
        load_error: str | None = None,
    ) -> None:
        self.hub = hub
        self.id = channel_id
        self.record = ChannelRecord(hub.store, channel_id)
        self.settings = settings
        self.render = RenderSettings(settings)
        self.game = game
        self.seq = seq
        self.revision = 0  # bumped on every new timeline
        # every version of the game a delayed output may still show, by revision
        self.versions: dict[int, feed.Loaded | None] = {0: None if game is None else game.slim()}
        now = hub.clock()
        self.director = Director(
            durations_of(self.game_steps, self.render.timing),
            now=now,
            playhead=playhead,
            max_delay=self.window,
            version=0,
            marks=marks_of(self.game_steps),
            **lags_of(self.render.timing),
        )
        #: set when something an output shows may have changed (the fan-out's pump waits on it)
        self.wake = asyncio.Event()
        self.closed = False
        # wall-clock ms of the last feed update's stages, for bench pages ("trace")
        self.feed_trace: dict[str, float] = {}
        self.load_error = load_error
        self.updated = now
        #: the alternative line on air (overlay.service.branching), None on the main line
        self.on_air: OnAir | None = None
        #: the logger's activity: last message taken, refusals (the studio's overview)
        self.feed_log = FeedLog()
        #: per output, the TAKE transition under way (overlay.service.outputs.TakeFx)
        self.takes: dict[OutputName, TakeFx] = {}
        #: bumped at every take: a take that leaves the settings as they were (a stinger cue)
        #: still makes the outputs draw again
        self.take_seq = 0
        #: the rundown cue fired last (its id), for GO (the next one) and the button feedback
        self.last_cue: str | None = None

    # ------------------------------------------------------------------ views

    @property
    def timeline(self) -> Timeline | None:
        """The game's replay (a match's first game's), None without a game."""
        return None if self.game is None else self.game.timeline

    @property
    def game_steps(self) -> Sequence[GameState]:
        return () if self.game is None else self.game.steps

    @property
    def steps(self) -> int:
        return 0 if self.game is None else len(self.game.steps)

    @property
    def played(self) -> feed.Loaded | None:
        """What the live playhead plays: the line game while an alternative line is on air
        (the main line up to it, then the line), else the game."""
        return self.on_air.game if self.on_air is not None else self.game

    @property
    def window(self) -> float:
        """How far back delayed outputs look: the largest delay of this channel's outputs."""
        return min(self.hub.max_delay, max((self.settings.output(o).delay for o in OUTPUTS), default=0.0))

    def shown(self, version: int) -> feed.Loaded | None:
        """The game as it was in ``version`` (what a delayed output still shows)."""
        return self.versions.get(version, self.game)

    @staticmethod
    def where(game: feed.Loaded | None, step: int | None) -> dict[str, Any]:
        """Which game of a match ``step`` is in (JSON fields of the scene and state messages)."""
        if game is None or step is None:
            return {"game": None, "games": 0 if game is None else game.games_in_file, "game_title": None}
        part = game.part_of(step)
        return {"game": part.index, "games": game.games_in_file, "game_title": part.title}

    def playhead_json(self, now: float) -> dict[str, Any]:
        ph = self.director.playhead(now).to_json()
        ph["steps"] = self.steps
        ph["delays"] = {o: self.settings.output(o).delay for o in OUTPUTS}
        w = self.where(self.game, self.director.position(now).step)
        ph["game"], ph["games"], ph["gameTitle"] = w["game"], w["games"], w["game_title"]
        ph["line"] = None if self.on_air is None else self.on_air.to_json()
        return ph

    # ------------------------------------------------------------------ shared by the parts

    def poke(self) -> None:
        """Wake the pump: something an output shows may have changed."""
        self.wake.set()

    def check_alive(self) -> None:
        """Raises NotFound once the channel is deleted (a request that was reading its body
        when the channel went must not write to the store)."""
        if self.closed:
            raise NotFound(f"no channel {self.id!r} (deleted)", channel=self.id)

    def prune_versions(self) -> None:
        """Forget versions no kept anchor shows (older than the largest delay)."""
        oldest = min(self.director.oldest_version, self.revision)
        for rev in [r for r in self.versions if r < oldest]:
            del self.versions[rev]

    def main_playhead(self, director: Director, now: float) -> Playhead:
        """Where the main line is: ``director``'s playhead, or where the main line left while an
        alternative line is on air (a line is not stored: a restart resumes the main line)."""
        return self.on_air.resume if self.on_air is not None else director.playhead(now)

    def save_playhead(self, now: float) -> None:
        """Store where the playhead is (a restart resumes there)."""
        self.record.save_playhead(self.main_playhead(self.director, now).to_json())
