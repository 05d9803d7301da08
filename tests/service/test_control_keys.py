"""Issue 22 item 5: a Stream Deck control key ends with its channel and is stored hashed.

Before the fix (SQLite mode) the key sat in the clear in the ``meta`` table, and deleting a
channel left it there: a new channel of the same id was controlled by the old links."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service.keys import HUB
from overlay.service.store import CONTROL_KEY, Store
from tests.support import AUTH, TOKEN, make_channel


async def _key(client: Any, cid: str) -> str:
    r = await client.post(f"/studio/api/channels/{cid}/control-key", headers=AUTH)
    assert r.status == 200, await r.text()
    key: str = (await r.json())["key"]
    return key


async def test_a_control_key_ends_with_its_channel(client: Any) -> None:
    await make_channel(client, "ka")
    key = await _key(client, "ka")
    assert (await client.get(f"/studio/link/ka/pause?key={key}")).status == 200
    r = await client.delete("/api/channels/ka", headers=AUTH)
    assert r.status in (200, 204), await r.text()
    await make_channel(client, "ka")
    r = await client.get(f"/studio/link/ka/pause?key={key}")
    assert r.status == 401, "the deleted channel's link controls the new channel of the same id"
    # the new channel has no key until one is made, and then only the new one works
    assert (await (await client.get("/studio/api/channels/ka/control-key", headers=AUTH)).json())["set"] is False
    new = await _key(client, "ka")
    assert (await client.get(f"/studio/link/ka/pause?key={new}")).status == 200
    assert (await client.get(f"/studio/link/ka/pause?key={key}")).status == 401


async def test_a_control_key_is_stored_hashed_and_shown_once(client: Any, tmp_path: Path) -> None:
    await make_channel(client, "ka")
    key = await _key(client, "ka")
    stored = client.server.app[HUB].store.meta(CONTROL_KEY + "ka")
    assert stored and key not in stored and stored.startswith("sha256:")
    # a GET says a key is set but cannot show it any more
    body = await (await client.get("/studio/api/channels/ka/control-key", headers=AUTH)).json()
    assert body["key"] is None and body["set"] is True and body["links"] == {}
    db = sqlite3.connect(tmp_path / "overlay.sqlite3")
    try:
        dump = "\n".join(db.iterdump())
    finally:
        db.close()
    assert key not in dump


async def test_keys_of_an_older_database_are_hashed_and_those_of_deleted_channels_dropped(aiohttp_client: Any, tmp_path: Path) -> None:
    """A database written before the fix: a clear key of a live channel keeps working (and is
    hashed at start-up), the clear key of a deleted channel is dropped."""
    store = Store(tmp_path / "overlay.sqlite3")
    store.create_channel("live")
    store.set_meta(CONTROL_KEY + "live", "clear-live-key")
    store.set_meta(CONTROL_KEY + "gone", "clear-gone-key")
    store.close()
    client = await aiohttp_client(create_app(ServerSettings(data_dir=tmp_path, token=TOKEN, demo=False)))
    hub = client.server.app[HUB]
    assert hub.store.meta(CONTROL_KEY + "gone") is None
    assert (hub.store.meta(CONTROL_KEY + "live") or "").startswith("sha256:")
    assert (await client.get("/studio/link/live/pause?key=clear-live-key")).status == 200
    await make_channel(client, "gone")
    assert (await client.get("/studio/link/gone/pause?key=clear-gone-key")).status == 401
