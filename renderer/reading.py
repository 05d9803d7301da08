"""The analysis as the renderer reads it: :class:`AnalysisFrame` (this step's reading, the
previous one, the match graph) and the analysis extras' types and boxes.  Data only: the
layer is built by :mod:`renderer.analysis`, the elements drawn by :mod:`renderer.insights`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.analysis import GraphPoint

from .view import ExtraType

__all__ = ["ANALYSIS_TYPES", "ANALYSIS_SIZES", "CallRow", "Reading", "AnalysisFrame"]

#: the extras drawn from analysis (placed like every extra, drawn only with an AnalysisFrame)
ANALYSIS_TYPES = (ExtraType.WIN_BAR, ExtraType.WIN_GRAPH, ExtraType.BEST_PLAY, ExtraType.PLAY_QUALITY, ExtraType.BIDDING_TABLE)

#: unscaled boxes in view pixels
ANALYSIS_SIZES: dict[ExtraType, tuple[float, float]] = {
    ExtraType.WIN_BAR: (600.0, 76.0),
    ExtraType.WIN_GRAPH: (360.0, 184.0),
    ExtraType.BEST_PLAY: (300.0, 64.0),
    ExtraType.PLAY_QUALITY: (360.0, 64.0),
    ExtraType.BIDDING_TABLE: (420.0, 204.0),
}

@dataclass(frozen=True)
class CallRow:
    """One call open to the bidder: ``tricks``/``points`` per team (``None`` for Pass)."""

    call: str
    alone: bool
    tricks: tuple[int, int] | None
    points: tuple[int, int] | None


def _pair(v: Any) -> tuple[int, int] | None:
    return None if v is None else (int(v[0]), int(v[1]))


@dataclass(frozen=True)
class Reading:
    """One step's analysis as the renderer reads it (from the ``analyse --json`` step object):
    ``win`` per team, ``best`` cards or calls of ``to_act``, ``losses`` per legal card name
    (tricks, points given up against the best), ``calls`` at the bidding; ``estimate``: from
    public information only; ``hands``: ``"reconstructed"`` when the hands read were rebuilt
    from the deal's play (hindsight), ``"recorded"``, or ``None``."""

    step: int
    deal: int
    to_act: int | None = None
    win: tuple[float, float] | None = None
    estimate: bool = False
    best: tuple[str, ...] = ()
    losses: dict[str, tuple[int, int]] = field(default_factory=dict)
    calls: tuple[CallRow, ...] | None = None
    tricks: tuple[int, int] | None = None
    hands: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reading:
        """Read the ``analyse --json`` step object (unknown keys are ignored).

        Raises:
            KeyError, TypeError, ValueError: not such an object.
        """
        win = data.get("winProbability")
        calls = data.get("calls")
        return cls(
            step=int(data["step"]),
            deal=int(data["deal"]),
            to_act=None if data.get("toAct") is None else int(data["toAct"]),
            win=None if win is None else (float(win[0]), float(win[1])),
            estimate=bool(data.get("estimate", False)),
            best=tuple(str(b) for b in data.get("best") or ()),
            losses={str(c["card"]): (int(c["trickLoss"]), int(c["pointLoss"])) for c in data.get("cards") or ()},
            calls=None if calls is None else tuple(CallRow(str(c["call"]), bool(c["alone"]), _pair(c.get("ddTricks")), _pair(c.get("points"))) for c in calls),
            tricks=_pair(data.get("ddTricks")),
            hands=None if data.get("hands") is None else str(data["hands"]),
        )


@dataclass(frozen=True)
class AnalysisFrame:
    """What the analysis elements draw: ``now`` (this step), ``previous`` (the reading shown
    before: the bar moves from it; of the previous step, it values the card just played) and
    ``graph`` (the match graph's points, :meth:`engine.analysis.Analyst.graph`)."""

    now: Reading
    previous: Reading | None = None
    graph: tuple[GraphPoint, ...] = ()

    @classmethod
    def from_json(cls, analysis: dict[str, Any], previous: dict[str, Any] | None = None, graph: list[dict[str, Any]] | None = None) -> AnalysisFrame:
        """From the live message's parts (see :func:`overlay.service.analysis.message`)."""
        return cls(
            Reading.from_json(analysis),
            None if previous is None else Reading.from_json(previous),
            tuple(GraphPoint.from_json(p) for p in graph or ()),
        )
