"""Persistence calls of one channel: what a restart needs (game, playhead, file, settings).

The channel's parts write through this one object, so what survives a restart is listed in
one place; the SQL lives in :mod:`overlay.service.store`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .protocol import ChannelSettings
from .store import Store

__all__ = ["ChannelRecord"]


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
        self.store.save_game(self.channel_id, data, source=source, seq=seq)

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
