"""Match statistics and the deal history: what a statistics panel, a lower third and a
deal-history strip show, computed from a replay up to a step.

Per team and per player: tricks, points, calls made in each bidding round, euchres made and
suffered, loners tried and made, marches, bowers held (right or left bower played by the seat:
every card of a finished deal is played); the current streak (the team that scored the last
deals in a row, and how many; a deal nobody scores does not break it).  The history is one cell per deal: dealer, trump, maker, alone,
points.  Pure: a timeline in, values out; a step limits it to what has happened by then.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import bower, resolve
from .state import Timeline, team_of

__all__ = ["DealCell", "Tally", "MatchStats", "match_stats"]


@dataclass(frozen=True)
class DealCell:
    """One deal of the history strip (``points`` is ``None`` while the deal is unfinished)."""

    deal: int
    deal_number: int
    dealer: int
    trump: str | None
    maker: int | None
    alone: bool
    points: tuple[int, ...] | None

    def to_json(self) -> dict[str, Any]:
        return {"deal": self.deal, "dealNumber": self.deal_number, "dealer": self.dealer, "trump": self.trump, "maker": self.maker, "alone": self.alone, "points": list(self.points) if self.points is not None else None}


@dataclass
class Tally:
    """The counts of one team or one player."""

    tricks: int = 0
    points: int = 0
    calls_round1: int = 0
    calls_round2: int = 0
    euchres_made: int = 0
    euchres_suffered: int = 0
    loners_tried: int = 0
    loners_made: int = 0
    marches: int = 0
    bowers: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "tricks": self.tricks,
            "points": self.points,
            "callsRound1": self.calls_round1,
            "callsRound2": self.calls_round2,
            "euchresMade": self.euchres_made,
            "euchresSuffered": self.euchres_suffered,
            "lonersTried": self.loners_tried,
            "lonersMade": self.loners_made,
            "marches": self.marches,
            "bowers": self.bowers,
        }


@dataclass
class MatchStats:
    """Statistics of the deals finished by a step, and the history strip (unfinished deal
    included).  ``streak``: (team, deals) of the current run of scoring deals."""

    teams: tuple[Tally, Tally] = field(default_factory=lambda: (Tally(), Tally()))
    players: tuple[Tally, ...] = field(default_factory=lambda: tuple(Tally() for _ in range(4)))
    streak: tuple[int | None, int] = (None, 0)
    history: list[DealCell] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "teams": [t.to_json() for t in self.teams],
            "players": [p.to_json() for p in self.players],
            "streak": {"team": self.streak[0], "deals": self.streak[1]},
            "history": [c.to_json() for c in self.history],
        }


def match_stats(timeline: Timeline, *, step: int | None = None) -> MatchStats:
    """Statistics of ``timeline`` counting the deals scored by ``step`` (all by default).

    A four-player table only (other tables count nothing but the history)."""
    last = len(timeline.steps) - 1 if step is None else step
    stats = MatchStats()
    streak_team: int | None = None
    streak = 0
    for d in timeline.deals:
        if d.first_step > last:
            break
        finished = d.points is not None and d.last_step <= last and timeline.steps[d.last_step].deal_points is not None
        stats.history.append(DealCell(d.deal, d.deal_number, d.dealer, d.trump, d.maker, d.alone, d.points if finished else None))
        state = timeline.steps[d.last_step]
        if not finished or d.points is None or state.num_players != 4:
            continue
        for t in range(2):
            stats.teams[t].points += d.points[t]
        for trick in d.tricks:
            if trick.winner is not None and trick.winner < 4:
                stats.players[trick.winner].tricks += 1
                stats.teams[team_of(trick.winner)].tricks += 1
        trump = state.trump
        for trick in d.tricks:
            for seat, card in zip(trick.seats, trick.cards):
                if seat < 4 and bower(resolve(card, trump), trump) is not None:
                    stats.players[seat].bowers += 1
                    stats.teams[team_of(seat)].bowers += 1
        if d.maker is not None and d.maker < 4:
            call = next((c for c in reversed(state.calls) if c.call != "Pass"), None)
            mt = team_of(d.maker)
            for tally in (stats.players[d.maker], stats.teams[mt]):
                if call is not None and call.round == 1:
                    tally.calls_round1 += 1
                elif call is not None:
                    tally.calls_round2 += 1
            made = d.tricks_per_team[mt] * 2 > sum(d.tricks_per_team)
            marched = d.tricks_per_team[mt] == sum(d.tricks_per_team) and sum(d.tricks_per_team) > 0
            if d.alone:
                stats.players[d.maker].loners_tried += 1
                stats.teams[mt].loners_tried += 1
                if made:
                    stats.players[d.maker].loners_made += 1
                    stats.teams[mt].loners_made += 1
            if marched:
                stats.players[d.maker].marches += 1
                stats.teams[mt].marches += 1
            if not made:
                stats.players[d.maker].euchres_suffered += 1
                stats.teams[mt].euchres_suffered += 1
                stats.teams[1 - mt].euchres_made += 1
                for seat in (s for s in range(4) if team_of(s) != mt and s not in d.sit_out):
                    stats.players[seat].euchres_made += 1
        scorer = next((t for t in range(2) if d.points[t] > 0), None)
        if scorer is not None:
            streak = streak + 1 if scorer == streak_team else 1
            streak_team = scorer
    stats.streak = (streak_team, streak)
    return stats
