"""Replay an EGN document into a :class:`~engine.state.Timeline` of immutable states.

The file stores only decisions (dealer, up-card, calls, cards in table order); the replay
derives everything else: seats of each card, led suit, trick winners, leads, sitting-out
seats, hands at every step, points and the running score.  This module is the game loop
(table size, running score, game over, final-score check, reuse of an earlier replay);
one deal's rules are :mod:`engine.deal`, alternative lines :mod:`engine.branch`.
The loop's body is :func:`replay_next` (one deal from the loop's state before it, to a
:class:`~engine.outcome.DealBlock`): the live game (:mod:`engine.live`) calls it for the
one deal an action changes.

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
from .model import Deal, EgnDocument
from .outcome import Checkpoint, DealBlock
from .packed import UnpackedDeal, unpack_deals
from .rules import Table
from .ruleset import Ruleset
from .state import Action, Branch, DealSummary, GameState, StepKind, Timeline, build, evolve_state
from .steps import Record, Steps, state_of

__all__ = ["replay", "replay_next", "game_context", "opening", "timeline_of", "final_score_problem", "MIN_PLAYERS", "MAX_PLAYERS"]

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


def game_context(document: EgnDocument, *, source: str) -> DealContext:
    """What every deal of the game shares (source, rules, table, player names), with the
    game's own problems, found before any deal, on its problem list (an unsupported table size)."""
    meta = document.metadata
    rules = meta.rules
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
    return ctx


def opening(document: EgnDocument, ctx: DealContext, key: tuple[object, ...]) -> Checkpoint:
    """The loop's state before the first deal: the initial score, no step, no deal.

    ``key`` is what the deals are replayed under (see :func:`replay_next`); ``ctx`` the
    game's context as :func:`game_context` made it (its problems are the game's own).
    """
    teams = ctx.table.teams
    init = list(document.metadata.initialScore) + [0] * teams
    return build(
        Checkpoint,
        {
            "key": key,
            "deal": None,
            "steps": 0,
            "summaries": 0,
            "branches": 0,
            "problems": len(ctx.problems),
            "score": tuple(init[:teams]),
            "tokens": (0,) * teams,
            "game_over_at": None,
            "winner": None,
        },
    )


