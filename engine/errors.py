"""One hierarchy of typed errors; each names the place in the order file, deal, phase, index.

Every class subclasses :class:`ValueError`.  The message reads, e.g.::

    finals.egn: deal 3, phase 1 (TRICK_PLAY), trick 2, card 4: 'Jd' was already played in trick 1

Strict mode raises these; lenient mode collects them (as :class:`Problem` values) on the
result and goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Place",
    "EgnError",
    "SchemaError",
    "NotationError",
    "RuleError",
    "ActionError",
    "CodecError",
    "SizeLimitError",
    "Problem",
]


@dataclass(frozen=True)
class Place:
    """Where something is in a game: every part optional, printed in a fixed order."""

    source: str | None = None
    deal: int | None = None
    phase: int | None = None
    phase_type: str | None = None
    line: int | None = None  # alternative line index
    call: int | None = None
    trick: int | None = None
    card: int | None = None
    path: str | None = None  # JSON path for schema problems ("/deals/3/phases/0/calls/2")
    extra: tuple[tuple[str, Any], ...] = field(default=())

    def with_(self, **changes: Any) -> Place:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        data.update(changes)
        return Place(**data)

    def describe(self) -> str:
        parts: list[str] = []
        if self.deal is not None:
            parts.append(f"deal {self.deal}")
        if self.line is not None:
            parts.append(f"alternative line {self.line}")
        if self.phase is not None:
            kind = f" ({self.phase_type})" if self.phase_type else ""
            parts.append(f"phase {self.phase}{kind}")
        if self.call is not None:
            parts.append(f"call {self.call}")
        if self.trick is not None:
            parts.append(f"trick {self.trick}")
        if self.card is not None:
            parts.append(f"card {self.card}")
        for key, value in self.extra:
            parts.append(f"{key} {value}")
        if self.path and not parts:
            parts.append(self.path)
        head = self.source or "<input>"
        return head + (": " + ", ".join(parts) if parts else "")


class EgnError(ValueError):
    """Base of every error the engine raises about its input."""

    kind = "error"

    def __init__(self, message: str, place: Place | None = None) -> None:
        self.place = place or Place()
        self.detail = message
        super().__init__(f"{self.place.describe()}: {message}")

    def problem(self, *, severity: str = "error") -> Problem:
        return Problem(place=self.place, message=self.detail, kind=self.kind, severity=severity)


class SchemaError(EgnError):
    """The document breaks the EGN schema (types, required keys, limits)."""

    kind = "schema"


class NotationError(EgnError):
    """A card or call string that the notation does not allow."""

    kind = "notation"


class RuleError(EgnError):
    """The recorded play breaks the rules (renege, card played twice, wrong turn...)."""

    kind = "rule"


class ActionError(EgnError):
    """A live action that does not fit the game as it stands (no deal to play in, a card
    before trump is made, a new deal while one is being played...): :mod:`engine.live`."""

    kind = "action"


class CodecError(EgnError):
    """A binary or text encoding could not be read or written."""

    kind = "codec"


class SizeLimitError(CodecError):
    """Input or output larger than the reference's cap."""

    kind = "size"


@dataclass(frozen=True)
class Problem:
    """A collected (non-fatal in lenient mode) error, with its place."""

    place: Place
    message: str
    kind: str = "error"
    severity: str = "error"  # "error" or "warning"

    def __str__(self) -> str:
        return f"{self.place.describe()}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        p = self.place
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": str(self),
            "source": p.source,
            "deal": p.deal,
            "phase": p.phase,
            "phaseType": p.phase_type,
            "line": p.line,
            "call": p.call,
            "trick": p.trick,
            "card": p.card,
            "path": p.path,
        }

    def error(self) -> EgnError:
        cls = {
            "schema": SchemaError,
            "notation": NotationError,
            "rule": RuleError,
            "action": ActionError,
            "codec": CodecError,
            "size": SizeLimitError,
        }.get(self.kind, EgnError)
        return cls(self.message, self.place)
