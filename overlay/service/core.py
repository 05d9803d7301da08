"""A channel's state and its read-only views, shared by the channel's parts.

A channel is one table: settings, the last good game, the Director, the connected sockets.
Its behaviour is split by concern, each part a class over this core: output fan-out
(:mod:`overlay.service.fanout`), feed ingestion (:mod:`overlay.service.ingest`), file following
(:mod:`overlay.service.follow`), director wiring (:mod:`overlay.service.playback`); persistence goes through
:class:`~overlay.service.record.ChannelRecord`; :class:`overlay.service.channel.Channel` puts them together.

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

from . import feed
from .branching import OnAir
from .clients import Page, StateSub
from .director import Director, Playhead
from .errors import NotFound, excerpt
from .feedlog import FeedLog
from .outputs import RenderSettings, SceneCache, durations_of, lags_of, marks_of
from .protocol import OUTPUTS, ChannelSettings
from .record import ChannelRecord
from .store import Store

__all__ = ["Clock", "Host", "ChannelCore"]

Clock = Callable[[], float]



def _cut(text: str | None) -> str | None:
    """A fault text as the status shows it: at most :data:`~overlay.service.errors.MAX_ERROR` characters."""
    return None if text is None else excerpt(text)

class Host(Protocol):
    """What a channel needs from the process that holds it (the :class:`~overlay.service.hub.Hub`)."""

    clock: Clock
    store: Store
    max_delay: float
    allow_dirs: tuple[Path, ...]


class ChannelCore:
    """One table's state: settings, the last good game and its versions, the Director,
    the connected sockets; plus the views every part reads."""

    def __init__(
        self,
        hub: Host,
        channel_id: str,
        settings: ChannelSettings,
        *,
        game: feed.Loaded | None = None,
        seq: int = 0,
        playhead: Playhead | None = None,
        follow: str | None = None,
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
        self.pages: set[Page] = set()
        self.subs: set[StateSub] = set()
        self.wake = asyncio.Event()
        self.cache = SceneCache(size=8)
        self.last_key: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.out_seq = 0
        self.follow_path = follow
        self.follow_error: str | None = None
        self.follow_task: asyncio.Task[None] | None = None
        self.follow_read = asyncio.Event()  # set once the followed file was read
        self.stopped_follows: set[asyncio.Task[None]] = set()  # cancelled, not yet finished
        self.pump_task: asyncio.Task[None] | None = None
        self.feeds: set[web.WebSocketResponse] = set()  # logger feed sockets
        self.closed = False
        # wall-clock ms of the last feed update's stages, for bench pages ("trace")
        self.feed_trace: dict[str, float] = {}
        self.load_error = load_error
        self.updated = now
        #: the alternative line on air (overlay.service.branching), None on the main line
        self.on_air: OnAir | None = None
        #: the logger's activity: last message taken, refusals (the studio's overview)
        self.feed_log = FeedLog()

    # ------------------------------------------------------------------ views

    @property
    def timeline(self) -> Any:
        return None if self.game is None else self.game.timeline

    @property
    def game_steps(self) -> Sequence[Any]:
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

    def info(self, now: float) -> dict[str, Any]:
        tl = self.timeline
        g = self.game
        return {
            "id": self.id,
            "title": self.settings.title,
            "settingsRevision": self.settings.revision,
            "game": None
            if g is None
            else {
                "source": g.source,
                "title": tl.title,
                "players": list(tl.players),
                "steps": len(g.steps),
                "deals": sum(len(p.timeline.deals) for p in g.parts),
                "seq": self.seq,
                "digest": g.digest,
                "problems": [str(p) for p in g.problems],
                "match": g.match,
                "games": [
                    {
                        "index": p.index,
                        "title": p.timeline.title,
                        "label": p.label,
                        "firstStep": p.first_step,
                        "steps": len(p.timeline.steps),
                        "deals": len(p.timeline.deals),
                        "players": list(p.timeline.players),
                    }
                    for p in g.parts
                ]
                if g.match
                else [],
            },
            "playhead": self.playhead_json(now),
            "follow": self.follow_path,
            "followError": _cut(self.follow_error),
            "loadError": _cut(self.load_error),
            # stored settings the models refuse: the channel runs on safe defaults meanwhile
            "settingsError": _cut(self.hub.store.settings_problems.get(self.id)),
            "pages": {o: sum(1 for p in self.pages if p.output == o and not p.monitor) for o in OUTPUTS},
            # the studio's own frames (preview, program, overview thumbnails), not counted above
            "monitors": sum(1 for p in self.pages if p.monitor),
            "feed": self.feed_log.to_json(now),
            "midDeal": self.mid_deal,
            "programAt": self.program_at(now),
        }

    @property
    def mid_deal(self) -> bool:
        """The game's last deal is being played (not scored, not over): a logger should be
        sending."""
        steps = self.game_steps
        return bool(steps) and steps[-1].kind.value not in ("deal_scored", "game_over")

    def program_at(self, now: float) -> dict[str, Any] | None:
        """Where the program output is (its delay applied): step, deal (from 0) and its
        number in the file, step kind, and in a match which game (from 0)."""
        pos = self.director.position(now - self.settings.output("program").delay)
        game = self.shown(pos.version) if pos.version is not None else self.game
        if game is None or pos.step is None or not 0 <= pos.step < len(game.steps):
            return None
        s = game.steps[pos.step]
        return {"step": pos.step, "deal": s.deal, "dealNumber": s.deal_number, "kind": s.kind.value, "game": self.where(game, pos.step)["game"]}

    def status(self, now: float) -> dict[str, Any]:
        outputs: dict[str, Any] = {}
        for o in OUTPUTS:
            delay = self.settings.output(o).delay
            pos = self.director.position(now - delay)
            pages = [p.status(now) for p in self.pages if p.output == o]
            for p in pages:
                drawn = p["lastDrawnStep"]
                p["stepsBehind"] = None if drawn is None or pos.step is None else pos.step - drawn
            outputs[o] = {"delay": delay, "step": pos.step, "progress": round(pos.progress, 4), "pages": pages}
        return {"id": self.id, "steps": self.steps, "seq": self.seq, "outputs": outputs, "stateClients": len(self.subs)}

    # ------------------------------------------------------------------ shared by the parts

    def poke(self) -> None:
        """Wake the pump: something an output shows may have changed."""
        self.wake.set()

    def _alive(self) -> None:
        """Raises NotFound once the channel is deleted (a request that was reading its body
        when the channel went must not write to the store)."""
        if self.closed:
            raise NotFound(f"no channel {self.id!r} (deleted)", channel=self.id)

    def _prune_versions(self) -> None:
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
