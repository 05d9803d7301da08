"""The hub: every channel of the process, restored from and written to the store."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from engine.errors import EgnError
from renderer.settings import ChannelSettings, RenderSettings

from . import feed
from .analysis import LiveAnalysis
from .channel import Channel
from .core import Clock
from .director import Playhead
from .errors import BadRequest, NotFound, StoreFailed, TooLarge
from .store import Store

__all__ = ["Hub"]

log = logging.getLogger("overlay.service.hub")


class Hub:
    """Every channel of the process, restored from and written to the store."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock = time.monotonic,
        max_delay: float = 600.0,
        allow_dirs: tuple[Path, ...] = (),
        analysis: LiveAnalysis | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.max_delay = max_delay
        #: ``serve --allow-dir``: every read of a followed file checks its resolved path
        self.allow_dirs = allow_dirs
        #: the service's live analysis (the app's, :data:`overlay.service.keys.ANALYSIS`)
        self.analysis = analysis if analysis is not None else LiveAnalysis()
        self.channels: dict[str, Channel] = {}
        self.started = False
        #: pages asking for a channel that does not exist (yet), newest last; bounded
        self.waiting: dict[str, dict[str, object]] = {}

    def get(self, channel_id: str) -> Channel:
        try:
            return self.channels[channel_id]
        except KeyError:
            raise NotFound(f"no channel {channel_id!r}", channel=channel_id) from None

    def page_waiting(self, channel_id: str, error: str, *, monitor: bool = False) -> None:
        """Note a page (or its socket) asking for a missing channel: the server's status shows
        it, since the page itself must not show anything on air.  The studio's own frames
        (``monitor``) are not OBS pages: a studio still on a channel deleted elsewhere is not
        told to fix a URL in OBS."""
        if monitor:
            return
        entry = self.waiting.pop(channel_id, None) or {"channel": channel_id, "requests": 0}
        entry["requests"] = int(str(entry["requests"])) + 1
        entry["error"] = error
        entry["lastSeen"] = time.time()
        self.waiting[channel_id] = entry
        while len(self.waiting) > 64:  # a stranger's typos must not grow memory
            self.waiting.pop(next(iter(self.waiting)))

    def restore(self) -> None:
        """Rebuild every stored channel (games are re-replayed leniently: nothing is dropped):
        its last snapshot, with the actions logged after it pushed on."""
        for rec in self.store.channels():
            game = None
            error = rec.fault
            seq = rec.game.seq if rec.game else 0
            if rec.fault is not None:
                log.error("%s (the channel starts empty; the other channels start)", rec.fault)
            if rec.game is not None:
                try:
                    game = feed.load_bytes(rec.game.data, source=rec.game.source, strict=False)
                except (EgnError, BadRequest, TooLarge) as exc:
                    error = str(exc)
                else:
                    game, last, why = feed.replay_log(game, rec.actions, source=f"{self.store.path}: channel {rec.id!r}")
                    seq = last if last is not None else seq
                    if why is not None:
                        error = why
                        log.error("%s", why)
            try:
                playhead = Playhead.from_json(rec.playhead) if rec.playhead else None
            except (KeyError, TypeError, ValueError) as exc:
                playhead = None
                error = f"{self.store.path}: channel {rec.id!r}: the stored playhead cannot be read ({exc!r}); starting at step 0"
                log.error("%s", error)
            self.channels[rec.id] = Channel(
                self,
                rec.id,
                rec.settings,
                game=game,
                seq=seq,
                playhead=playhead,
                follow=rec.follow,
                load_error=error,
            )

    def create(self, channel_id: str, settings: ChannelSettings | None = None, *, playhead: Playhead | None = None) -> Channel:
        if settings is not None:
            RenderSettings(settings)
        stored = self.store.create_channel(channel_id, settings)
        self.waiting.pop(channel_id, None)
        ch = Channel(self, channel_id, stored, playhead=playhead)
        self.channels[channel_id] = ch
        if playhead is not None:
            self.store.save_playhead(channel_id, playhead.to_json())
        if self.started:
            ch.start()
        return ch

    async def delete(self, channel_id: str) -> None:
        ch = self.get(channel_id)
        self.store.delete_channel(channel_id)
        del self.channels[channel_id]
        await ch.close(reason="channel deleted")

    def start(self) -> None:
        self.started = True
        for ch in self.channels.values():
            ch.start()

    async def stop(self) -> None:
        """Save where every playhead is (a restart resumes there, all in one transaction)
        and close the channels, all at once: each channel's goodbye to a page that does not
        read waits up to a second, and one after another that was a second per such page."""
        self.started = False
        now = self.clock()
        channels = list(self.channels.values())
        try:
            with self.store.transaction():
                for ch in channels:
                    ch.save_playhead(now)
        except StoreFailed as exc:  # a full disk must not stop the shutdown
            log.error("playheads not saved: %s", exc)
        results = await asyncio.gather(*(ch.close(reason="server shutting down") for ch in channels), return_exceptions=True)
        for ch, result in zip(channels, results):
            if isinstance(result, Exception):
                log.error("channel %s: not closed cleanly: %r", ch.id, result)
