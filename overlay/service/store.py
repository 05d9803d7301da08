"""Persistence: channels, their games, playheads and settings in one SQLite file (WAL).

Only the event-loop thread uses the main connection; writes are small and commit at once.
With ``synchronous="FULL"`` (the default) an accepted game or action is on disk before the
HTTP answer leaves, through a process kill and a power cut alike.  SQLite alone makes it
durable: the main connection commits without waiting for the disk (``synchronous=NORMAL``,
so the loop never waits on an fsync) and :meth:`Store.sync` asks a second SQLite connection,
used only by one worker thread and set to ``synchronous=FULL``, to checkpoint the WAL, which
fsyncs the WAL before copying it.  Concurrent answers share one such sync (group commit).
Nothing in the serving process opens the database file outside SQLite: closing any other
descriptor of it would drop the POSIX locks SQLite holds, and the next process to open and
close the database would delete the WAL the server is still writing into (SQLite's "How To
Corrupt An SQLite Database File", 2.2).  ``"NORMAL"`` skips the sync: a kill loses nothing,
a power cut may lose the last acknowledged writes.

A serving process holds its data folder (:class:`FolderLock`: ``overlay.sqlite3.lock``,
an ``flock`` with the holder's pid in it); a second ``serve`` on the same folder refuses to
start with one line naming the holder.  Settings documents carry a revision: a write naming
an old revision is refused with the stored document (:class:`~overlay.service.errors.StaleRevision`).

Faults are typed: a database that cannot be opened or read raises :class:`StoreBroken`
(one line naming the file and the fault; the CLI exits 2); a write that fails (disk full,
read-only, I/O error) raises :class:`~overlay.service.errors.StoreFull` (507) or
:class:`~overlay.service.errors.StoreFailed` (503), and callers change memory only after it
succeeded.  One unreadable channel row does not stop the others: :meth:`Store.channels`
returns it as quarantined, with the fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from renderer.settings import ChannelSettings

from .errors import Conflict, NotFound, StaleRevision, StoreFailed, StoreFull, excerpt
from .protocol import dump

__all__ = ["Store", "StoreBroken", "FolderHeld", "FolderLock", "folder_holder", "StoredGame", "ChannelRecord", "CONTROL_KEY", "FEED_KEYS", "HASHED", "control_key_hash", "default_data_dir", "secure_folder", "settings_from_text"]

#: prefix of the meta entry holding a channel's control key (the studio's links), by channel id
CONTROL_KEY = "control-key:"
#: prefix of the meta entry holding a channel's feed keys (hashed: overlay.service.feedkeys)
FEED_KEYS = "feed-keys:"
#: how a stored control key starts: its SHA-256 is kept, never the key
HASHED = "sha256:"


def control_key_hash(key: str) -> str:
    """What the store keeps of a control key (as of the API token: its SHA-256; a random
    18-byte key needs no salt or slow hash)."""
    return HASHED + hashlib.sha256(key.encode()).hexdigest()

log = logging.getLogger("overlay.service.store")

F = TypeVar("F", bound=Callable[..., Any])


#: faults a checkpoint meets only while copying into the database file, after its WAL fsync
_COPY_FAULTS = frozenset({"SQLITE_FULL", "SQLITE_IOERR_WRITE"})


class StoreBroken(Exception):
    """The database cannot be opened or read at all (corrupt, truncated, not a database,
    unreadable folder): the service cannot start on it."""


class FolderHeld(StoreBroken):
    """Another live ``serve`` holds this data folder (two writers would each believe the
    other's WAL is stale)."""


def _lock_path(db_path: str) -> str:
    return db_path + ".lock"


def folder_holder(db_path: str | Path) -> int | None:
    """The pid of the live server holding the database's folder, or None when none does
    (tried without taking it: a held ``flock`` cannot be taken)."""
    path = _lock_path(str(db_path))
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 64).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class FolderLock:
    """The serving process's hold on its database: ``<db>.lock``, locked with ``flock`` (not
    POSIX record locks, which any ``close()`` in the process would drop) and holding the
    pid.  Released by :meth:`release` or when the process dies (the kernel drops it)."""

    def __init__(self, db_path: str | Path) -> None:
        """Raises:
        FolderHeld: a live process holds it (the message names its pid and the file).
        StoreBroken: the lock file cannot be made."""
        self.path = _lock_path(str(db_path))
        try:
            self.fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreBroken(f"{self.path}: cannot make the lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(self.fd, 64).decode("ascii", "replace").strip()
            os.close(self.fd)
            self.fd = None
            who = f"pid {text}" if text.isdigit() else "another process"
            raise FolderHeld(
                f"{db_path}: already served by {who} (lock {self.path}); stop that server or use another --data"
            ) from None
        os.ftruncate(self.fd, 0)
        os.write(self.fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing the last descriptor releases the flock
            self.fd = None


def secure_folder(folder: Path) -> None:
    """Create the data folder for its owner only (0700; an existing folder loses its group
    and other bits): it holds the token hash and every game."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):  # a folder we do not own: leave its mode alone
        mode = folder.stat().st_mode & 0o777
        if mode & 0o077:
            os.chmod(folder, mode & 0o700)  # others lose access; the owner keeps what it had


def _write_fault(path: str, exc: sqlite3.Error) -> StoreFailed:
    """The typed refusal for a failed write (memory is untouched: callers write first)."""
    code = getattr(exc, "sqlite_errorname", "") or type(exc).__name__
    text = f"{path}: the database refused the write ({code}: {exc}); nothing was changed"
    if isinstance(exc, sqlite3.OperationalError) and ("full" in str(exc) or code == "SQLITE_FULL"):
        return StoreFull(text)
    return StoreFailed(text)


class RefusalLog:
    """The server's log of refused writes, for whoever watches its terminal: each caller gets
    its 507 or 503, but a full disk during a show must also be seen where the server runs.
    The first refusal is logged at once, then at most one line a minute with the count (a
    logger retrying every second must not flood the log), and the first write accepted after
    them says so."""

    EVERY = 60.0

    def __init__(self) -> None:
        self.since: float | None = None  # time.time() of the first refusal not yet followed by a write
        self.refused = 0  # since then
        self.unlogged = 0
        self.logged_at = 0.0

    def refusal(self, fault: StoreFailed, now: float | None = None) -> StoreFailed:
        now = time.time() if now is None else now
        if self.since is None:
            self.since = now
        self.refused += 1
        if self.refused == 1 or now - self.logged_at >= self.EVERY:
            more = f" ({self.unlogged} more refused since the last line)" if self.unlogged else ""
            log.error("%s%s", fault, more)
            self.logged_at, self.unlogged = now, 0
        else:
            self.unlogged += 1
        return fault

    def accepted(self) -> None:
        if self.since is None:
            return
        log.warning("writes accepted again: %d refused since %s", self.refused, time.strftime("%H:%M:%S", time.localtime(self.since)))
        self.since, self.refused, self.unlogged = None, 0, 0


def _writes(method: F) -> F:
    """Turn a SQLite fault in a write into :class:`StoreFailed`/:class:`StoreFull`."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            result = method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            if self.db.in_transaction and self.depth == 0:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise self._refused(exc) from exc
        self.written += 1
        self.refusals.accepted()
        return result

    return wrapper  # type: ignore[return-value]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS channels (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    revision INTEGER NOT NULL,
    settings TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    channel TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
    data BLOB NOT NULL,
    source TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS follows (
    channel TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
    path TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS actions (
    channel TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (channel, seq)
);
CREATE TABLE IF NOT EXISTS playheads (
    channel TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
    data TEXT NOT NULL,
    updated REAL NOT NULL
);
"""


def settings_from_text(text: str) -> tuple[ChannelSettings, str | None]:
    """A stored settings document and, when the current models refuse it (written by an older
    version), why: it then loads as the defaults with its revision and title kept, so no
    stored setting can put a channel into a failing loop.  The refusal is logged."""
    raw = json.loads(text)
    try:
        return ChannelSettings.model_validate(raw), None
    except ValidationError as exc:
        log.error("stored settings refused, using defaults: %s", exc)
        revision = raw.get("revision", 0) if isinstance(raw, dict) else 0
        title = raw.get("title", "") if isinstance(raw, dict) else ""
        safe = ChannelSettings(
            revision=revision if isinstance(revision, int) and revision >= 0 else 0,
            title=title[:128] if isinstance(title, str) else "",
        )
        return safe, excerpt("; ".join(f"{' -> '.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:20]))


def default_data_dir() -> Path:
    """The user's data folder for this program (XDG on Linux, AppData, Application Support)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "euchre-overlay"


@dataclass(frozen=True)
class StoredGame:
    data: bytes
    source: str
    seq: int


@dataclass(frozen=True)
class ChannelRecord:
    id: str
    settings: ChannelSettings
    game: StoredGame | None
    follow: str | None
    playhead: dict[str, Any] | None
    #: why the channel's stored rows could not be read (the channel starts quarantined)
    fault: str | None = None
    #: the actions logged after ``game`` (its seq), oldest first: ``(seq, JSON)``, replayed on it
    actions: tuple[tuple[int, str], ...] = ()


class Store:
    """The SQLite file.  ``path`` may be ``":memory:"`` for tests that need no restart."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL", hold: bool = False) -> None:
        """Open (or create) the database and check it.  ``hold``: take the folder's
        :class:`FolderLock` first (the serving process; released by :meth:`close`).

        Raises:
            FolderHeld: ``hold`` and a live server already holds the folder.
            StoreBroken: the file is not a database, is corrupt or truncated, or its folder
                cannot be written (one line naming the file and the fault).
        """
        if synchronous.upper() not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous {synchronous!r} is not FULL or NORMAL")
        self.path = str(path)
        self.depth = 0  # nesting of transaction()
        #: FULL: the main connection commits without waiting for the disk (NORMAL) and
        #: :meth:`sync` has SQLite fsync the WAL in a worker thread before answers leave
        self.durable = synchronous.upper() == "FULL" and self.path != ":memory:"
        self.written = 0  # commits so far
        self.refusals = RefusalLog()  # refused writes, in the server's log
        self.synced = 0  # commits known durable
        self._syncing: asyncio.Future[None] | None = None
        self._syncer: sqlite3.Connection | None = None  # used only inside _sync_lock
        self._sync_lock = threading.Lock()
        self.lock: FolderLock | None = None
        try:
            if self.path != ":memory:":
                secure_folder(Path(self.path).parent)
                if hold:
                    self.lock = FolderLock(self.path)
                fresh = not Path(self.path).exists()
            self.db = sqlite3.connect(self.path, isolation_level=None)
            if self.path != ":memory:" and fresh:
                with contextlib.suppress(OSError):
                    os.chmod(self.path, 0o600)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA busy_timeout=5000")
            self.db.executescript(SCHEMA)
            check = self.db.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise StoreBroken(f"{self.path}: the database is corrupt (quick_check: {check and check[0]})")
        except BaseException as exc:
            if self.lock is not None:
                self.lock.release()
            if isinstance(exc, sqlite3.Error):
                raise StoreBroken(f"{self.path}: cannot open the database: {exc}") from None
            if isinstance(exc, OSError):
                # the data folder given is a file, or sits under one: say which
                folder = next((p for p in Path(self.path).parents if p.exists()), None)
                if folder is not None and not folder.is_dir():
                    raise StoreBroken(f"{self.path}: cannot open the database: {folder} is a file, not a folder (--data names a folder)") from None
                raise StoreBroken(f"{self.path}: cannot open the database: {exc.strerror or exc}") from None
            raise
        #: channel -> why its stored settings were refused (it runs on defaults until saved)
        self.settings_problems: dict[str, str] = {}
        if hold:
            try:
                self.tidy_control_keys()
            except StoreFailed as exc:  # a read-only database still serves
                log.warning("control keys not tidied: %s", exc)

    def close(self) -> None:
        with self._sync_lock:
            if self._syncer is not None:
                self._syncer.close()
                self._syncer = None
        self.db.close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _refused(self, exc: sqlite3.Error) -> StoreFailed:
        """The typed refusal of a failed write, noted in the server's log."""
        return self.refusals.refusal(_write_fault(self.path, exc))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write inside commits together or not at all.

        Raises:
            StoreFailed, StoreFull: the database refused (everything rolled back).
        """
        if self.depth:
            self.depth += 1
            try:
                yield
            finally:
                self.depth -= 1
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._refused(exc) from exc
        self.depth = 1
        try:
            yield
        except BaseException:
            self.depth = 0
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise
        self.depth = 0
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise self._refused(exc) from exc
        self.written += 1
        self.refusals.accepted()

    async def sync(self) -> None:
        """Make every committed write durable before an answer leaves (SQLite fsyncs the
        WAL, in a worker thread); a no-op with ``synchronous=NORMAL``.  Callers waiting
        together share one sync (group commit).

        Raises:
            StoreFailed: the sync failed (an I/O error).
        """
        while self.durable and self.written > self.synced:
            if self._syncing is None or self._syncing.done():
                self._syncing = asyncio.ensure_future(self._sync(self.written))
            task = self._syncing
            await asyncio.shield(task)

    async def _sync(self, upto: int) -> None:
        try:
            await asyncio.to_thread(self.sync_now)
        except sqlite3.Error as exc:
            # the commit itself succeeded (it is in the WAL); whether it reached the disk is
            # not known: the answer says so rather than claim it
            text = f"{self.path}: the write was committed but could not be confirmed durable ({exc})"
            raise self.refusals.refusal(StoreFull(text) if "full" in str(exc) else StoreFailed(text)) from None
        self.synced = max(self.synced, upto)

    def sync_now(self) -> None:
        """Have SQLite fsync every commit made so far (blocking; :meth:`sync` runs it in a
        worker thread).  A second connection with ``synchronous=FULL`` checkpoints the WAL:
        SQLite fsyncs the WAL before it copies frames, then the database file.  Where a
        reader in another process pins the WAL so that nothing can be copied (SQLite then
        skips the fsync), a one-row commit on that connection fsyncs the WAL instead.  The
        database file is never opened outside SQLite.

        Raises:
            sqlite3.Error: SQLite could not sync (an I/O error, the disk).
        """
        with self._sync_lock:
            if self._syncer is None:
                self._syncer = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self._syncer.execute("PRAGMA synchronous=FULL")
                self._syncer.execute("PRAGMA busy_timeout=5000")
            try:
                row = self._syncer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                busy, frames, copied = (int(v) for v in row) if row is not None else (1, 1, 0)
            except sqlite3.Error as exc:
                if getattr(exc, "sqlite_errorname", "") in _COPY_FAULTS:
                    # the checkpoint fsyncs the WAL before it copies a frame (walCheckpoint in
                    # SQLite's wal.c): a copy that failed on a full disk left the WAL synced,
                    # and another commit would need the space that is missing
                    return
                busy, frames, copied = 1, 1, 0
            if busy or copied < frames:
                # the checkpoint could not copy every frame: it may not have synced the WAL
                self._syncer.execute(
                    "INSERT INTO meta(key, value) VALUES('synced', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (repr(time.time()),),
                )

    @property
    def journal_mode(self) -> str:
        return str(self.db.execute("PRAGMA journal_mode").fetchone()[0])

    # ------------------------------------------------------------------ meta

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @_writes
    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    @_writes
    def delete_meta(self, key: str) -> None:
        self.db.execute("DELETE FROM meta WHERE key = ?", (key,))

    # ------------------------------------------------------------------ channels

    @_writes
    def create_channel(self, channel: str, settings: ChannelSettings | None = None) -> ChannelSettings:
        doc = (settings or ChannelSettings()).model_copy(update={"revision": 1})
        try:
            self.db.execute(
                "INSERT INTO channels(id, created, revision, settings) VALUES(?, ?, ?, ?)",
                (channel, time.time(), 1, json.dumps(dump(doc))),
            )
        except sqlite3.IntegrityError:
            raise Conflict(f"channel {channel!r} already exists", channel=channel) from None
        return doc

    @_writes
    def delete_channel(self, channel: str) -> None:
        """Delete the channel's rows, its control key and its feed keys (the studio's links
        and the loggers' keys end with it: a new channel of the same id does not inherit them)."""
        with self.transaction():
            cur = self.db.execute("DELETE FROM channels WHERE id = ?", (channel,))
            if cur.rowcount == 0:
                raise NotFound(f"no channel {channel!r}", channel=channel)
            self.db.execute("DELETE FROM meta WHERE key IN (?, ?)", (CONTROL_KEY + channel, FEED_KEYS + channel))

    def tidy_control_keys(self) -> None:
        """Keys of a database written before keys were bound to their channel and hashed:
        drop those of deleted channels, keep only the hash of the others."""
        rows = self.db.execute("SELECT key, value FROM meta WHERE key LIKE 'control-key:%'").fetchall()
        ids = set(self.channel_ids())
        for key, value in rows:
            if not key.startswith(CONTROL_KEY):
                continue
            # this file's own rows (a subclass's write-through is not set up yet)
            if key[len(CONTROL_KEY) :] not in ids:
                Store.delete_meta(self, key)
            elif value and not value.startswith(HASHED):
                Store.set_meta(self, key, control_key_hash(value))

    def channel_ids(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM channels ORDER BY created, id")]

    def channels(self) -> list[ChannelRecord]:
        """Every channel with its game (the last snapshot and the actions logged after it),
        follow path and playhead (for a restart); a channel
        whose rows cannot be read comes back with ``fault`` set and safe defaults.

        Raises:
            StoreBroken: the tables themselves cannot be read.
        """
        try:
            rows = self.db.execute(
                """SELECT c.id, c.settings, g.data, g.source, g.seq, f.path, p.data
                   FROM channels c
                   LEFT JOIN games g ON g.channel = c.id
                   LEFT JOIN follows f ON f.channel = c.id
                   LEFT JOIN playheads p ON p.channel = c.id
                   ORDER BY c.created, c.id"""
            ).fetchall()
            # the action log past each game's snapshot (overlay.service.record)
            logged = self.db.execute(
                """SELECT a.channel, a.seq, a.data FROM actions a JOIN games g ON g.channel = a.channel
                   WHERE a.seq > g.seq ORDER BY a.channel, a.seq"""
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreBroken(f"{self.path}: cannot read the channels: {exc}") from None
        after: dict[str, list[tuple[int, str]]] = {}
        for cid, seq, data in logged:
            after.setdefault(str(cid), []).append((int(seq), str(data)))
        out: list[ChannelRecord] = []
        for cid, settings, data, source, seq, follow, playhead in rows:
            try:
                game = None if data is None else StoredGame(bytes(data), str(source), int(seq))
                record = ChannelRecord(
                    id=str(cid),
                    settings=self._settings(str(cid), settings),
                    game=game,
                    follow=None if follow is None else str(follow),
                    playhead=None if playhead is None else _object(json.loads(playhead)),
                    actions=tuple(after.get(str(cid), ())),
                )
            except (ValueError, TypeError, ValidationError) as exc:
                fault = f"{self.path}: channel {cid!r}: a stored row cannot be read ({type(exc).__name__}: {str(exc)[:200]})"
                record = ChannelRecord(str(cid), ChannelSettings(), None, None, None, fault=fault)
            out.append(record)
        return out

    # ------------------------------------------------------------------ settings

    def settings(self, channel: str) -> ChannelSettings:
        row = self.db.execute("SELECT settings FROM channels WHERE id = ?", (channel,)).fetchone()
        if row is None:
            raise NotFound(f"no channel {channel!r}", channel=channel)
        return self._settings(channel, row[0])

    def _settings(self, channel: str, text: str) -> ChannelSettings:
        doc, problem = settings_from_text(text)
        if problem is not None:
            self.settings_problems[channel] = problem
        return doc

    @_writes
    def put_settings(self, channel: str, doc: ChannelSettings) -> ChannelSettings:
        """Store ``doc`` if it names the current revision; returns it with the next revision.

        Raises:
            StaleRevision: ``doc.revision`` is not the stored one (``current`` = stored doc).
            NotFound: no such channel.
        """
        with self.transaction():
            current = self.settings(channel)
            if doc.revision != current.revision:
                raise StaleRevision(
                    f"channel {channel!r}: settings revision {doc.revision} is stale, current is {current.revision}",
                    current=dump(current),
                )
            new = doc.model_copy(update={"revision": current.revision + 1})
            self.db.execute(
                "UPDATE channels SET revision = ?, settings = ? WHERE id = ?",
                (new.revision, json.dumps(dump(new)), channel),
            )
        self.settings_problems.pop(channel, None)
        return new

    # ------------------------------------------------------------------ games, follows, playheads

    @_writes
    def save_game(self, channel: str, data: bytes, *, source: str, seq: int) -> None:
        self.db.execute(
            """INSERT INTO games(channel, data, source, seq, updated) VALUES(?, ?, ?, ?, ?)
               ON CONFLICT(channel) DO UPDATE SET data = excluded.data, source = excluded.source,
               seq = excluded.seq, updated = excluded.updated""",
            (channel, data, source, seq, time.time()),
        )

    @_writes
    def log_action(self, channel: str, seq: int, data: str) -> None:
        """Remember the action accepted under ``seq`` (a resend with other content is refused)."""
        self.db.execute("INSERT OR REPLACE INTO actions(channel, seq, data) VALUES(?, ?, ?)", (channel, seq, data))

    @_writes
    def clear_actions(self, channel: str) -> None:
        """Forget the channel's actions (a different game starts its numbering again)."""
        self.db.execute("DELETE FROM actions WHERE channel = ?", (channel,))

    def action(self, channel: str, seq: int) -> str | None:
        """The action accepted under ``seq`` (its JSON), if it was logged."""
        row = self.db.execute("SELECT data FROM actions WHERE channel = ? AND seq = ?", (channel, seq)).fetchone()
        return None if row is None else str(row[0])

    def game(self, channel: str) -> StoredGame | None:
        row = self.db.execute("SELECT data, source, seq FROM games WHERE channel = ?", (channel,)).fetchone()
        return None if row is None else StoredGame(bytes(row[0]), str(row[1]), int(row[2]))

    @_writes
    def set_follow(self, channel: str, path: str | None) -> None:
        if path is None:
            self.db.execute("DELETE FROM follows WHERE channel = ?", (channel,))
        else:
            self.db.execute(
                "INSERT INTO follows(channel, path) VALUES(?, ?) ON CONFLICT(channel) DO UPDATE SET path = excluded.path",
                (channel, path),
            )

    @_writes
    def save_playhead(self, channel: str, data: dict[str, Any]) -> None:
        self.db.execute(
            """INSERT INTO playheads(channel, data, updated) VALUES(?, ?, ?)
               ON CONFLICT(channel) DO UPDATE SET data = excluded.data, updated = excluded.updated""",
            (channel, json.dumps(data), time.time()),
        )


def _object(value: Any) -> dict[str, Any]:
    """A stored JSON object (a playhead row that holds anything else is a fault)."""
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, found {type(value).__name__}")
    return value
