"""Analysis of a step: double-dummy tricks and points, best cards or calls, each card's and
each call's value, and the win probability, as one value per step.

This is what ``euchre-overlay analyse`` prints and what the live service computes beside its
event loop.  A state is analysed with all four hands (program and preview outputs), or with
``public=True`` from public information only (the clean output): then no hand is read, the
double-dummy fields stay empty and the win probability comes from the score, the dealer and
the contract alone (labelled an estimate).

The hands are the file's (``"recorded"``) or, where it lists none, rebuilt from a play that
shows every card (``"reconstructed"``: hindsight, the way a replay shows them); a step whose
hands are not all known says why in ``reason`` (:mod:`engine.hindsight`).  :func:`deal_reports`
sums that up per deal.  Pure: states in, values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .bidtable import BiddingTable, CallValue, agreed_table, bidding_table, discard_table
from .cards import card_name
from .hindsight import RECONSTRUCTED, RECORDED, Source, discard_options, hands_for, plays_no_card, sat_out
from .ruleset import Ruleset
from .solve import TRICKS, CardValue, PlayAnalysis, Solver, position_of
from .state import GameState, StepKind, Timeline, evolve_state, team_of
from .winprob import Outcomes, ScoreModel, deal_weight, fit_prior, mix

__all__ = ["StepAnalysis", "Analyst", "DealEnd", "DealReport", "GraphPoint", "deal_ends", "deal_reports"]


@dataclass(frozen=True)
class StepAnalysis:
    """The analysis of one step.  ``tricks``/``points``: whole-deal values per team under best
    play (``None`` at the bidding, where ``calls`` holds each call's value, and wherever the
    hands are not used); ``best``: the best cards (or discards, or calls) of the player to
    act; ``win_probability``: per team; ``estimate``: computed from public information only;
    ``hands``: where the hands read come from (``"recorded"`` in the file, ``"reconstructed"``
    from the play), ``None`` where none is read; ``reason``: why a step that asks for hands
    reads none (``None`` with ``public``, or where the step asks for none)."""

    step: int
    deal: int
    kind: str
    to_act: int | None = None
    tricks: tuple[int, int] | None = None
    points: tuple[int, int] | None = None
    best: tuple[str, ...] | None = None
    cards: tuple[CardValue, ...] | None = None
    calls: tuple[CallValue, ...] | None = None
    win_probability: tuple[float, float] | None = None
    estimate: bool = False
    hands: Source | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``analyse --json`` step object (docs/analysis.md, "``analyse`` JSON")."""
        return {
            "step": self.step,
            "deal": self.deal,
            "kind": self.kind,
            "toAct": self.to_act,
            "ddTricks": list(self.tricks) if self.tricks is not None else None,
            "ddPoints": list(self.points) if self.points is not None else None,
            "best": list(self.best) if self.best is not None else None,
            "cards": [c.to_json() for c in self.cards] if self.cards is not None else None,
            "calls": [c.to_json() for c in self.calls] if self.calls is not None else None,
            "winProbability": [round(p, 4) for p in self.win_probability] if self.win_probability is not None else None,
            "estimate": self.estimate,
            "hands": self.hands,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class DealEnd:
    """The public facts of one scored deal that the match graph needs (no hand is read):
    who dealt, the score after it, the contract and the tricks each team took."""

    deal: int
    dealer: int
    score: tuple[int, int]
    maker: int | None
    alone: bool
    tricks: tuple[int, int]
    winner: int | None = None

    @property
    def mark(self) -> tuple[str, int] | None:
        """The swing worth marking on the graph, and the team it went to: ``("euchre",
        defenders)`` when the makers took fewer than 3 tricks, else ``("loner", makers)`` for
        a deal played alone; ``None`` otherwise (a throw-in included)."""
        if self.maker is None:
            return None
        makers = team_of(self.maker)
        if self.tricks[makers] < 3:
            return ("euchre", 1 - makers)
        if self.alone:
            return ("loner", makers)
        return None


@dataclass(frozen=True)
class GraphPoint:
    """One point of the win-probability graph over the match: after ``deals`` deals (0: before
    the first), team 0's chance ``p``; ``mark``/``team`` as :attr:`DealEnd.mark`."""

    deals: int
    p: float
    mark: str | None = None
    team: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"deals": self.deals, "p": round(self.p, 4), "mark": self.mark, "team": self.team}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GraphPoint:
        return cls(int(data["deals"]), float(data["p"]), data.get("mark"), data.get("team"))


#: between a reason's cause and what it leaves without values
EFFECT = " \u2014 "


