"""The title a game of a match is drawn with: the game's own title and which game it is
("Finals \u2014 Game 2 of 3").  One place, so the pages (the service's scenes) and ``render``
or ``frame`` of the match file draw the same words."""

from __future__ import annotations

from typing import Any

__all__ = ["IN_PROGRESS", "game_label", "part_title"]

#: ``metadata.result.status`` of a match still being played (EMN's MatchResult)
IN_PROGRESS = "IN_PROGRESS"


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
