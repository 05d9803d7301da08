"""Persistence: channels, their games, playheads and settings in one SQLite file (WAL).

Only the event-loop thread uses the connection; writes are small and commit at once, so an
accepted game or action is on disk before the HTTP answer leaves.  Settings documents carry a
revision: a write naming an old revision is refused with the stored document
(:class:`~overlay.errors.StaleRevision`).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import Conflict, NotFound, StaleRevision
from .protocol import ChannelSettings, dump

__all__ = ["Store", "StoredGame", "ChannelRecord", "default_data_dir", "settings_from_text"]

log = logging.getLogger("overlay.store")

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
        return safe, "; ".join(f"{' -> '.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


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


class Store:
    """The SQLite file.  ``path`` may be ``":memory:"`` for tests that need no restart."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(SCHEMA)
        #: channel -> why its stored settings were refused (it runs on defaults until saved)
        self.settings_problems: dict[str, str] = {}

    def close(self) -> None:
        self.db.close()

    @property
    def journal_mode(self) -> str:
        return str(self.db.execute("PRAGMA journal_mode").fetchone()[0])

    # ------------------------------------------------------------------ meta

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # ------------------------------------------------------------------ channels

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

    def delete_channel(self, channel: str) -> None:
        cur = self.db.execute("DELETE FROM channels WHERE id = ?", (channel,))
        if cur.rowcount == 0:
            raise NotFound(f"no channel {channel!r}", channel=channel)

    def channel_ids(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM channels ORDER BY created, id")]

    def channels(self) -> list[ChannelRecord]:
        """Every channel with its game, follow path and playhead (for a restart)."""
        out: list[ChannelRecord] = []
        rows = self.db.execute(
            """SELECT c.id, c.settings, g.data, g.source, g.seq, f.path, p.data
               FROM channels c
               LEFT JOIN games g ON g.channel = c.id
               LEFT JOIN follows f ON f.channel = c.id
               LEFT JOIN playheads p ON p.channel = c.id
               ORDER BY c.created, c.id"""
        ).fetchall()
        for cid, settings, data, source, seq, follow, playhead in rows:
            game = None if data is None else StoredGame(bytes(data), str(source), int(seq))
            out.append(
                ChannelRecord(
                    id=cid,
                    settings=self._settings(cid, settings),
                    game=game,
                    follow=follow,
                    playhead=None if playhead is None else json.loads(playhead),
                )
            )
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

    def put_settings(self, channel: str, doc: ChannelSettings) -> ChannelSettings:
        """Store ``doc`` if it names the current revision; returns it with the next revision.

        Raises:
            StaleRevision: ``doc.revision`` is not the stored one (``current`` = stored doc).
            NotFound: no such channel.
        """
        self.db.execute("BEGIN IMMEDIATE")
        try:
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
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        self.settings_problems.pop(channel, None)
        return new

    # ------------------------------------------------------------------ games, follows, playheads

    def save_game(self, channel: str, data: bytes, *, source: str, seq: int) -> None:
        self.db.execute(
            """INSERT INTO games(channel, data, source, seq, updated) VALUES(?, ?, ?, ?, ?)
               ON CONFLICT(channel) DO UPDATE SET data = excluded.data, source = excluded.source,
               seq = excluded.seq, updated = excluded.updated""",
            (channel, data, source, seq, time.time()),
        )

    def game(self, channel: str) -> StoredGame | None:
        row = self.db.execute("SELECT data, source, seq FROM games WHERE channel = ?", (channel,)).fetchone()
        return None if row is None else StoredGame(bytes(row[0]), str(row[1]), int(row[2]))

    def set_follow(self, channel: str, path: str | None) -> None:
        if path is None:
            self.db.execute("DELETE FROM follows WHERE channel = ?", (channel,))
        else:
            self.db.execute(
                "INSERT INTO follows(channel, path) VALUES(?, ?) ON CONFLICT(channel) DO UPDATE SET path = excluded.path",
                (channel, path),
            )

    def save_playhead(self, channel: str, data: dict[str, Any]) -> None:
        self.db.execute(
            """INSERT INTO playheads(channel, data, updated) VALUES(?, ?, ?)
               ON CONFLICT(channel) DO UPDATE SET data = excluded.data, updated = excluded.updated""",
            (channel, json.dumps(data), time.time()),
        )