@dataclass(frozen=True)
class DealReport:
    """How much of one deal the analysis could read: ``asked`` steps ask for hands (the
    bidding, the discard, the play), ``analysed`` of them got values from hands; ``hands``:
    ``"reconstructed"`` when any of them read hands rebuilt from the play, else
    ``"recorded"`` (``None``: none); ``reason``: why the others got none (``None`` when none
    is missing); ``complete``: the deal was played out and scored."""

    deal: int
    deal_number: int
    complete: bool
    asked: int
    analysed: int
    hands: Source | None
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        """One entry of ``analyse --json``'s ``deals``."""
        return {
            "deal": self.deal,
            "dealNumber": self.deal_number,
            "complete": self.complete,
            "steps": self.asked,
            "analysed": self.analysed,
            "hands": self.hands,
            "reason": self.reason,
        }


def deal_reports(timeline: Timeline, analyses: Sequence[StepAnalysis]) -> tuple[DealReport, ...]:
    """Per deal of ``timeline``'s main line, what its steps' ``analyses`` (one per step, in
    timeline order, as :meth:`Analyst.analyse` gave them) could read and why not."""
    by_deal: dict[int, list[StepAnalysis]] = {}
    for a in analyses:
        by_deal.setdefault(a.deal, []).append(a)
    reports = []
    for summary in timeline.deals:
        mine = by_deal.get(summary.deal, [])
        asked = [a for a in mine if a.hands is not None or a.reason is not None]
        done = [a for a in asked if a.hands is not None]
        source: Source | None = None
        if any(a.hands == RECONSTRUCTED for a in done):
            source = RECONSTRUCTED
        elif done:
            source = RECORDED
        # one cause once, with what it leaves without values: "cause — effect, effect"
        effects: dict[str, list[str]] = {}
        for a in asked:
            if a.reason is not None:
                cause, _, effect = a.reason.partition(EFFECT)
                seen = effects.setdefault(cause, [])
                if effect and effect not in seen:
                    seen.append(effect)
        reasons = [cause + (EFFECT + ", ".join(e) if e else "") for cause, e in effects.items()]
        for seat in summary.sit_out:  # the deal tells what a step could not: why no card was seen
            reasons = [r.replace(plays_no_card(seat), sat_out(seat)) for r in reasons]
        thrown_in = summary.complete and summary.maker is None
        if reasons and thrown_in:
            reasons = ["thrown in: no card was played, so hands not recorded are never seen"]
        elif reasons and not summary.complete:
            full = sum(1 for t in summary.tricks if t.winner is not None)
            reasons.insert(0, f"the play is not complete ({full} of {TRICKS} tricks recorded)")
        reports.append(DealReport(summary.deal, summary.deal_number, summary.complete, len(asked), len(done), source, "; ".join(reasons) or None))
    return tuple(reports)


def deal_ends(steps: Sequence[GameState]) -> tuple[DealEnd, ...]:
    """The scored deals among ``steps`` (one game's states up to the step shown), in order:
    the main line's and those of the branch of the last state, one per deal."""
    if not steps:
        return ()
    branch = steps[-1].branch
    ends: dict[int, DealEnd] = {}
    for s in steps:
        if s.kind is not StepKind.DEAL_SCORED or (s.branch is not None and s.branch != branch):
            continue
        ends[s.deal] = DealEnd(s.deal, s.dealer, (s.score[0], s.score[1]), s.maker, s.alone, (s.tricks_per_team[0], s.tricks_per_team[1]), s.winner)
    return tuple(ends[d] for d in sorted(ends))


