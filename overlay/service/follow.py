"""File following: a channel reads a game file a logger keeps saving.

The file is watched with ``watchfiles``; a half-written file is ignored (the error is kept
for the status page) until it parses, and the channel keeps its last good state meanwhile.
The file is read in a worker thread, regular files only, up to the size cap
(:mod:`overlay.service.files`): a FIFO, a device or a huge file is reported on the channel and
never blocks the server, at a request or at start-up (a saved follow is resumed then).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Protocol

from engine.errors import EgnError

from .core import ChannelCore
from .errors import BadRequest, Forbidden, NotFound, OverlayError, TooLarge
from .files import check_allowed, read_game_file_async
from .protocol import FeedAck

log = logging.getLogger("overlay.service.follow")

__all__ = ["Follow", "PutGame"]

class PutGame(Protocol):
    """How a followed file's bytes become the channel's game (:meth:`overlay.service.ingest.Ingest.put_game`)."""

    def __call__(self, data: bytes, *, source: str, strict: bool = True) -> FeedAck: ...


class Follow:
    """The followed file of a channel: its path, the last read's fault, and the watcher task.

    ``put_game`` takes each parsed read (``put_game(data, source=..., strict=False)``)."""

    def __init__(self, channel: ChannelCore, put_game: PutGame, *, path: str | None = None) -> None:
        self.channel = channel
        self.put_game = put_game
        self.path = path
        self.error: str | None = None
        self.task: asyncio.Task[None] | None = None
        self.read = asyncio.Event()  # set once the followed file was read
        self.stopped: set[asyncio.Task[None]] = set()  # cancelled, not yet finished

    def start(self, path: str) -> None:
        self.channel.check_alive()
        self.channel.record.save_follow(path)  # stored first: a refused write changes nothing
        self.stop()
        self.path = path
        self.error = None
        self.read = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._follow(Path(path)), name=f"follow:{self.channel.id}")

    def stop(self, *, forget: bool = False) -> None:
        if self.task is not None:
            self.task.cancel()
            # the watcher thread stops shortly after; close() awaits it
            self.stopped.add(self.task)
            self.task.add_done_callback(self.stopped.discard)
            self.task = None
        if forget:
            self.channel.record.save_follow(None)
            self.path = None

    async def close(self) -> None:
        """Stop the watcher and await every watcher task still finishing."""
        self.stop()
        tasks = list(self.stopped)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _read_followed(self, path: Path) -> None:
        """Read the followed file, its path resolved and checked again as for a new follow
        (``serve --allow-dir``, system files): a saved follow whose file became a link to a
        file outside is refused at every start, takeover and change, not read."""
        try:
            resolved = await asyncio.to_thread(check_allowed, path, self.channel.hub.allow_dirs)
            # the final name is opened without following a link: one swapped in after the
            # check is refused, not read
            data = await read_game_file_async(resolved, follow_links=False)
        except (NotFound, BadRequest, TooLarge, Forbidden) as exc:
            self.error = exc.message
            return
        if self.channel.closed:
            return
        try:
            self.put_game(data, source=path.name, strict=False)
            self.error = None
            self.channel.feed_log.took(self.channel.hub.clock(), via="file")
        except (EgnError, OverlayError) as exc:
            # a half-written file: keep the last good state until it parses
            self.error = str(exc)

    async def _follow(self, path: Path) -> None:
        """Read the file now and at every change; a fault is kept on the channel's status."""
        try:
            await self._watch(path)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a folder gone, a watcher fault: reported, the server goes on
            log.warning("channel %s: following %s stopped: %s", self.channel.id, path, exc)
            self.error = f"{path}: following stopped: {exc}"
        finally:
            self.read.set()

    async def first_read(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` s) until the followed file was read once."""
        try:
            async with asyncio.timeout(timeout):
                await self.read.wait()
        except asyncio.TimeoutError:
            pass

    async def _watch(self, path: Path) -> None:
        import watchfiles

        path = path.absolute()
        await self._read_followed(path)
        self.read.set()

        def only_target(change: watchfiles.Change, name: str) -> bool:
            # a removal is read as well: the status then says the file is gone (the channel
            # keeps its game), not the fault of a read before it
            changed = Path(name)
            return changed.name == path.name or changed.resolve() == path.resolve()

        async for _ in watchfiles.awatch(path.parent, watch_filter=only_target, debounce=50, step=10, recursive=False):
            await self._read_followed(path)
