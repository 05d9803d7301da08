"""Alternative lines on air: the operator plays one of a file's branches as a "what if".

A deal's ``alternativeLines`` are replayed by the engine as branches (:mod:`engine.branch`):
steps that start where the line leaves the main line.  ``branch`` puts one on air: the
channel's playhead moves to a **line game**, the main line up to the branch's parent step
followed by the branch's steps, played by the same Director (so play, pause, next, step,
back, speed and a broadcast delay work as on the main line; a delayed output shows the line
when its delay has passed); the line never loops (``loop`` set during a line is the main
line's, from its return).  Every scene of a line game carries the
"ALTERNATIVE LINE" banner and marks the line's cards (:mod:`renderer.altline`); the state
API, the statistics extras and the live analysis read the line game too.  ``mainline``
returns to the main line where it left: the step, its progress and the playing state the
main line had when the line began.

Addressing, as people count: ``deal`` from 1 (the screen's DEAL N), ``line`` from 1 in the
file's order of that deal's ``alternativeLines``, ``game`` from 1 in a match (default: the
game on screen).  During a line, ``seek?step=N`` counts from the line's first step (0).

**A live feed while a line is on air.**  The logger is never refused and nothing it sends is
lost: the channel's game takes every action (stored, acknowledged, on the state of the
program's next return) while the picture stays on the line: the live play is *held*.
``mainline`` returns to where the main line left; a playhead that was following the feed
then catches up with the newest step as a live playhead does (speeding up, or cutting over
a long backlog).  A whole new game (a load, a reset) ends the line: the new game starts.

Refusals are :class:`~overlay.service.errors.Unprocessable` (422) naming what the game has.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.cards import card_name
from engine.state import Branch, DealSummary, GameState, StepKind, Timeline
from renderer.altline import AltLine, LineInfo

from . import feed
from .director import Playhead
from .errors import Unprocessable

__all__ = ["LineGame", "OnAir", "LineInfo", "find_branch", "line_game", "lines_of", "line_list"]


@dataclass(frozen=True)
class LineGame(feed.Loaded):
    """What the Director plays while a line is on air: the main line up to the branch, then
    the branch (``steps``); the branch's game part has the same steps in its ``timeline``,
    whose last deal is the line's, so statistics follow the line.  ``line`` is what the
    picture marks."""

    line: AltLine | None = None


@dataclass(frozen=True)
class OnAir:
    """The line on air and where the main line left."""

    game: LineGame
    branch: Branch
    part: int  # index of the game part (0 for a plain game)
    first: int  # global step of the line's first step
    resume: Playhead  # the main line's playhead when the line went on air
    version: int  # the channel revision under which the line game is shown

    def to_json(self) -> dict[str, object]:
        line = self.game.line
        assert line is not None
        return {
            "deal": line.deal + 1,
            "line": line.line + 1,
            "game": None if line.game is None else line.game + 1,
            "firstStep": self.first,
            "steps": len(self.game.steps),
            "resumeStep": self.resume.step,
        }


def lines_of(timeline: Timeline, deal: int) -> list[Branch]:
    """The branches of deal position ``deal``, in the file's order of its lines."""
    return sorted((b for b in timeline.branches if b.deal == deal), key=lambda b: b.line)


def _action_text(state: GameState) -> str | None:
    """What a step's action plays: the call as EGN writes it (``alone`` added) or the card."""
    a = state.action
    if a is None:
        return None
    if a.kind is StepKind.CALL:
        return None if a.call is None else a.call + (" alone" if state.alone and state.maker == a.seat else "")
    return None if a.card is None else card_name(a.card)


def _line_info(part: feed.Part, branch: Branch, *, match: bool) -> LineInfo:
    tl = part.timeline
    game = part.index + 1 if match else None
    first = branch.steps[0] if branch.steps else None
    a = first.action if first is not None else None
    if first is None or a is None:
        return LineInfo(game, branch.deal + 1, branch.line + 1, None, None, None, None, None, None, None, None, len(branch.steps), None)
    main = next(
        (s for s in tl.steps if s.deal == branch.deal and s.action is not None and s.action.kind is a.kind and s.action.index == a.index),
        None,
    )
    trick = card = call = None
    if a.kind is StepKind.CALL:
        call = (a.index or 0) + 1
    elif a.kind is StepKind.CARD and first.trick is not None:
        trick, card = first.trick.number + 1, len(first.trick.cards)
    seat = a.seat
    player = tl.players[seat] if seat is not None and 0 <= seat < len(tl.players) else None
    last = branch.steps[-1]
    return LineInfo(
        game=game,
        deal=branch.deal + 1,
        line=branch.line + 1,
        at=a.kind.value,
        call=call,
        trick=trick,
        card=card,
        seat=seat,
        player=player or None,
        play=_action_text(first),
        instead=None if main is None else _action_text(main),
        steps=len(branch.steps),
        points=last.deal_points,
    )


