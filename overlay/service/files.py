"""Game files named by a client (``load``, ``follow``): regular files only, read off the
event loop, the size cap enforced on the bytes read.

A FIFO would block the reading thread (and, read on the loop, the whole server); a device
such as ``/dev/zero`` never ends; ``st_size`` is 0 for ``/dev`` and ``/proc`` files.  So the
file is opened non-blocking, checked to be a regular file on the open descriptor (no race
with a rename), and read in chunks up to :data:`~engine.load.MAX_INPUT` + 1 bytes.  With
allowed folders configured (``serve --allow-dir``), a path outside them is refused with the
same answer whether it exists or not.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from engine.load import MAX_INPUT

from .errors import BadRequest, Forbidden, NotFound, TooLarge

__all__ = ["read_game_file", "read_game_file_async", "check_allowed", "kind_of"]

_CHUNK = 1 << 20


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` is, in words (for a refusal)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def check_allowed(path: Path, allowed: Sequence[Path]) -> Path:
    """``path`` resolved; with ``allowed`` folders, it must lie inside one of them.

    Raises:
        Forbidden: outside every allowed folder (said the same way whether it exists).
        BadRequest: a NUL in the path, or a path that cannot be resolved.
    """
    if "\0" in str(path):
        raise BadRequest("a path cannot hold a NUL character")
    try:
        resolved = path.expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a home folder that does not exist
        raise BadRequest(f"{str(path)[:200]}: cannot be resolved ({exc})") from None
    if allowed and not any(resolved.is_relative_to(Path(a).expanduser().resolve()) for a in allowed):
        raise Forbidden(f"{path}: outside the folders this server may read (serve --allow-dir)")
    return resolved


def read_game_file(path: Path, *, cap: int = MAX_INPUT) -> bytes:
    """The bytes of regular file ``path``, at most ``cap`` (blocking: call off the loop).

    Raises:
        NotFound: no such file.  BadRequest: not a regular file (a FIFO, a device, a folder),
            or unreadable.  TooLarge: more than ``cap`` bytes were read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise NotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadRequest(f"{path}: is a directory") from None
    except OSError as exc:
        raise BadRequest(f"{path}: cannot open ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BadRequest(f"{path}: is {kind_of(mode)}; only regular files are read")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise TooLarge(f"{path}: over the {cap} byte cap")
        return b"".join(chunks)
    except OSError as exc:
        raise BadRequest(f"{path}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


async def read_game_file_async(path: Path, *, cap: int = MAX_INPUT) -> bytes:
    """:func:`read_game_file` in a worker thread (the event loop never reads a file)."""
    return await asyncio.to_thread(read_game_file, path, cap=cap)
