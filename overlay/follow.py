"""File following: a channel reads a game file a logger keeps saving.

The file is watched with ``watchfiles``; a half-written file is ignored (the error is kept
for the status page) until it parses, and the channel keeps its last good state meanwhile.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.errors import EgnError

from .errors import BadRequest, TooLarge
from .ingest import Ingest

__all__ = ["Following"]


class Following(Ingest):
    """Start, stop and run the watcher of a channel's followed file."""

    def start_follow(self, path: str) -> None:
        self._alive()
        self.stop_follow()
        self.follow_path = path
        self.follow_error = None
        self.record.save_follow(path)
        self.follow_task = asyncio.get_running_loop().create_task(self._follow(Path(path)), name=f"follow:{self.id}")

    def stop_follow(self, *, forget: bool = False) -> None:
        if self.follow_task is not None:
            self.follow_task.cancel()
            # the watcher thread stops shortly after; close() awaits it
            self.stopped_follows.add(self.follow_task)
            self.follow_task.add_done_callback(self.stopped_follows.discard)
            self.follow_task = None
        if forget:
            self.follow_path = None
            self.record.save_follow(None)

    def _read_followed(self, path: Path) -> None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.follow_error = f"{path}: {exc.strerror or exc}"
            return
        try:
            self.put_game(data, source=path.name, strict=False)
            self.follow_error = None
        except (EgnError, BadRequest, TooLarge) as exc:
            # a half-written file: keep the last good state until it parses
            self.follow_error = str(exc)

    async def _follow(self, path: Path) -> None:
        import watchfiles

        target = path.resolve()
        self._read_followed(target)
        parent = target.parent

        def only_target(change: watchfiles.Change, name: str) -> bool:
            return Path(name).resolve() == target and change != watchfiles.Change.deleted

        async for _ in watchfiles.awatch(parent, watch_filter=only_target, debounce=50, step=10, recursive=False):
            self._read_followed(target)
