"""What the live analysis pool's worker processes run (:class:`overlay.service.analysis.AnalysisPool`).

A worker is a spawned process: it imports the module of the function it is sent, so this one
imports the engine and nothing of the service: 0.11 s of CPU, where the service's analysis
module (aiohttp, the feeds, the renderer's settings) took 0.37 s in every worker.  Each worker
keeps one :class:`engine.analysis.Analyst` per ruleset, so stepping through a deal reuses the
solver's tables.
"""

from __future__ import annotations

from typing import Any

from engine.analysis import Analyst, DealEnd
from engine.ruleset import Ruleset
from engine.state import GameState

__all__ = ["analyst_of", "warm", "work", "work_frame"]

_analysts: dict[Ruleset, Analyst] = {}


def analyst_of(rules: Ruleset) -> Analyst:
    """The worker's analyst of ``rules``: made once, kept (with its tables) for the next call."""
    analyst = _analysts.get(rules)
    if analyst is None:
        analyst = _analysts[rules] = Analyst(rules)
    return analyst


def work(rules: Ruleset, state: GameState, public: bool) -> dict[str, Any]:
    """Analyse one state in a worker."""
    return analyst_of(rules).analyse(state, public=public).to_json()


def work_frame(rules: Ruleset, state: GameState, public: bool, first: GameState, ends: tuple[DealEnd, ...]) -> dict[str, Any]:
    """One state's analysis and its game's graph points (public: no hand read), in a worker."""
    analyst = analyst_of(rules)
    return {"analysis": analyst.analyse(state, public=public).to_json(), "graph": [p.to_json() for p in analyst.graph(first, ends)]}


def warm(rules: Ruleset) -> bool:
    """Fit the win-probability prior of a ruleset before the first real request."""
    analyst_of(rules)
    return True
