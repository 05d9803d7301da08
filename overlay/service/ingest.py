"""Feed ingestion: a logger's whole games and single actions become the channel's game.

Every accepted game is a new revision; steps before the first change keep their durations,
so new actions animate and corrections to past actions jump without animation.  A refused
document or action leaves the channel's last good state untouched, and so does a write the
database refuses: the new game, playhead and action are stored in one transaction first,
and only then does memory change.

Each ack lists the engine's new warnings (a renege, a card played twice: facts a logger
records from a real table), so the operator sees them; errors are refused.
"""

from __future__ import annotations

import asyncio

import copy
import json
import time

from aiohttp import web

from engine.live import Change
from renderer.timing import durations_of

from . import feed
from .core import ChannelCore
from .director import StepTimes
from .errors import Conflict, SequenceGap
from .outputs import SceneCache, marks_of
from .protocol import ActionIn, FeedAck

__all__ = ["Ingest"]


#: a PUT body from this size on is read in a worker thread (:meth:`Ingest.put_game_async`)
THREAD_BODY = 256 * 1024


class Ingest:
    """Whole games (PUT, upload, file) and logger actions of a channel, and its logger feed
    sockets.  ``scenes`` is the channel's scene cache (told which scenes a new revision
    shares with the one before)."""

    def __init__(self, channel: ChannelCore, *, scenes: SceneCache) -> None:
        self.channel = channel
        self.scenes = scenes
        self.feeds: set[web.WebSocketResponse] = set()  # logger feed sockets

    def _commit(
        self,
        loaded: feed.Loaded,
        *,
        seq: int,
        reset: bool = False,
        action: tuple[int, str] | None = None,
        change: Change | None = None,
    ) -> FeedAck:
        """Store, then show ``loaded`` (with ``action``: the logged ``(seq, json)``, and
        ``change``: what the engine's push changed, so nothing is compared again).

        Raises:
            StoreFailed, StoreFull: the database refused; the channel is unchanged.
        """
        ch = self.channel
        now = ch.hub.clock()
        # leading steps with equal states keep their scenes; ``first``: the first step changed
        if reset:
            shared, first = 0, None
        elif change is not None:
            shared, first = change.shared, change.first
        else:
            shared, first = feed.compare(ch.game, loaded)
        old_steps = ch.steps
        correction = first is not None and first < old_steps
        revision = ch.revision + 1
        director = copy.deepcopy(ch.director)  # memory changes only once the store has it
        # an alternative line on air holds the live play: the game takes the action, the
        # picture stays on the line until ``mainline`` (overlay.service.branching); a new game ends it
        held = ch.on_air is not None and not reset
        if reset:
            director.reset(now, durations_of(loaded.steps, ch.render.timing), version=revision, marks=marks_of(loaded.steps))
        elif not held:
            director.timeline_changed(now, self._times(loaded, first, revision), first_changed=first if first is not None else len(loaded.steps))
        with ch.record.transaction():
            if action is None:
                ch.record.save_game(loaded.data, source=loaded.source, seq=seq)
            else:
                ch.record.save_action(*action, game=lambda: loaded.data, source=loaded.source)
            ch.record.save_playhead(ch.main_playhead(director, now).to_json() if held else director.playhead(now).to_json())
            if reset:
                ch.record.clear_actions()
        warnings = [str(p) for p in change.warnings] if change is not None else feed.new_warnings(ch.game, loaded)
        before = ch.versions.get(ch.revision)
        if not reset and ch.on_air is None and ch.game is not None and before is not None and before.steps is ch.game.steps:
            # the steps the action left alone keep their scenes (overlay.service.outputs.SceneCache)
            self.scenes.same_as(revision, ch.revision, shared)
        ch.game = loaded
        ch.seq = seq
        ch.load_error = None
        ch.revision = revision
        ch.versions[revision] = loaded.slim()
        ch.director = director
        if reset:
            ch.on_air = None
        ch.prune_versions()
        ch.updated = now
        ch.poke()
        return FeedAck(
            seq=None, changed=True, correction=correction, steps=ch.steps, expected=ch.seq + 1, warnings=warnings
        )

    def _times(self, loaded: feed.Loaded, first: int | None, revision: int) -> StepTimes:
        """The step times of ``loaded`` under ``revision``: the steps before ``first`` (the
        first that changed) are the same steps and keep their durations and marks, so only
        the steps from ``first`` on are read (a live action: one or two).  The marks are the
        deal-scored banners catch-up never cuts over."""
        ch = self.channel
        times = ch.director.times
        steps = loaded.steps
        if first is None:
            first = len(steps)
        if len(times.durations) != len(ch.game_steps) or first > len(times.durations):
            first = 0  # the Director's times are not this game's (cannot be: read them all)
        tail = steps[first:]
        return times.amended(first, durations_of(tail, ch.render.timing), version=revision, marks=marks_of(tail))

    def _unchanged(self, seq: int | None = None, *, duplicate: bool = False) -> FeedAck:
        ch = self.channel
        return FeedAck(seq=seq, duplicate=duplicate, changed=False, steps=ch.steps, expected=ch.seq + 1)

    def put_game(self, data: bytes, *, source: str, strict: bool = True) -> FeedAck:
        """A whole game from the logger (idempotent).

        Raises:
            EgnError: the engine refused it (the channel keeps its last good state).
        """
        ch = self.channel
        ch.check_alive()
        if ch.game is not None and feed.digest(data) == ch.game.digest:
            return self._unchanged()
        return self._take_put(feed.load_bytes(data, source=source, strict=strict, previous=ch.game))

    async def put_game_async(self, data: bytes, *, source: str, strict: bool = True) -> FeedAck:
        """:meth:`put_game` with a large body read and replayed in a worker thread, so the
        channel's pages and every other request are served meanwhile (a multi-megabyte game
        took the loop for its whole parse); a small one is read at once (the hop costs more).
        Should another write land while the thread reads, the body is read again against
        it, on the loop.

        Raises:
            EgnError: as :meth:`put_game`.
        """
        ch = self.channel
        ch.check_alive()
        if len(data) < THREAD_BODY or (ch.game is not None and feed.digest(data) == ch.game.digest):
            return self.put_game(data, source=source, strict=strict)
        previous = ch.game
        loaded = await asyncio.to_thread(feed.load_bytes, data, source=source, strict=strict, previous=previous)
        ch.check_alive()
        if ch.game is not previous:
            return self.put_game(data, source=source, strict=strict)
        return self._take_put(loaded)

    def _take_put(self, loaded: feed.Loaded) -> FeedAck:
        """Commit a game the logger PUT (read against the channel's current game)."""
        ch = self.channel
        if ch.game is not None and loaded.document == ch.game.document:
            # same game in another encoding: keep the new bytes, nothing to show
            ch.record.save_game(loaded.data, source=loaded.source, seq=ch.seq)
            ch.game = loaded
            if ch.on_air is None or ch.on_air.version != ch.revision:  # not the line game's version
                ch.versions[ch.revision] = loaded.slim()
            return self._unchanged()
        return self._commit(loaded, seq=ch.seq)

    def load_game(self, data: bytes, *, source: str) -> FeedAck:
        """Load a (different) game: lenient, starts from its first step."""
        ch = self.channel
        ch.check_alive()
        loaded = feed.load_bytes(data, source=source, strict=False)
        return self._commit(loaded, seq=0, reset=True)

    def apply_action(self, action: ActionIn) -> FeedAck:
        """One logger action with its sequence number.

        Raises:
            SequenceGap: ``seq`` skips numbers (``expected`` says which one is next).
            EgnError: the engine found the action illegal or malformed.
            BadRequest: the action does not fit the document (no deal yet...).
        """
        ch = self.channel
        ch.check_alive()
        received = time.time() * 1000
        expected = ch.seq + 1
        content = json.dumps(action.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)
        if action.seq < expected:
            logged = ch.record.action(action.seq)
            if logged is not None and logged != content:
                raise Conflict(
                    f"channel {ch.id!r}: action {action.seq} was already accepted as {logged}; "
                    f"this one differs: {content}",
                    seq=action.seq,
                    accepted=json.loads(logged),
                    expected=expected,
                )
            return self._unchanged(action.seq, duplicate=True)
        if action.seq > expected:
            raise SequenceGap(
                f"channel {ch.id!r}: action {action.seq} skips ahead; expected {expected}", expected=expected
            )
        source = ch.game.source if ch.game else f"{ch.id}.egn"
        loaded, change = feed.push_action(ch.game, action, source=source)
        replayed = time.time() * 1000
        ack = self._commit(loaded, seq=action.seq, action=(action.seq, content), change=change)
        ch.feed_trace = {"received": received, "replayed": replayed, "committed": time.time() * 1000}
        return ack.model_copy(update={"seq": action.seq})
