"""Alternative lines (a deal's ``alternativeLines``: what else could have been played) as branches of the replay.

A line is replayed as the main line up to the deviation followed by the line's own
phases, from the running score before the deal.  The branch keeps the steps from the
deviating action on; ``parent_step`` is the main-line step just before it.

Problems found while replaying the combined line are reported once, where they are in the
file: a problem in the shared part (before the deviation) is the main line's and is not
repeated; a problem in the line names the line and its own positions (the line's phase
index, calls counted from the deviation, tricks counted from the line's first, possibly
partial, trick).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .deal import DealContext, DealOutcome, replay_deal
from .errors import Place, Problem
from .model import AlternativeLine, BiddingPhase, Deal, TrickPlayPhase
from .pickling import init_values
from .state import Branch, evolve_state

__all__ = ["build_branch"]


@dataclass(frozen=True)
class _LineMap:
    """Where the combined deal's positions are in the alternative line."""

    line: int
    calls_before: int | None  # combined calls before the line's first call; None: no bidding of the line's own
    bid_phase: int | None  # index of the line's bidding phase in ``line.phases``
    play_phase: int | None  # index of the line's trick-play phase
    tricks_before: int  # combined tricks before the line's first trick
    cards_before: int  # cards of the interrupted trick played before the deviation

    def place(self, place: Place) -> Place | None:
        """The place in the line, or ``None`` when it is in the shared part of the main line."""
        if place.phase_type == "EUCHRE_BIDDING":
            if self.bid_phase is None:
                return None
            if place.call is not None:
                if self.calls_before is None or place.call < self.calls_before:
                    return None
                return place.with_(line=self.line, phase=self.bid_phase, call=place.call - self.calls_before)
            return place.with_(line=self.line, phase=self.bid_phase)
        if place.phase_type == "TRICK_PLAY":
            if self.play_phase is None:
                return None
            t = place.trick
            if t is None:
                return place.with_(line=self.line, phase=self.play_phase)
            if t < self.tricks_before:
                return None
            c = place.card
            if t == self.tricks_before and self.cards_before:
                if c is not None and c < self.cards_before:
                    return None
                c = None if c is None else c - self.cards_before
            return place.with_(line=self.line, phase=self.play_phase, trick=t - self.tricks_before, card=c)
        return None

    def __reduce__(self) -> tuple[type[_LineMap], tuple[object, ...]]:
        return (_LineMap, init_values(self))


def _index(line: AlternativeLine, phase: BiddingPhase | TrickPlayPhase | None) -> int | None:
    return next((i for i, p in enumerate(line.phases) if p is phase), None) if phase is not None else None


def _branch_deal(deal: Deal, line: AlternativeLine, line_no: int, per: int) -> tuple[Deal, _LineMap]:
    """The main line up to the deviation followed by the alternative line, as a deal."""
    b = line.branchIndex
    main_bid = deal.bidding
    main_play = deal.play
    calls = list(main_bid.calls) if main_bid else []
    alt_bid = next((p for p in line.phases if isinstance(p, BiddingPhase)), None)
    alt_play = next((p for p in line.phases if isinstance(p, TrickPlayPhase)), None)
    phases: list[BiddingPhase | TrickPlayPhase] = []
    if alt_bid is not None and b <= len(calls):
        phases.append(alt_bid.model_copy(update={"calls": calls[:b] + list(alt_bid.calls)}))
        if alt_play is not None:
            phases.append(alt_play)
        where = _LineMap(line_no, b, _index(line, alt_bid), _index(line, alt_play), 0, 0)
        return deal.model_copy(update={"phases": phases, "alternativeLines": None}), where
    if main_bid is not None:
        phases.append(alt_bid.model_copy(update={"calls": calls}) if alt_bid is not None else main_bid)
    p = max(0, b - len(calls))
    main_cards = [c for t in (main_play.tricks if main_play else []) for c in t]
    prefix = main_cards[:p]
    tricks: list[list[str]] = [prefix[i : i + per] for i in range(0, len(prefix), per)]
    alt_tricks = [list(t) for t in (alt_play.tricks if alt_play else [])]
    if tricks and len(tricks[-1]) < per and alt_tricks:
        tricks[-1] = tricks[-1] + alt_tricks.pop(0)
    tricks += alt_tricks
    base = alt_play or main_play
    if base is not None:
        phases.append(base.model_copy(update={"tricks": tricks}))
    where = _LineMap(line_no, None, _index(line, alt_bid), _index(line, alt_play), p // per, p % per)
    return deal.model_copy(update={"phases": phases, "alternativeLines": None}), where


def build_branch(
    ctx: DealContext,
    deal: Deal,
    index: int,
    line_no: int,
    line: AlternativeLine,
    main: DealOutcome,
    *,
    score_before: tuple[int, ...],
    tokens_before: tuple[int, ...],
    states: bool = True,
) -> Branch | None:
    """Replay one alternative line of a deal; its problems go to ``ctx``.

    ``states=False`` (the summary-only pass) reports the line's problems and returns
    ``None``: there are no steps to keep.
    """
    here = Place(source=ctx.source, deal=index, line=line_no)
    per = max(1, ctx.table.players - len(main.summary.sit_out))
    try:
        alt, where = _branch_deal(deal, line, line_no, per)
    except Exception as exc:  # noqa: BLE001 - a broken analysis line never stops the replay
        ctx.problems.append(Problem(here, f"alternative line cannot be built: {exc}", "schema"))
        return None
    sub = ctx.fresh()
    out = replay_deal(sub, alt, index, score=score_before, tokens=tokens_before, first_step=0, branch=f"{index}:{line_no}", line=line_no, states=states)
    b = line.branchIndex
    if b < len(out.action_steps):
        start = out.action_steps[b]
    else:
        start = out.step_count
        ctx.problems.append(Problem(here, f"branchIndex {b} is past the end of the alternative line", "schema", "warning"))
    mapped: dict[int, Problem] = {}
    for p, at in zip(out.problems, out.shown_at):
        place = where.place(p.place) if not 0 <= at < start else None
        if place is not None:
            mapped[id(p)] = replace(p, place=place)
    ctx.problems.extend(q for q in mapped.values() if q not in ctx.problems)
    if not states:
        return None
    parent = main.summary.first_step + max(0, start - 1)
    steps = tuple(
        evolve_state(s, step=parent + 1 + i, problems=tuple(mapped[id(p)] for p in s.problems if id(p) in mapped))
        for i, s in enumerate(out.states[start:])
    )
    return Branch(deal=index, line=line_no, branch_index=b, parent_step=parent, steps=steps)
