"""The sockets a channel writes to: overlay pages and state-stream clients.

Each page reads its own socket in its handler task; only the channel's pump and the
handlers' one-off snapshots write to it, through :func:`send_text`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .protocol import OutputName

__all__ = ["Page", "StateSub", "send_text"]


@dataclass(eq=False)
class Page:
    """One connected overlay page (an OBS browser source, a preview, a capture)."""

    ws: web.WebSocketResponse
    output: OutputName
    remote: str
    connected_at: float
    width: int = 1920
    height: int = 1080
    visible: bool = True
    sent_seq: int = 0
    sent_step: int | None = None
    sent_at: dict[int, float] = field(default_factory=dict)
    drawn_seq: int = 0
    drawn_step: int | None = None
    lag: float | None = None  # seconds from sending a scene to the page's "drawn" report
    trace: bool = False  # bench pages get the server's stage times (wall clock ms) per scene

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    @property
    def group(self) -> tuple[Any, ...]:
        return (self.output, self.width, self.height)

    def note_sent(self, seq: int, step: int | None, clock: float) -> None:
        self.sent_seq, self.sent_step = seq, step
        self.sent_at[seq] = clock
        if len(self.sent_at) > 32:
            for old in sorted(self.sent_at)[:-16]:
                del self.sent_at[old]

    def note_drawn(self, seq: int, step: int | None, clock: float) -> None:
        if seq < self.drawn_seq:
            return
        self.drawn_seq, self.drawn_step = seq, step
        sent = self.sent_at.get(seq)
        if sent is not None:
            self.lag = clock - sent

    def status(self, now: float) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "width": self.width,
            "height": self.height,
            "visible": self.visible,
            "connectedFor": round(now - self.connected_at, 3),
            "sentStep": self.sent_step,
            "lastDrawnStep": self.drawn_step,
            "drawnSeq": self.drawn_seq,
            "sentSeq": self.sent_seq,
            "lagMs": None if self.lag is None else round(self.lag * 1000, 2),
        }


@dataclass(eq=False)
class StateSub:
    """A third-party graphics client on the state stream."""

    ws: web.WebSocketResponse
    output: OutputName


async def send_text(ws: web.WebSocketResponse, text: str) -> bool:
    """Send ``text``; False when the socket is gone (a closed page is not an error)."""
    if ws.closed:
        return False
    try:
        await ws.send_str(text)
    except (ConnectionError, RuntimeError):
        return False
    return True
