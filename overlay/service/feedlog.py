"""What a channel's logger has been doing: when it last sent something the channel took,
and the last few messages the channel refused, with their text.

The studio's overview and notices read it (``GET /api/channels/{id}``: ``feed``): a producer
sees a logger that stopped sending during a deal, or one whose actions are refused, without
a terminal.  Kept in memory only (a restart starts it afresh, as the sockets do); the times
are the hub's clock, so ages come out right under a test's hand-moved clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Refusal", "FeedLog", "KEEP"]

#: refusals kept per channel (the newest)
KEEP = 8


@dataclass(frozen=True)
class Refusal:
    """One refused feed message: when (hub clock), its ``seq`` if it had one, the HTTP
    status and the error's kind and text (bounded, as every refusal is)."""

    at: float
    seq: int | None
    status: int
    kind: str
    error: str
    via: str | None


@dataclass
class FeedLog:
    """A channel's feed activity: accepted and refused counts, the last accepted message's
    time and sender (a feed key's id, ``"token"``, or ``"file"`` for a followed file), the
    newest refusals."""

    accepted: int = 0
    refused: int = 0
    last: float | None = None
    last_via: str | None = None
    refusals: deque[Refusal] = field(default_factory=lambda: deque(maxlen=KEEP))

    def took(self, now: float, *, via: str | None) -> None:
        """The channel accepted a message (a duplicate or an unchanged PUT too: the logger is
        sending)."""
        self.accepted += 1
        self.last = now
        self.last_via = via

    def refuse(self, now: float, *, seq: int | None, status: int, kind: str, error: str, via: str | None) -> None:
        self.refused += 1
        self.refusals.append(Refusal(now, seq, status, kind, error, via))

    def to_json(self, now: float) -> dict[str, Any]:
        """``lastAge`` (seconds since the last accepted message; null: none since the start),
        the counts, and the refusals newest first, each with its ``age``."""
        return {
            "accepted": self.accepted,
            "refused": self.refused,
            "lastAge": None if self.last is None else round(max(0.0, now - self.last), 2),
            "lastVia": self.last_via,
            "refusals": [
                {"age": round(max(0.0, now - r.at), 2), "seq": r.seq, "status": r.status, "kind": r.kind, "error": r.error, "via": r.via}
                for r in reversed(self.refusals)
            ],
        }
