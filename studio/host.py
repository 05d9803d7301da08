"""What the studio needs from the service that mounts it, as a :class:`typing.Protocol`.

The studio sits below ``overlay/`` (it imports ``engine`` and ``renderer``), so it cannot
import the overlay's store, channels or auth without a cycle.  The overlay hands an object
with these methods to :func:`studio.app.mount`; tests can hand their own.  What crosses is
typed by the models both sides import: a channel's settings document
(:class:`renderer.settings.ChannelSettings`), its game's steps
(:class:`engine.state.GameState`) and alternative lines (:class:`renderer.altline.LineInfo`);
the schema and the outputs' default views the studio reads from :mod:`renderer.settings`
itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from engine.state import GameState
from renderer.altline import LineInfo
from renderer.settings import ChannelSettings
from renderer.timing import TakeTransition

from .games import Held

__all__ = ["Handler", "StudioHost", "TRANSPORT_OPS"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: what a control key may do: transport only (view switching has its own link)
#: (``branch`` and ``mainline``: an alternative line of the file on air and back)
TRANSPORT_OPS: tuple[str, ...] = ("play", "pause", "toggle", "next", "step", "back", "live", "auto", "loop", "speed", "seek", "branch", "mainline")


class StudioHost(Protocol):
    """The service side of the studio: auth, channels, control, settings documents, uploads.

    Methods raise the host's own typed errors (the host's error middleware maps them to
    HTTP statuses); the studio never catches them.
    """

    @property
    def uploads(self) -> Path:
        """Folder (under the data folder) where uploaded images are stored and served from."""
        ...

    def guard(self, handler: Handler) -> Handler:
        """``handler`` behind the service's API token check."""
        ...

    def channel_ids(self) -> list[str]:
        """Ids of the existing channels."""
        ...

    def settings_problem(self, channel: str) -> str | None:
        """Why the channel's stored settings were refused (it runs on defaults), or None."""
        ...

    def timeline(self, channel: str) -> Sequence[GameState]:
        """The steps of the channel's game (the scrubber reads each one's deal and kind)."""
        ...

    def lines(self, channel: str) -> Sequence[LineInfo]:
        """The alternative lines of the channel's game (each game of a match), for the picker,
        in the order ``branch`` names them."""
        ...

    def control(self, channel: str, op: str, params: Mapping[str, str]) -> dict[str, Any]:
        """Run a transport command (``op`` one of :data:`TRANSPORT_OPS`, ``params`` its
        arguments as a query string gives them) and return the playhead as the service's
        control API answers it (JSON)."""
        ...

    def switch_view(self, channel: str, index: int, output: str, transition: TakeTransition | None = None) -> ChannelSettings:
        """Put the channel's named view number ``index`` (0-based) on ``output``; returns the
        settings.  Program and clean go over to it by ``transition`` (None: the channel's
        ``timing.take``); the preview cuts."""
        ...

    def take(self, channel: str, transition: TakeTransition | None = None) -> ChannelSettings:
        """Put the preview output's view on program and clean by ``transition`` (None: the
        channel's ``timing.take``; :mod:`renderer.take`); returns the settings."""
        ...

    def settings_of(self, channel: str) -> ChannelSettings:
        """The channel's settings document as stored."""
        ...

    def fire_cue(self, channel: str, cue: str) -> dict[str, Any]:
        """Fire the rundown cue of id ``cue`` (``next``: the one after the cue fired last, the
        first at the start); returns what was fired (``cue``, ``name``, ``index`` from 1,
        ``cues``, ``next``).

        Raises the host's NotFound for a cue the rundown lacks, its BadRequest for ``next``
        past the last cue."""
        ...

    def link_targets(self, channel: str) -> dict[str, Any]:
        """What the channel's Stream Deck links may name now: ``views`` (the named views'
        names, in order), ``cues`` (the rundown's, each ``id`` and ``name``), ``games`` (a match's games, each with its deal count; one entry for
        a game) and ``lines`` (its alternative lines)."""
        ...

    def link_state(self, channel: str) -> dict[str, Any]:
        """A Stream Deck's button feedback: what is on air (the program's view and where it
        is: game, deal, step), playing or paused, live or not, the speed, the line."""
        ...

    def control_key(self, channel: str, *, renew: bool = False) -> str | None:
        """``renew``: a new control key for Stream Deck links, which ends every link made with
        the old one; it is shown this once (only its hash is kept).  Else None."""
        ...

    def has_control_key(self, channel: str) -> bool:
        """The channel has a control key (links made with it work)."""
        ...

    def revoke_control_key(self, channel: str) -> None:
        """Forget the channel's control key: every link made with it stops working."""
        ...

    def check_control_key(self, channel: str, key: str) -> bool:
        """True if ``key`` is the channel's current control key (constant-time compare)."""
        ...

    # -- games in and every table at a glance (studio.games, the Game tab, the overview)

    def game_held(self, channel: str) -> Held | None:
        """What the channel holds (its game's or match's JSON and source), None when empty."""
        ...

    def load_game(self, channel: str, data: bytes, *, source: str) -> dict[str, Any]:
        """Load a (different) game or match into the channel, leniently, from its first step;
        returns the ack.  Raises the engine's error (with its place) for a file it cannot read."""
        ...

    def put_game(self, channel: str, data: bytes, *, source: str) -> dict[str, Any]:
        """Give the channel a longer version of its game (leniently; the playhead stays where
        it is: the steps it had are the same steps); returns the ack."""
        ...

    def game_problems(self, channel: str) -> list[dict[str, Any]]:
        """The engine's problems with the channel's game, each with its place (``source``,
        ``deal``, ``phase``, ``phaseType``, ``call``, ``trick``, ``card``, ``path``, ``message``)."""
        ...

    def allowed_dirs(self) -> list[str]:
        """Folders the server may read files from for load and follow (empty: any)."""
        ...

    def reach(self) -> dict[str, Any]:
        """Whether other devices can reach the server (``network``: it listens beyond this
        computer) and the IPv4 ``addresses`` they may use (the studio's links for a tablet)."""
        ...

    def waiting_pages(self) -> list[dict[str, Any]]:
        """Pages open on a channel that does not exist: ``channel``, ``requests``, ``error``,
        ``age`` (seconds since the last request)."""
        ...
