"""Which game of a match is on air, and the games each side won before it: the label the
title element draws on its last line ("GAME 2 OF 3 \u00b7 MATCH 1\u20130 \u00b7 DEAL 1"),
under an event title too, and the state messages' ``gameTitle`` ("Finals \u2014 Game 2 of
3 \u00b7 match 1\u20130").  One place, so the pages (the service's scenes), ``render`` and
``frame`` of the match file, the studio and the logger say the same words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from engine.load import LoadedGame, LoadedMatch

__all__ = ["IN_PROGRESS", "MatchGame", "Played", "game_label", "game_labels", "games_won", "index_of", "labels_of", "part_title", "won_after"]

#: ``metadata.result.status`` of a match still being played (EMN's MatchResult)
IN_PROGRESS = "IN_PROGRESS"


@dataclass(frozen=True)
class MatchGame:
    """A game of a match as its scenes draw it: its ``label`` ("Game 2 of 3 \u00b7 match
    1\u20130") on the title's last line, and ``won``, the games each team (seats 0 and 2
    first) won before it, which the game-over banner carries on (None: the partnerships
    changed, no team score)."""

    label: str
    won: tuple[int, int] | None = None

    def after(self, winner: int) -> tuple[int, int] | None:
        """The games won once team ``winner`` has won this one."""
        return won_after(self.won, winner)


def won_after(won: tuple[int, int] | None, winner: int) -> tuple[int, int] | None:
    """Games won ``won`` (None: no team score) with one more for team ``winner``."""
    if won is None:
        return None
    return (won[0] + (winner == 0), won[1] + (winner == 1))


def game_label(index: int, total: int, match: Any) -> str:
    """ "Game 2 of 3" for game ``index`` (from 0) of the EMN document ``match`` listing
    ``total`` games; "Game 2" while the match says it is in progress (how many will be
    played is not known yet)."""
    meta = match.get("metadata") if isinstance(match, dict) else None
    result = meta.get("result") if isinstance(meta, dict) else None
    if isinstance(result, dict) and result.get("status") == IN_PROGRESS:
        return f"Game {index + 1}"
    return f"Game {index + 1} of {total}"


def part_title(title: str | None, label: str | None) -> str | None:
    """``title`` with the game's ``label`` (None: a plain game, its own title)."""
    if label is None:
        return title
    return f"{title} \u2014 {label}" if title else label


class Played(NamedTuple):
    """A game of a match as its label needs it: its index in the file (``place``), its seats'
    names (seat 0 first), and the team that won it (0: seats 0 and 2; None: not over)."""

    place: int
    players: Sequence[str]
    winner: int | None


def _sides(players: Sequence[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    if len(players) != 4:
        return None
    return frozenset((players[0], players[2])), frozenset((players[1], players[3]))


def games_won(before: Sequence[Played], players: Sequence[str]) -> tuple[int, int] | None:
    """Games won by each team of the game whose seats are ``players`` (seats 0 and 2 first, as
    the score panel lists them) in the games ``before`` it; None when a game before it was
    played by other partnerships (a match that changes partners has no team score)."""
    sides = _sides(players)
    if sides is None or len(sides[0]) != 2 or len(sides[1]) != 2:
        return None
    won = [0, 0]
    for game in before:
        theirs = _sides(game.players)
        if theirs is None or set(theirs) != set(sides):
            return None
        if game.winner in (0, 1):
            won[sides.index(theirs[game.winner])] += 1
    return won[0], won[1]


def game_labels(match: Any, total: int, games: Sequence[Played]) -> list[MatchGame]:
    """Each of ``games`` (the readable games of the EMN document ``match``, which lists
    ``total``) as its scenes draw it: which game it is and, from the second on, the games each
    team won before it ("Game 2 of 3 \u00b7 match 1\u20130", the team of seats 0 and 2
    first, as the score panel lists the teams; none while no game before it is won)."""
    out = []
    for k, game in enumerate(games):
        label = game_label(game.place, total, match)
        score = games_won(games[:k], game.players)
        if score is not None and score != (0, 0):  # 0-0: the games before it are not over (a file cut short)
            label = f"{label} \u00b7 match {score[0]}\u2013{score[1]}"
        out.append(MatchGame(label, score))
    return out


def index_of(game: LoadedGame, pos: int) -> int:
    """A match's game's index in the file: the engine names it "<source> game <i>" (``pos``,
    its place among the games read, when the name says nothing)."""
    tail = game.source.rsplit(" game ", 1)[-1]
    return int(tail) if tail.isdigit() else pos


def labels_of(loaded: LoadedMatch) -> dict[int, MatchGame]:
    """Each game the engine read of a match as its scenes draw it, by its index in the file."""
    listed = loaded.match.get("games") if isinstance(loaded.match, dict) else None
    total = max(len(listed) if isinstance(listed, list) else 0, len(loaded.games))
    played = []
    for pos, g in enumerate(loaded.games):
        steps = g.timeline.steps
        last = steps[-1] if len(steps) else None
        played.append(Played(index_of(g, pos), tuple(g.timeline.players), last.winner if last is not None and last.game_over else None))
    return {p.place: label for p, label in zip(played, game_labels(loaded.match, total, played))}
