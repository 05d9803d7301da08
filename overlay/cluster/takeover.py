"""What a process reads from Redis to run a channel it takes over (``serve --redis``).

:func:`read` fetches what the channel's last owner left (:mod:`overlay.cluster.redisstore` writes
it): the settings, the last snapshot of the game and the stream entries after it, the
action log, the playhead, the followed file, the page groups, the studio's control key and the
channel's feed keys (hashed).
:func:`rebuild` replays the game from the snapshot and the entries; :func:`unreadable`
says why this process cannot follow the channel's file at its stored path.
:class:`overlay.cluster.leases.Cluster` decides when a channel is taken and runs it.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from renderer.settings import ChannelSettings

if TYPE_CHECKING:
    from redis.asyncio import Redis

from ..service import feed
from ..service.director import Playhead
from ..service.protocol import ActionIn
from ..service.store import settings_from_text
from .redisstore import Keys, text_of

__all__ = ["Saved", "read", "rebuild", "unreadable"]

log = logging.getLogger("overlay.cluster")


@dataclass
class Saved:
    """A channel as Redis holds it, decoded (the game is replayed by :func:`rebuild`)."""

    settings: ChannelSettings
    problem: str | None  # why the stored settings were refused (the channel runs on defaults)
    snap: dict[str, Any]  # the last snapshot's fields (data, source, seq, upto), or empty
    entries: list[Any]  # the stream entries after the snapshot, oldest first
    actions: dict[int, str]  # seq -> the action's JSON
    playhead: Playhead | None
    playhead_error: str | None  # why the stored playhead cannot be read (it starts at step 0)
    follow: str | None
    groups: dict[bytes, bytes]  # page group -> expiry (ms), as announced by the processes
    control: str  # the studio's control key ("" when none)
    feedkeys: str = ""  # the channel's feed keys, hashed, as overlay.service.feedkeys stores them ("" when none)


async def read(client: Redis, cid: str) -> Saved:
    """Everything channel ``cid``'s next owner needs, read from Redis.

    Raises:
        redis.exceptions.RedisError: Redis unreachable.
    """
    k = Keys(cid)
    pipe = client.pipeline(transaction=False)
    pipe.get(k.settings)
    pipe.hgetall(k.snap)
    pipe.get(k.playhead)
    pipe.get(k.follow)
    pipe.hgetall(k.actions)
    pipe.hgetall(k.groups)
    pipe.get(k.control)
    pipe.get(k.feedkeys)
    raw, snap_raw, playhead_raw, follow, actions, groups, control, feedkeys = await pipe.execute()
    snap = {key.decode(): v for key, v in snap_raw.items()}
    start = "(" + snap["upto"].decode() if snap.get("upto") else "-"
    entries = await client.xrange(k.log, min=start, max="+")
    settings, problem = settings_from_text(raw.decode()) if raw else (ChannelSettings(title=cid), None)
    playhead_error = None
    try:
        playhead = Playhead.from_json(json.loads(playhead_raw)) if playhead_raw else None
    except (ValueError, TypeError, KeyError) as exc:
        playhead, playhead_error = None, f"channel {cid!r}: the stored playhead cannot be read ({exc!r}); starting at step 0"
    return Saved(
        settings=settings,
        problem=problem,
        snap=snap,
        entries=list(entries or ()),
        actions={int(s): d.decode() for s, d in actions.items()},
        playhead=playhead,
        playhead_error=playhead_error,
        follow=follow.decode() if follow else None,
        groups=groups,
        control=control.decode() if control else "",
        feedkeys=feedkeys.decode() if feedkeys else "",
    )


def unreadable(me: str, cid: str, path: str) -> str | None:
    """Why process ``me`` cannot follow ``cid``'s file at ``path`` (None: it can).  The
    path was valid on the process that started following it; every process must see
    the file at the same path."""
    p = Path(path)
    if not p.parent.is_dir():
        why = "its folder is not there"
    elif not p.exists():
        why = "no such file"
    elif not p.is_file():
        why = "not a regular file"
    elif not os.access(p, os.R_OK):
        why = "permission denied"
    else:
        return None
    return (
        f"channel {cid!r}: follows {path}, which process {me} cannot read ({why}); "
        "a followed file must be at the same path on every process (docs/scale-out.md)"
    )


def rebuild(cid: str, snap: dict[str, Any], entries: list[Any]) -> tuple[feed.Loaded | None, int, str | None]:
    """The channel's game: the snapshot, then every stream entry after it, replayed; with
    the seq of the last entry, and why the replay stopped early (None: it did not)."""
    game: feed.Loaded | None = None
    seq = 0
    error: str | None = None
    try:
        if snap.get("data"):
            game = feed.load_bytes(snap["data"], source=snap["source"].decode(), strict=False)
            seq = int(snap["seq"])
        for _, fields in entries:
            f = {key.decode(): v for key, v in fields.items()}
            kind = f["kind"].decode()
            if kind == "action":
                action = ActionIn.model_validate_json(f["data"])
                source = game.source if game else f"{cid}.egn"
                game, _ = feed.push_action(game, action, source=source)
                seq = action.seq
            else:
                game = feed.load_bytes(
                    f["data"], source=f["source"].decode(), strict=False, previous=game if kind == "put" else None
                )
                seq = int(f["seq"])
    except Exception as exc:  # a stored entry the engine refuses now: keep what replayed
        error = f"channel {cid!r}: the stored game cannot be replayed ({type(exc).__name__}: {str(exc)[:200]})"
        log.error("%s", error)
    return game, seq, error
