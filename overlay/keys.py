"""Typed application keys (never plain strings on the app)."""

from __future__ import annotations

import weakref

from aiohttp import web

from .hub import Hub
from .config import ServerSettings
from .store import Store

__all__ = ["SETTINGS", "STORE", "HUB", "TOKEN", "TOKEN_CREATED", "SOCKETS"]

SETTINGS = web.AppKey("settings", ServerSettings)
STORE = web.AppKey("store", Store)
HUB = web.AppKey("hub", Hub)
TOKEN = web.AppKey("token", str)
#: True when this start created the token (the CLI prints it once)
TOKEN_CREATED = web.AppKey("token_created", bool)
#: every open WebSocket, closed with GOING_AWAY on shutdown
SOCKETS: web.AppKey[weakref.WeakSet[web.WebSocketResponse]] = web.AppKey("sockets")