def line_list(game: feed.Loaded | None) -> list[LineInfo]:
    """Every alternative line of ``game`` (of each game of a match), in the order ``branch``
    names them: game, deal, then the file's order of the deal's lines."""
    if game is None:
        return []
    out: list[LineInfo] = []
    for part in game.parts:
        tl = part.timeline
        for deal in sorted({b.deal for b in tl.branches}):
            out += [_line_info(part, b, match=game.match) for b in lines_of(tl, deal)]
    return out


def find_branch(game: feed.Loaded | None, channel: str, *, deal: int | None, line: int | None, game_no: int | None, on_screen: int) -> tuple[feed.Part, Branch]:
    """The branch a ``branch`` request names (``deal``, ``line``, ``game_no`` from 1).

    Raises:
        Unprocessable: no game, no such game/deal/line, or the deal has no alternative lines.
    """
    if game is None:
        raise Unprocessable(f"channel {channel!r}: no game loaded, so no alternative line to play")
    if deal is None or line is None:
        raise Unprocessable("branch needs 'deal' and 'line' (both from 1, e.g. branch?deal=3&line=1)")
    if game_no is not None:
        part = next((p for p in game.parts if p.index == game_no - 1), None)
        if part is None:
            have = ", ".join(str(p.index + 1) for p in game.parts)
            raise Unprocessable(f"channel {channel!r}: no game {game_no} in the match (games: {have})")
    else:
        part = game.part_of(on_screen)
    tl = part.timeline
    where = f"game {part.index + 1} of the match" if game.match else "the game"
    if deal > len(tl.deals):
        have = f"deals 1..{len(tl.deals)}" if tl.deals else "no deals yet"
        raise Unprocessable(f"channel {channel!r}: no deal {deal} ({where} has {have})")
    lines = lines_of(tl, deal - 1)
    if not lines:
        with_lines = sorted({b.deal + 1 for b in tl.branches})
        others = f"deals with lines: {', '.join(map(str, with_lines))}" if with_lines else f"{where} has none"
        raise Unprocessable(f"channel {channel!r}: deal {deal} has no alternative lines ({others})")
    found = next((b for b in lines if b.line == line - 1), None)
    if found is None:
        have = ", ".join(str(b.line + 1) for b in lines)
        raise Unprocessable(f"channel {channel!r}: deal {deal} has no line {line} (its lines: {have})")
    if not found.steps:
        raise Unprocessable(f"channel {channel!r}: deal {deal}, line {line} has no steps to play (see the game's problems)")
    return part, found


def _summary(main: DealSummary, last: GameState, last_step: int) -> DealSummary:
    """The line's deal as the statistics read a deal: the main deal's summary with the line's outcome."""
    return replace(
        main,
        dealer=last.dealer,
        up_card=card_name(last.up_card) if last.up_card is not None else None,
        trump=None if last.thrown_in else last.trump_code,
        maker=last.maker,
        alone=last.alone,
        alone_defender=last.alone_defender,
        sit_out=tuple(sorted(last.sit_out)),
        tricks=last.tricks,
        tricks_per_team=last.tricks_per_team,
        points=last.deal_points,
        score_after=last.score,
        complete=last.deal_points is not None,
        last_step=last_step,
    )


def line_game(game: feed.Loaded, part: feed.Part, branch: Branch) -> LineGame:
    """The line game of ``branch`` (a deal of ``part``): the main line up to the branch's
    parent step, then the branch."""
    tl = part.timeline
    local = tuple(tl.steps[: branch.parent_step + 1]) + tuple(branch.steps)
    last = len(local) - 1
    scored = next((i for i in range(last, branch.parent_step, -1) if local[i].deal_points is not None), last)
    deals = tl.deals[: branch.deal] + (_summary(tl.deals[branch.deal], local[scored], scored),)
    timeline = replace(tl, steps=local, deals=deals, branches=(), checkpoints=())
    parts = tuple(p for p in game.parts if p.first_step < part.first_step) + (replace(part, timeline=timeline),)
    first = branch.steps[0]
    first_card = first.action.index if first.kind is StepKind.CARD and first.action is not None and first.action.index is not None else 0
    mark = AltLine(deal=branch.deal, line=branch.line, first_card=first_card, game=part.index if game.match else None)
    return LineGame(
        raw=b"",
        source=game.source,
        document=game.document,
        timeline=timeline if not game.match else game.timeline,
        problems=game.problems,
        parts=parts,
        steps=tuple(game.steps[: part.first_step]) + local,
        match=game.match,
        games_in_file=game.games_in_file,
        line=mark,
    )
