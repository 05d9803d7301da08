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
import errno
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


#: the kernel's and devices' folders: never a game file, and reading one can hand out what
#: the process knows (``/proc/self/environ``) in a parse error or hang (``/dev/zero``)
SYSTEM_DIRS = (Path("/proc"), Path("/sys"), Path("/dev"))


def _system_devices() -> set[int]:
    """The file systems of :data:`SYSTEM_DIRS` (a ``proc`` mounted elsewhere is one of them)."""
    devices = set()
    for folder in SYSTEM_DIRS:
        try:
            devices.add(os.stat(folder).st_dev)
        except OSError:
            pass
    return devices


_SYSTEM_DEVICES = _system_devices()


def check_allowed(path: Path, allowed: Sequence[Path]) -> Path:
    """``path`` resolved; never a system file; with ``allowed`` folders, inside one of them.

    Raises:
        Forbidden: outside every allowed folder (said the same way whether it exists).
        BadRequest: a NUL in the path, a path that cannot be resolved, or one under
            ``/proc``, ``/sys`` or ``/dev`` (after links are followed).
    """
    if "\0" in str(path):
        raise BadRequest("a path cannot hold a NUL character")
    try:
        resolved = path.expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a home folder that does not exist
        raise BadRequest(f"{str(path)[:200]}: cannot be resolved ({exc})") from None
    if allowed and not any(resolved.is_relative_to(Path(a).expanduser().resolve()) for a in allowed):
        raise Forbidden(f"{path}: outside the folders this server may read (serve --allow-dir)")
    system = next((d for d in SYSTEM_DIRS if resolved.is_relative_to(d)), None)
    if system is not None:
        raise BadRequest(f"{path}: is a system file under {system}; only game files are read")
    return resolved


def read_game_file(path: Path, *, cap: int = MAX_INPUT, follow_links: bool = True) -> bytes:
    """The bytes of regular file ``path``, at most ``cap`` (blocking: call off the loop).
    ``follow_links=False``: ``path`` was resolved and checked, so a link in its place now
    was swapped in since and is refused.

    Raises:
        NotFound: no such file.  BadRequest: not a regular file (a FIFO, a device, a folder,
            a ``/proc`` or ``/sys`` file), a link where none may be, or unreadable.
            TooLarge: more than ``cap`` bytes were read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise NotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadRequest(f"{path}: is a directory") from None
    except OSError as exc:
        if not follow_links and exc.errno == errno.ELOOP:
            raise BadRequest(f"{path}: became a link since its path was checked; not read") from None
        raise BadRequest(f"{path}: cannot open ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            raise BadRequest(f"{path}: is {kind_of(mode)}; only regular files are read")
        if st.st_dev in _SYSTEM_DEVICES:
            raise BadRequest(f"{path}: is a system file (proc, sys or dev); only game files are read")
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


async def read_game_file_async(path: Path, *, cap: int = MAX_INPUT, follow_links: bool = True) -> bytes:
    """:func:`read_game_file` in a worker thread (the event loop never reads a file)."""
    return await asyncio.to_thread(read_game_file, path, cap=cap, follow_links=follow_links)