def replay_next(
    ctx: DealContext,
    index: int,
    raw: Deal | str,
    deal: UnpackedDeal,
    before: Checkpoint,
    *,
    summary_only: bool = False,
) -> DealBlock:
    """Replay the game's deal at ``index`` from the loop's state ``before`` it.

    ``raw`` is the deal as the document holds it, ``deal`` the same read (a packed deal
    decoded, or the problem that says why it cannot be); the deal's problems go to ``ctx``
    and to the block.  The block's checkpoint is the state the next deal starts from.
    """
    rules = ctx.rules
    first = len(ctx.problems)
    records: list[Record] = []
    step_count = before.steps
    summary: DealSummary | None = None
    branches: list[Branch] = []
    score, tokens, game_over_at, winner = before.score, before.tokens, before.game_over_at, before.winner
    if isinstance(deal, Problem):
        ctx.problems.append(deal)
    else:
        if game_over_at is not None:
            ctx.problems.append(
                Problem(Place(source=ctx.source, deal=index), f"this deal is played after the game ended at deal {game_over_at}", "rule", "warning")
            )
        out = replay_deal(ctx, deal, index, score=score, tokens=tokens, first_step=step_count, states=not summary_only)
        if not summary_only:
            records = list(out.states.records())
        step_count += out.step_count
        for line_no, line in enumerate(deal.alternativeLines or []):
            branch = build_branch(ctx, deal, index, line_no, line, out, score_before=score, tokens_before=tokens, states=not summary_only)
            if branch is not None:
                branches.append(branch)
        score, tokens = out.score, out.tokens
        summary = out.summary
        played = before.summaries + 1
        if game_over_at is None and summary.points is not None:
            winner = _game_winner(rules, score, played)
            if winner is not None or _fixed_deals_done(rules, played):
                game_over_at = index
                if not summary_only:
                    records[-1] = last = state_of(records[-1])
                    records.append(_game_over_step(last, step_count, winner))
                step_count += 1
                summary = replace(summary, last_step=step_count - 1)
    checkpoint = build(  # one per deal: the frozen constructor's setattr per field is worth skipping
        Checkpoint,
        {
            "key": before.key,
            "deal": raw,
            "steps": step_count,
            "summaries": before.summaries + (0 if summary is None else 1),
            "branches": before.branches + len(branches),
            "problems": before.problems + len(ctx.problems) - first,
            "score": score,
            "tokens": tokens,
            "game_over_at": game_over_at,
            "winner": winner,
        },
    )
    return build(
        DealBlock,
        {
            "steps": Steps(records),
            "records": tuple(records),
            "summary": summary,
            "branches": tuple(branches),
            "problems": tuple(ctx.problems[first:]),
            "checkpoint": checkpoint,
        },
    )


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
    if deals is None:
        deals = unpack_deals(document, source=source)
    ctx = game_context(document, source=source)
    steps: list[Record] = []  # built when read (engine.steps)
    summaries: list[DealSummary] = []
    branches: list[Branch] = []
    key = (source, meta, summary_only)
    checkpoints: list[Checkpoint] = []
    state = opening(document, ctx, key)
    start = 0
    if previous is not None:
        for cp, raw in zip(previous.checkpoints, document.deals):
            if not isinstance(cp, Checkpoint) or cp.key != key or cp.deal != raw:
                break
            checkpoints.append(cp)
        if checkpoints:
            state = checkpoints[-1]
            start = len(checkpoints)
            steps = list(previous.steps[: state.steps])  # built: the two timelines share states, never records
            summaries = list(previous.deals[: state.summaries])
            branches = list(previous.branches[: state.branches])
            ctx.problems = list(previous.problems[: state.problems])
    for index in range(start, len(document.deals)):
        block = replay_next(ctx, index, document.deals[index], deals[index], state, summary_only=summary_only)
        if not summary_only:
            steps.extend(block.steps.records())
        if block.summary is not None:
            summaries.append(block.summary)
        branches.extend(block.branches)
        state = block.checkpoint
        checkpoints.append(state)
    problem = final_score_problem(source, meta.finalScore, state)
    if problem is not None:
        ctx.problems.append(problem)
    return timeline_of(
        steps=Steps(steps),
        deals=tuple(summaries),
        branches=tuple(branches),
        problems=tuple(ctx.problems),
        state=state,
        players=ctx.players,
        title=meta.title,
        checkpoints=tuple(checkpoints),
        rules=ctx.rules,
    )


def timeline_of(
    *,
    steps: Sequence[GameState],
    deals: tuple[DealSummary, ...],
    branches: tuple[Branch, ...],
    problems: tuple[Problem, ...],
    state: Checkpoint,
    players: tuple[str, ...],
    title: str | None,
    checkpoints: tuple[Checkpoint, ...],
    rules: Ruleset,
) -> Timeline:
    """The timeline of a game replayed up to the loop's ``state`` (after its last deal)."""
    score = state.score
    return build(  # one per game, every field given: the frozen constructor's setattr per field is worth skipping
        Timeline,
        {
            "steps": steps,
            "deals": deals,
            "branches": branches,
            "problems": problems,
            "final_score": tuple(score) if len(score) >= 2 else (score[0], 0),
            "winner": state.winner if state.game_over_at is not None else None,
            "players": players,
            "title": title,
            "extra": {},
            "lowest_rank": rules.lowest_rank,
            "joker": rules.joker,
            "checkpoints": checkpoints,
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


def final_score_problem(source: str, written: list[int] | None, state: Checkpoint) -> Problem | None:
    """The warning for a written ``finalScore`` that the replay (up to ``state``) does not reach."""
    score = state.score
    if written and state.summaries > 0 and list(written) != list(score[: len(written)]):
        return Problem(Place(source=source, path="/metadata/finalScore"), f"finalScore {written!r} differs from the replayed score {list(score)!r}", "rule", "warning")
    return None
