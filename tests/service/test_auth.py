"""The API token in process (pytest-aiohttp): what needs it, how it is given, where it comes from;
the app state under typed keys."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from overlay.service.analysis import LiveAnalysis
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service import keys
from overlay.service.guard import Guard
from overlay.service.hub import Hub
from overlay.service.auth import token_hash
from overlay.service.keys import STORE, TOKEN, TOKEN_CREATED
from overlay.service.renders import Renders
from overlay.service.store import Store
from tests.support import AUTH, game, make_channel
from tests.support import TOKEN as TOKEN_VALUE


PROTECTED = [
    ("GET", "/api/status"),
    ("GET", "/api/channels"),
    ("POST", "/api/channels"),
    ("GET", "/api/channels/t1"),
    ("DELETE", "/api/channels/t1"),
    ("PUT", "/api/channels/t1/game"),
    ("POST", "/api/channels/t1/game"),
    ("POST", "/api/channels/t1/load"),
    ("POST", "/api/channels/t1/actions"),
    ("GET", "/api/channels/t1/feed"),
    ("POST", "/api/channels/t1/follow"),
    ("DELETE", "/api/channels/t1/follow"),
    ("POST", "/api/channels/t1/control"),
    ("POST", "/api/channels/t1/control/play"),
    ("GET", "/api/channels/t1/settings"),
    ("PUT", "/api/channels/t1/settings"),
    ("GET", "/api/channels/t1/status"),
]


@pytest.mark.parametrize("method, path", PROTECTED)
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"X-Token": "nope"}])
async def test_control_and_feed_need_the_token(client: Any, method: str, path: str, headers: dict[str, str]) -> None:
    await make_channel(client)
    r = await client.request(method, path, headers=headers)
    assert r.status == 401
    body = await r.json()
    assert body["kind"] == "unauthorized" and "token" in body["error"]


@pytest.mark.parametrize(
    "how",
    [{"headers": AUTH}, {"headers": {"X-Token": TOKEN_VALUE}}, {"params": {"token": TOKEN_VALUE}}],
)
async def test_token_accepted_three_ways(client: Any, how: dict[str, Any]) -> None:
    r = await client.get("/api/channels", **how)
    assert r.status == 200
    assert (await r.json()) == {"channels": []}


@pytest.mark.parametrize(
    "path, kind",
    [
        ("/overlay/t1", "text/html"),
        ("/overlay/t1?output=clean&width=3840&height=2160", "text/html"),
        ("/api/channels/t1/state", "application/json"),
        ("/api/channels/t1/state?output=clean", "application/json"),
        ("/static/overlay.js", "application/javascript"),
        ("/fonts/bold.ttf", "font/ttf"),
        ("/", "text/plain"),
    ],
)
async def test_read_only_endpoints_need_no_token(client: Any, path: str, kind: str) -> None:
    await make_channel(client, doc=game())
    r = await client.get(path)
    assert r.status == 200, await r.text()
    assert r.content_type == kind
    assert len(await r.read()) > 0


async def test_token_created_on_first_start_and_kept(tmp_path: Path) -> None:
    s = ServerSettings(data_dir=tmp_path, demo=False)
    app1 = create_app(s)
    created = app1[TOKEN_CREATED]
    assert len(created) >= 24 and app1[TOKEN] == token_hash(created)
    app1[STORE].close()  # a restart: the first server let go of the folder
    app2 = create_app(s)
    assert app2[TOKEN_CREATED] == "" and app2[TOKEN] == app1[TOKEN]
    app2[STORE].close()
    # only the hash is stored
    assert created.encode() not in (tmp_path / "overlay.sqlite3").read_bytes()


async def test_actions_need_a_game(client: Any) -> None:
    await make_channel(client)
    r = await client.post("/api/channels/t1/actions", json={"seq": 1, "kind": "call", "call": "Pass"}, headers=AUTH)
    assert r.status == 400 and "no game" in (await r.json())["error"]


def test_app_state_sits_under_the_typed_keys_only(settings: ServerSettings) -> None:
    """Every value on the app sits under one of overlay.service.keys' AppKeys (no plain string keys:
    mypy checks their use), each key is set, and each value has the key's type."""
    app = create_app(settings)
    declared = {v for v in vars(keys).values() if isinstance(v, web.AppKey)}
    expected = {
        keys.SETTINGS: ServerSettings,
        keys.STORE: Store,
        keys.HUB: Hub,
        keys.ANALYSIS: LiveAnalysis,
        keys.TOKEN: str,
        keys.TOKEN_CREATED: str,
        keys.SOCKETS: weakref.WeakSet,
        keys.GUARD: Guard,
        keys.RENDERS: Renders,
    }
    assert set(declared) == set(expected), "a key was added to overlay.service.keys: list its type here"
    assert set(app) == set(expected), [k for k in app if k not in expected]
    for key, kind in expected.items():
        assert isinstance(app[key], kind), (key, type(app[key]))
    app[keys.STORE].close()
