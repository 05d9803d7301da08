"""Replay an EGN document into a :class:`~engine.state.Timeline` of immutable states.

The file stores only decisions (dealer, up-card, calls, cards in table order); the replay
derives everything else: seats of each card, led suit, trick winners, leads, sitting-out
seats, hands at every step, points and the running score.  This module is the game loop
(table size, running score, game over, final-score check, reuse of an earlier replay);
one deal's rules are :mod:`engine.deal`, alternative lines :mod:`engine.branch`.

Rule breaches in the play (a renege, a card played twice, a call out of turn) never stop
the replay: they are recorded as :class:`~engine.errors.Problem` values on the state where
they happen and on the timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from .branch import build_branch
from .deal import DealContext, replay_deal
from .errors import Place, Problem
from .gcpause import gc_paused
from .model import EgnDocument
from .outcome import Checkpoint
from .packed import UnpackedDeal, unpack_deals
from .rules import Table
from .ruleset import Ruleset
from .state import Action, Branch, DealSummary, GameState, StepKind, Timeline, build, evolve_state
from .steps import Record, Steps, state_of

__all__ = ["replay", "MIN_PLAYERS", "MAX_PLAYERS"]

#: Table sizes the replay seats (EGN holds at most 10 players, dealers 0-9, 10 cards a trick);
#: any other ``num_players`` is replayed as 4 players with a warning.
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 10


def replay(
    document: EgnDocument,
    *,
    source: str = "<input>",
    previous: Timeline | None = None,
    deals: Sequence[UnpackedDeal] | None = None,
    summary_only: bool = False,
) -> Timeline:
    """Replay every deal of a validated document.

    ``deals`` are the document's deals with packed ones already read
    (:func:`engine.packed.unpack_deals`, as loading does); without it they are read here,
    before the first deal is replayed.  With ``previous`` (an earlier replay of the same
    game, e.g. before a live logger added an action), deals equal to those already
    replayed are reused and the replay starts at the first deal that changed: the result
    is identical to a full replay.

    ``summary_only`` builds no states: the timeline has no ``steps`` and no ``branches``,
    and the same ``deals`` (step numbers included), ``problems``, score and winner as a
    full replay.

    Rule breaches are collected on the timeline, never raised.  A ``num_players`` outside
    ``MIN_PLAYERS``..``MAX_PLAYERS`` is replayed as 4 players (a warning).
    """
    with gc_paused():  # see engine.gcpause
        return _replay(document, source=source, previous=previous, deals=deals, summary_only=summary_only)


def _replay(
    document: EgnDocument,
    *,
    source: str,
    previous: Timeline | None,
    deals: Sequence[UnpackedDeal] | None,
    summary_only: bool,
) -> Timeline:
    """:func:`replay` with the collector already paused."""
    meta = document.metadata
    rules = meta.rules
    if deals is None:
        deals = unpack_deals(document, source=source)
    supported = MIN_PLAYERS <= rules.num_players <= MAX_PLAYERS
    table = Table(rules.num_players if supported else 4)
    names = list(meta.player_names)
    names += [f"Seat {i}" for i in range(len(names), table.players)]
    ctx = DealContext(source=source, rules=rules, table=table, players=tuple(names))
    if not supported:
        ctx.problems.append(
            Problem(
                Place(source=source, path="/metadata/ruleset/num_players"),
                f"num_players {rules.num_players!r} is not a table of {MIN_PLAYERS} to {MAX_PLAYERS} players; the game is replayed as 4 players",
                "rule",
                "warning",
            )
        )
    init = list(meta.initialScore) + [0] * table.teams
    score: tuple[int, ...] = tuple(init[: table.teams])
    tokens: tuple[int, ...] = (0,) * table.teams
    steps: list[Record] = []  # built when read (engine.steps)
    step_count = 0
    summaries: list[DealSummary] = []
    branches: list[Branch] = []
    game_over_at: int | None = None
    winner: int | None = None
    key = (source, meta, summary_only)
    checkpoints: list[Checkpoint] = []
    start = 0
    if previous is not None:
        for cp, raw in zip(previous.checkpoints, document.deals):
            if not isinstance(cp, Checkpoint) or cp.key != key or cp.deal != raw:
                break
            checkpoints.append(cp)
        if checkpoints:
            cp = checkpoints[-1]
            start = len(checkpoints)
            steps = list(previous.steps[: cp.steps])  # built: the two timelines share states, never records
            step_count = cp.steps
            summaries = list(previous.deals[: cp.summaries])
            branches = list(previous.branches[: cp.branches])
            ctx.problems = list(previous.problems[: cp.problems])
            score, tokens, game_over_at, winner = cp.score, cp.tokens, cp.game_over_at, cp.winner
    for index in range(start, len(document.deals)):
        deal = deals[index]
        if isinstance(deal, Problem):
            ctx.problems.append(deal)
        else:
            if game_over_at is not None:
                ctx.problems.append(
                    Problem(Place(source=source, deal=index), f"this deal is played after the game ended at deal {game_over_at}", "rule", "warning")
                )
            out = replay_deal(ctx, deal, index, score=score, tokens=tokens, first_step=step_count, states=not summary_only)
            if not summary_only:
                steps.extend(out.states.records())
            step_count += out.step_count
            for line_no, line in enumerate(deal.alternativeLines or []):
                branch = build_branch(ctx, deal, index, line_no, line, out, score_before=score, tokens_before=tokens, states=not summary_only)
                if branch is not None:
                    branches.append(branch)
            score, tokens = out.score, out.tokens
            summaries.append(out.summary)
            if game_over_at is None and out.summary.points is not None:
                winner = _game_winner(rules, score, len(summaries))
                if winner is not None or _fixed_deals_done(rules, len(summaries)):
                    game_over_at = index
                    if not summary_only:
                        steps[-1] = last = state_of(steps[-1])
                        steps.append(_game_over_step(last, step_count, winner))
                    step_count += 1
                    summaries[-1] = replace(summaries[-1], last_step=step_count - 1)
        checkpoints.append(
            build(  # one per deal: the frozen constructor's setattr per field is worth skipping
                Checkpoint,
                {
                    "key": key,
                    "deal": document.deals[index],
                    "steps": step_count,
                    "summaries": len(summaries),
                    "branches": len(branches),
                    "problems": len(ctx.problems),
                    "score": score,
                    "tokens": tokens,
                    "game_over_at": game_over_at,
                    "winner": winner,
                },
            )
        )
    _check_final_score(ctx, meta.finalScore, score, len(summaries) > 0)
    return build(  # one per game, every field given: the frozen constructor's setattr per field is worth skipping
        Timeline,
        {
            "steps": Steps(steps),
            "deals": tuple(summaries),
            "branches": tuple(branches),
            "problems": tuple(ctx.problems),
            "final_score": tuple(score) if len(score) >= 2 else (score[0], 0),
            "winner": winner if game_over_at is not None else None,
            "players": ctx.players,
            "title": meta.title,
            "extra": {},
            "checkpoints": tuple(checkpoints),
        },
    )


def _game_over_step(last: GameState, index: int, winner: int | None) -> GameState:
    return evolve_state(
        last,
        step=index,
        kind=StepKind.GAME_OVER,
        action=Action(StepKind.GAME_OVER),
        annotations=(),
        problems=(),
        game_over=True,
        winner=winner,
        to_act=None,
    )


def _game_winner(rules: Ruleset, score: Sequence[int], deals_played: int) -> int | None:
    target = rules.target
    if target is not None:
        best = max(range(len(score)), key=score.__getitem__)
        return best if score[best] >= target else None
    if rules.num_deals > 0 and deals_played >= rules.num_deals:
        top = max(score)
        leaders = [t for t, s in enumerate(score) if s == top]
        return leaders[0] if len(leaders) == 1 else None
    return None


def _fixed_deals_done(rules: Ruleset, deals_played: int) -> bool:
    return rules.target is None and rules.num_deals > 0 and deals_played >= rules.num_deals


def _check_final_score(ctx: DealContext, written: list[int] | None, score: Sequence[int], any_deal: bool) -> None:
    if written and any_deal and list(written) != list(score[: len(written)]):
        ctx.problems.append(
            Problem(Place(source=ctx.source, path="/metadata/finalScore"), f"finalScore {written!r} differs from the replayed score {list(score)!r}", "rule", "warning")
        )
