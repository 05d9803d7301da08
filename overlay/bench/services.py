"""``euchre-overlay serve --redis`` processes sharing one Redis, and a channel made ready for a
logger: what ``bench scale``, ``bench faults`` and the scale-out tests drive the same way.

Each process runs with its own data folder on its own port (:func:`.server.start_server`);
which one runs a channel is read from its lease in Redis (``eo:lease:{id}``, held as
``host:pid:random``).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any, Self

from .server import start_server

__all__ = ["Services", "owner_pid", "empty_game", "live_channel"]


def _pid(holder: bytes | str | None) -> int | None:
    """The process id in a lease holder (``host:pid:random``)."""
    if holder is None:
        return None
    return int((holder.decode() if isinstance(holder, bytes) else str(holder)).split(":")[1])


async def owner_pid(url: str, cid: str) -> int | None:
    """The pid of the process holding ``cid``'s lease in the Redis at ``url``."""
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(url)
    try:
        return _pid(await client.get(f"eo:lease:{cid}"))
    finally:
        await client.aclose()


class Services:
    """``serve --redis`` subprocesses sharing the Redis at ``redis_url``, all with ``token``."""

    def __init__(self, redis_url: str, folder: Path, *, token: str) -> None:
        self.redis_url = redis_url
        self.folder = folder
        self.token = token
        self.procs: list[Any] = []
        self.bases: list[str] = []

    async def start(self, n: int, *, demo: bool = False, extra: tuple[str, ...] = ()) -> Self:
        """``n`` more processes (started together; with ``demo``, as ``serve`` starts without
        ``--no-demo``; ``extra``: more ``serve`` options); returns ``self``."""
        started = await asyncio.gather(
            *(
                start_server(str(self.folder / f"p{len(self.procs) + i}"), self.token, extra=("--redis", self.redis_url, *extra), demo=demo)
                for i in range(n)
            )
        )
        for proc, base in started:
            self.procs.append(proc)
            self.bases.append(base)
        return self

    def base_of(self, pid: int) -> str:
        return next(b for p, b in zip(self.procs, self.bases) if p.pid == pid)

    async def owner(self, cid: str, *, timeout: float = 5.0) -> str:
        """The base URL of the process running ``cid`` (waiting while it changes hands).

        Raises:
            AssertionError: no live process holds the lease within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = await owner_pid(self.redis_url, cid)
            alive = {p.pid for p in self.procs if p.returncode is None}
            if pid is not None and pid in alive:
                return self.base_of(pid)
            await asyncio.sleep(0.05)
        raise AssertionError(f"no live process holds {cid}'s lease")

    async def owners(self, ids: list[str]) -> dict[str, str]:
        """channel -> base URL of the live process holding its lease (one Redis call; channels
        without a live holder are left out)."""
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(self.redis_url)
        try:
            held = await client.mget([f"eo:lease:{c}" for c in ids])
        finally:
            await client.aclose()
        by_pid = {p.pid: b for p, b in zip(self.procs, self.bases) if p.returncode is None}
        out = {}
        for cid, h in zip(ids, held):
            pid = _pid(h)
            if pid in by_pid:
                out[cid] = by_pid[pid]
        return out

    async def kill9(self, base: str) -> None:
        """SIGKILL the process at ``base`` (no clean-up: a crash)."""
        proc = self.procs[self.bases.index(base)]
        proc.send_signal(signal.SIGKILL)
        await _ended(proc)

    def alive(self) -> list[str]:
        return [b for p, b in zip(self.procs, self.bases) if p.returncode is None]

    async def stop(self) -> None:
        """SIGTERM every live process; SIGKILL one that has not exited 10 s later.

        Raises:
            RuntimeError: as :func:`_ended` (it never waits for ever).
        """
        for proc in self.procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                proc.kill()
                await _ended(proc)


async def _ended(proc: Any, seconds: float = 10.0) -> None:
    """Until the killed ``proc`` has ended and its output pipe closed (asyncio's ``wait()``
    waits for both).

    Raises:
        RuntimeError: not within ``seconds``: the process ended but a process it started
            still holds its output (it outlived its parent), or it did not end at all.
    """
    try:
        await asyncio.wait_for(proc.wait(), seconds)
    except asyncio.TimeoutError:
        state = "ended, but a process it started still holds its output" if proc.returncode is not None else "did not end"
        raise RuntimeError(f"serve (pid {proc.pid}) {state} {seconds:g} s after SIGKILL") from None


def empty_game(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` before its first deal (the players, no deals, no final score)."""
    return {**doc, "deals": [], "metadata": {k: v for k, v in doc["metadata"].items() if k != "finalScore"}}


async def live_channel(
    session: Any, base: str, cid: str, settings: dict[str, Any], doc: dict[str, Any], *, headers: dict[str, str] | None = None
) -> None:
    """Create channel ``cid`` with ``settings`` at ``base``, give it ``doc`` before its first
    deal and put it live: ready for a logger to post ``doc``'s actions.  The token goes in
    ``headers`` or in the ``session``'s own.

    Raises:
        AssertionError: a request was refused (its body says why).
    """
    async with session.post(f"{base}/api/channels", json={"id": cid, "settings": settings}, headers=headers) as r:
        assert r.status == 201, await r.text()
    async with session.put(f"{base}/api/channels/{cid}/game", data=json.dumps(empty_game(doc)), headers=headers) as r:
        assert r.status == 200, await r.text()
    async with session.post(f"{base}/api/channels/{cid}/control/live", headers=headers) as r:
        assert r.status == 200, await r.text()
