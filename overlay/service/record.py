"""Persistence calls of one channel: what a restart needs (game, playhead, file, settings).

The channel's parts write through this one object, so what survives a restart is listed in
one place; the SQL lives in :mod:`overlay.service.store`.

A game is stored as an action log with snapshots: a whole game (PUT, upload, file, load) is
written as it is; a logger action is appended to the log, and the game it makes is written
as a snapshot only every :data:`SNAPSHOT_EVERY` actions (when its ``seq`` is a multiple).
Writing the whole game on every action cost more the longer the game (at deal 100, 47 kB
and its SHA-256 per action); the log costs the same at deal 100 as at deal 2.  A restart
loads the last snapshot and pushes the logged actions after it (at most
``SNAPSHOT_EVERY - 1``) onto it: the same game, as the engine's replay is a function of
the actions (:func:`overlay.service.feed.replay_log`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from renderer.settings import ChannelSettings
from .store import Store

__all__ = ["ChannelRecord", "SNAPSHOT_EVERY"]

#: logged actions between two snapshots of a channel's game (a restart replays fewer)
SNAPSHOT_EVERY: Final = 64


class ChannelRecord:
    """The stored record of channel ``channel_id``."""

    def __init__(self, store: Store, channel_id: str) -> None:
        self.store = store
        self.channel_id = channel_id

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes inside land together or not at all (then memory may change).

        Raises:
            StoreFailed, StoreFull: the database refused; nothing was written.
        """
        with self.store.transaction():
            yield

    def save_game(self, data: bytes, *, source: str, seq: int) -> None:
        """A whole game, the channel's ``seq`` at it (logged actions after ``seq`` replay on it)."""
        self.store.save_game(self.channel_id, data, source=source, seq=seq)

    def save_action(self, seq: int, content: str, *, game: Callable[[], bytes], source: str) -> None:
        """Log the action accepted under ``seq`` (its JSON) and, every :data:`SNAPSHOT_EVERY`
        actions, the game it made (``game()``: its bytes, made only then)."""
        self.store.log_action(self.channel_id, seq, content)
        if seq % SNAPSHOT_EVERY == 0:
            self.store.save_game(self.channel_id, game(), source=source, seq=seq)

    def save_playhead(self, playhead: dict[str, Any]) -> None:
        self.store.save_playhead(self.channel_id, playhead)

    def log_action(self, seq: int, data: str) -> None:
        self.store.log_action(self.channel_id, seq, data)

    def clear_actions(self) -> None:
        self.store.clear_actions(self.channel_id)

    def action(self, seq: int) -> str | None:
        """The JSON of the action accepted under ``seq`` (None: not logged)."""
        return self.store.action(self.channel_id, seq)

    def save_follow(self, path: str | None) -> None:
        self.store.set_follow(self.channel_id, path)

    def save_settings(self, doc: ChannelSettings) -> ChannelSettings:
        """Store ``doc`` if its revision is the current one.

        Raises:
            StaleRevision: ``doc.revision`` is not the current one.
        """
        return self.store.put_settings(self.channel_id, doc)
