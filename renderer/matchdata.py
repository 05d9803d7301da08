"""Match data: what the producer knows about the match that the game file does not say well.

Team names (a scorebug otherwise guesses them from surnames), player display names, a photo
or flag per player (an uploaded image's id), the event title and subtitle.  Channel data the
renderer draws; the game file is never rewritten: :func:`apply_match` returns a state with
the display names in place of the file's names.
"""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel, ConfigDict, Field

from engine.state import GameState

__all__ = ["PlayerData", "TeamData", "MatchData", "apply_match", "UPLOAD_ID"]

#: an uploaded image's id: its content hash and extension (see studio.uploads)
UPLOAD_ID = r"^[0-9a-f]{32}\.(png|jpg|webp|gif)$"


class PlayerData(BaseModel):
    """One seat's player as the broadcast shows them."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Player")

    name: str = Field("", max_length=64, title="Display name", description="Shown on the name plate; empty = the name in the game file.")
    photo: str | None = Field(None, pattern=UPLOAD_ID, title="Photo or flag", description="An uploaded image (id): drawn as a round badge on the name plate (cropped to fill it).")
    line: str = Field("", max_length=120, title="Intro line", description="A line of text for the player-intro lower third (club, record, hometown).")


class TeamData(BaseModel):
    """One team (seats of the same parity)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Team")

    name: str = Field("", max_length=48, title="Team name", description="Shown on the scorebug, the event title and the player intro; empty = the players' surnames.")


def _players() -> tuple[PlayerData, ...]:
    return tuple(PlayerData() for _ in range(4))


def _teams() -> tuple[TeamData, ...]:
    return (TeamData(), TeamData())


class MatchData(BaseModel):
    """Names and pictures of the match, per channel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_title: str = Field("", max_length=96, title="Event title", description="Shown by the title element; empty = the game file's title.")
    event_subtitle: str = Field("", max_length=96, title="Event subtitle", description="Second line under the event title (round, table, venue).")
    teams: tuple[TeamData, TeamData] = Field(default_factory=_teams, title="Teams", description="Team 0 (seats 1 and 3, N/S) and team 1 (seats 2 and 4, E/W).")  # type: ignore[assignment]
    players: tuple[PlayerData, ...] = Field(default_factory=_players, max_length=10, title="Players", description="Per seat, in seat order (seat 1 = EGN seat 0).")
    intro: int | None = Field(None, ge=0, le=9, title="Player intro", description="Seat (0-based) the player-intro lower third shows now; empty = hidden.")
    stats: str | None = Field(None, pattern=r"^(team-[01]|seat-[0-9])$", title="Statistics lower third", description="Whose statistics the statistics lower third shows now: team-0 (N/S), team-1 (E/W) or seat-N (0-based); empty = hidden.")
    intro_seconds: float = Field(0.0, ge=0, le=600, title="Intro auto-out", description="Seconds a player intro stays on air before it hides by itself; 0 = until Hide.")
    stats_seconds: float = Field(0.0, ge=0, le=600, title="Statistics auto-out", description="Seconds the statistics lower third stays on air before it hides by itself; 0 = until Hide.")

    def title_for(self, file_title: str | None) -> str | None:
        """The title the title element shows: the event title, else the file's (the event
        subtitle has a line of its own: it is never run on after the title, where a long
        title cut it off)."""
        return self.event_title or file_title


def apply_match(state: GameState, match: MatchData | None) -> GameState:
    """``state`` with the display names of ``match`` in place of the file's player names.

    Pure: returns the same object when nothing changes, so scene caches keyed by state keep working.
    """
    if match is None or not any(p.name for p in match.players):
        return state
    names = list(state.players)
    for seat, p in enumerate(match.players[: len(names)]):
        if p.name:
            names[seat] = p.name
    return dataclasses.replace(state, players=tuple(names))