class Analyst:
    """Analyses the states of games under one ruleset; keeps the solver's tables and the win
    probability model between steps, so stepping through a deal costs little."""

    def __init__(self, rules: Ruleset, *, solver: Solver | None = None, win_probability: bool = True) -> None:
        self.rules = rules
        self.solver = solver or Solver()
        self.model = ScoreModel(rules, fit_prior(rules)) if win_probability else None

    def analyse(self, state: GameState, *, public: bool = False) -> StepAnalysis:
        """Analyse one step; ``public`` reads no hand (the clean output)."""
        hands = None if public else hands_for(state)
        if state.num_players != 4:
            return StepAnalysis(state.step, state.deal, state.kind.value, state.to_act, estimate=public, reason=hands.reason if hands else None)
        play: PlayAnalysis | None = None
        calls: tuple[CallValue, ...] | None = None
        best: tuple[str, ...] | None = None
        source: Source | None = None
        reason = hands.reason if hands is not None else None
        if hands is not None and hands.source is not None:
            try:
                if hands.unknown_discard:
                    table = self._bidding_without_discard(state)
                else:
                    pos = position_of(state, self.rules)
                    if pos is not None:
                        play = self.solver.analyse(pos)
                    else:
                        play = discard_table(state, self.rules, self.solver)
                    table = bidding_table(state, self.rules, self.solver) if play is None else None
                if table is not None and any(c.tricks is not None for c in table.calls):
                    calls = table.calls
                    best = tuple(c.label for c in table.best)
                    if all(c.tricks is not None for c in calls if c.call != "Pass"):
                        reason = None
                    else:
                        reason = f"{hands.reason}{EFFECT}calls whose value depends on it have none"
                elif hands.unknown_discard:
                    reason = f"{hands.reason}{EFFECT}" + ("the discard table needs it" if state.maker is not None else "every call's value depends on it")
                if play is not None or calls is not None:
                    source = hands.source
            except ValueError as exc:
                # hands that do not fit the play (a broken file: a card held twice, a discard
                # the dealer never had): this step has no double-dummy value
                play, calls, best = None, None, None
                reason = f"the hands do not fit the play: {exc}"
        if play is not None:
            best = tuple(card_name(c) for c in play.best)
        return StepAnalysis(
            state.step,
            state.deal,
            state.kind.value,
            play.to_act if play is not None else state.to_act,
            play.tricks if play is not None else None,
            play.points if play is not None else None,
            best,
            play.cards if play is not None else None,
            calls,
            self._win_probability(state, play, calls),
            public,
            source,
            reason,
        )

    def _bidding_without_discard(self, state: GameState) -> BiddingTable | None:
        """The bidding table where the dealer's discard is not recorded: valued once per card
        it may be, and kept where they agree (the discard table itself needs that card: none)."""
        if state.maker is not None:
            return None
        tables = [bidding_table(evolve_state(state, hands=option), self.rules, self.solver) for option in discard_options(state, self.rules)]
        return agreed_table([t for t in tables if t is not None]) if all(t is not None for t in tables) else None

    def graph(self, first: GameState, ends: Sequence[DealEnd]) -> tuple[GraphPoint, ...]:
        """The win-probability graph of a game: the public score-state model's value before
        the first deal (``first``: the game's first state) and after each of ``ends``.  Cheap
        (no solve) and public: the same on every output."""
        model = self.model
        if model is None:
            return ()
        points = [GraphPoint(0, model.future(first.score, team_of(first.dealer), 0))]
        for n, end in enumerate(ends, start=1):
            if end.winner is not None:
                p = 1.0 if end.winner == 0 else 0.0
            else:
                p = model.after(end.score[0], end.score[1], end.dealer, end.deal + 1)
            mark = end.mark
            points.append(GraphPoint(n, p, mark[0] if mark else None, mark[1] if mark else None))
        return tuple(points)

    def _win_probability(self, state: GameState, play: PlayAnalysis | None, calls: tuple[CallValue, ...] | None) -> tuple[float, float] | None:
        model = self.model
        if model is None:
            return None
        if state.game_over or state.winner is not None:
            w = state.winner
            return (0.5, 0.5) if w is None else ((1.0, 0.0) if w == 0 else (0.0, 1.0))
        if state.kind is StepKind.DEAL_SCORED or state.thrown_in:
            p = model.after(state.score[0], state.score[1], state.dealer, state.deal + 1)
            return (p, 1 - p)
        prior = model.prior
        if state.maker is not None:
            side = team_of(state.maker)
            outcomes: Outcomes = prior.contract[1 if state.alone else 0]
            if play is not None:
                size = 4 - len(state.sit_out)
                played = len(state.tricks) * size + (len(state.trick.cards) if state.trick is not None and not state.trick.complete else 0)
                mine, theirs = play.points[side], play.points[1 - side]
                outcomes = mix((mine, theirs), deal_weight(played, TRICKS * size), outcomes)
        else:
            side = team_of(state.dealer)
            outcomes = prior.dealer
            if calls is not None and state.to_act is not None:
                team = team_of(state.to_act)
                valued = [c for c in calls if c.points is not None and c.tricks is not None]
                if valued:
                    top = max(valued, key=lambda c: (c.points[team] - c.points[1 - team], c.tricks[team]))  # type: ignore[index]
                    assert top.points is not None
                    if top.points[team] > 0:
                        if team != side:
                            outcomes = tuple(((b, a), p) for (a, b), p in outcomes)
                            side = team
                        outcomes = mix((top.points[team], top.points[1 - team]), 0.5, outcomes)
        p = model.with_deal(state.score, state.dealer, outcomes, side=side, deals_played=state.deal)
        return (p, 1 - p)
