"""Typed application keys (never plain strings on the app)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from aiohttp import web

from .analysis import LiveAnalysis
from .config import ServerSettings
from .guard import Guard
from .hub import Hub
from .store import Store

if TYPE_CHECKING:  # renders imports these keys
    from .renders import Renders

__all__ = ["SETTINGS", "STORE", "HUB", "ANALYSIS", "TOKEN", "TOKEN_CREATED", "SOCKETS", "GUARD", "RENDERS"]

SETTINGS = web.AppKey("settings", ServerSettings)
STORE = web.AppKey("store", Store)
HUB = web.AppKey("hub", Hub)
#: the service's live analysis (its pool and switch), also the hub's ``analysis``
ANALYSIS = web.AppKey("analysis", LiveAnalysis)
#: the SHA-256 of the API token (the token itself is never kept)
TOKEN = web.AppKey("token", str)
#: the token, only when this start created it (the CLI prints it once); else ""
TOKEN_CREATED = web.AppKey("token_created", str)
#: every open WebSocket, closed with GOING_AWAY on shutdown
SOCKETS: web.AppKey[weakref.WeakSet[web.WebSocketResponse]] = web.AppKey("sockets")
#: the connection rules of ``serve``'s site (time limits, caps; :mod:`overlay.service.guard`)
GUARD = web.AppKey("guard", Guard)
#: the studio's render jobs (:mod:`overlay.service.renders`)
RENDERS: web.AppKey[Renders] = web.AppKey("renders")
