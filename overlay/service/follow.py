"""File following: a channel reads a game file a logger keeps saving.

The file is watched with ``watchfiles``; a half-written file is ignored (the error is kept
for the status page) until it parses, and the channel keeps its last good state meanwhile.
The file is read in a worker thread, regular files only, up to the size cap
(:mod:`overlay.service.files`): a FIFO, a device or a huge file is reported on the channel and
never blocks the server, at a request or at start-up (a saved follow is resumed then).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from engine.errors import EgnError

from .errors import BadRequest, Forbidden, NotFound, OverlayError, TooLarge
from .files import check_allowed, read_game_file_async
from .ingest import Ingest

log = logging.getLogger("overlay.service.follow")

__all__ = ["Following"]


class Following(Ingest):
    """Start, stop and run the watcher of a channel's followed file."""

    def start_follow(self, path: str) -> None:
        self._alive()
        self.record.save_follow(path)  # stored first: a refused write changes nothing
        self.stop_follow()
        self.follow_path = path
        self.follow_error = None
        self.follow_read = asyncio.Event()
        self.follow_task = asyncio.get_running_loop().create_task(self._follow(Path(path)), name=f"follow:{self.id}")

    def stop_follow(self, *, forget: bool = False) -> None:
        if self.follow_task is not None:
            self.follow_task.cancel()
            # the watcher thread stops shortly after; close() awaits it
            self.stopped_follows.add(self.follow_task)
            self.follow_task.add_done_callback(self.stopped_follows.discard)
            self.follow_task = None
        if forget:
            self.record.save_follow(None)
            self.follow_path = None

    async def _read_followed(self, path: Path) -> None:
        """Read the followed file, its path resolved and checked again as for a new follow
        (``serve --allow-dir``, system files): a saved follow whose file became a link to a
        file outside is refused at every start, takeover and change, not read."""
        try:
            resolved = await asyncio.to_thread(check_allowed, path, self.hub.allow_dirs)
            # the final name is opened without following a link: one swapped in after the
            # check is refused, not read
            data = await read_game_file_async(resolved, follow_links=False)
        except (NotFound, BadRequest, TooLarge, Forbidden) as exc:
            self.follow_error = exc.message
            return
        if self.closed:
            return
        try:
            self.put_game(data, source=path.name, strict=False)
            self.follow_error = None
            self.feed_log.took(self.hub.clock(), via="file")
        except (EgnError, OverlayError) as exc:
            # a half-written file: keep the last good state until it parses
            self.follow_error = str(exc)

    async def _follow(self, path: Path) -> None:
        """Read the file now and at every change; a fault is kept on the channel's status."""
        try:
            await self._watch(path)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a folder gone, a watcher fault: reported, the server goes on
            log.warning("channel %s: following %s stopped: %s", self.id, path, exc)
            self.follow_error = f"{path}: following stopped: {exc}"
        finally:
            self.follow_read.set()

    async def first_read(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` s) until the followed file was read once."""
        try:
            async with asyncio.timeout(timeout):
                await self.follow_read.wait()
        except asyncio.TimeoutError:
            pass

    async def _watch(self, path: Path) -> None:
        import watchfiles

        path = path.absolute()
        await self._read_followed(path)
        self.follow_read.set()

        def only_target(change: watchfiles.Change, name: str) -> bool:
            if change == watchfiles.Change.deleted:
                return False
            changed = Path(name)
            return changed.name == path.name or changed.resolve() == path.resolve()

        async for _ in watchfiles.awatch(path.parent, watch_filter=only_target, debounce=50, step=10, recursive=False):
            await self._read_followed(path)
