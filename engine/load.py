"""Load a game from text or bytes in any EGN form, validate it and replay it.

The form is detected by content, never by file name (:func:`engine.sniff.detect_form`,
which the codecs use too): JSON text (``.egn``, ``.emn``) or a binary file (``.egnb``
condensed/expanded, EMN binary) recognised by its magic byte.
Callers open files; this module only sees text or bytes plus a ``source`` name for errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .gcpause import gc_paused
from .errors import CodecError, EgnError, Place, Problem, SchemaError, SizeLimitError
from .model import EgnDocument
from .repair import parse_document
from .packed import unpack_deals
from .replay import replay
from .sniff import detect_form
from .state import Timeline

__all__ = ["LoadedGame", "LoadedMatch", "load_game", "load_any", "parse_json", "MAX_INPUT"]

#: The reference's cap on EGN input and output (8 MiB; exactly 8 MiB is accepted).
MAX_INPUT = 8 * 1024 * 1024


@dataclass(frozen=True)
class LoadedGame:
    """A validated document, the problems found on the way, and its replay."""

    source: str
    document: EgnDocument
    timeline: Timeline
    problems: tuple[Problem, ...] = ()
    production: dict[str, Any] = field(default_factory=dict)
    upgraded_from: str | None = None
    form: str = "json"  # "json", "condensed", "expanded"

    @property
    def all_problems(self) -> tuple[Problem, ...]:
        return self.problems + self.timeline.problems


@dataclass(frozen=True)
class LoadedMatch:
    """An EMN match: its JSON and each game loaded."""

    source: str
    match: dict[str, Any]
    games: tuple[LoadedGame, ...]
    form: str = "json"


def parse_json(data: bytes | str, *, source: str) -> Any:
    """Parse JSON text (UTF-8, optional BOM) with a typed error naming line and column.

    Raises:
        SizeLimitError: over 8 MiB.
        CodecError: not UTF-8 or not JSON.
    """
    from .codec import parse_json_text

    if len(data) > MAX_INPUT:
        raise SizeLimitError(f"{len(data)} bytes: input is limited to {MAX_INPUT} bytes (8 MiB)", Place(source=source))
    return parse_json_text(data, source=source)


def load_game(data: bytes | str, *, source: str = "<input>", strict: bool = False, previous: Timeline | None = None, summary_only: bool = False) -> LoadedGame:
    """Load one game (JSON or binary EGN) and replay it.

    Lenient (default): schema problems are repaired where possible and collected.
    Strict: the first schema problem raises.  Rule breaches never raise.  ``previous``
    (an earlier replay of the same game) lets the replay reuse the deals that did not
    change — what a live feed wants after each new action.  ``summary_only`` replays
    without building states (see :func:`engine.replay.replay`).

    Raises:
        EgnError: the input cannot be read as an EGN game at all (or, strict, is invalid).
    """
    loaded = load_any(data, source=source, strict=strict, previous=previous, summary_only=summary_only)
    if isinstance(loaded, LoadedMatch):
        if not loaded.games:
            raise SchemaError("the match holds no games", Place(source=source))
        return loaded.games[0]
    return loaded


def load_any(data: bytes | str, *, source: str = "<input>", strict: bool = False, previous: Timeline | None = None, summary_only: bool = False) -> LoadedGame | LoadedMatch:
    """Load a game or a match from any form, detected by content.

    Raises:
        EgnError: unreadable input.
    """
    with gc_paused():  # see engine.gcpause: parsing, validation and replay make many small acyclic values
        return _load_any(data, source=source, strict=strict, previous=previous, summary_only=summary_only)


def _load_any(data: bytes | str, *, source: str, strict: bool, previous: Timeline | None, summary_only: bool) -> LoadedGame | LoadedMatch:
    """:func:`load_any` with the collector paused."""
    if len(data) > MAX_INPUT:
        raise SizeLimitError(f"{len(data)} bytes: input is limited to {MAX_INPUT} bytes (8 MiB)", Place(source=source))
    if not data:
        raise CodecError("empty input", Place(source=source))
    detected = "json" if isinstance(data, str) else detect_form(data)
    form = "json"
    if detected == "json":
        obj = parse_json(data, source=source)
    else:
        from . import codec

        assert isinstance(data, bytes)
        if detected == "emn":
            match = codec.decode_emn(data, source=source, validate=strict)
            return _match(match, source=source, strict=strict, form="emn-binary", summary_only=summary_only)
        form = "expanded" if detected == "expanded" else "condensed"
        obj = codec.decode_bytes(data, source=source, validate=False)  # parse_document validates (or repairs)
    if isinstance(obj, dict) and obj.get("fileType") == "Euchre Match Notation":
        return _match(obj, source=source, strict=strict, form=form, summary_only=summary_only)
    return game_from_json(obj, source=source, strict=strict, form=form, previous=previous, summary_only=summary_only)


def game_from_json(obj: Any, *, source: str, strict: bool = False, form: str = "json", previous: Timeline | None = None, summary_only: bool = False) -> LoadedGame:
    """Validate (or repair) a parsed EGN JSON object, read its packed deals and replay it.

    Raises:
        SchemaError: strict and invalid, or not an EGN object.
    """
    with gc_paused():  # see engine.gcpause: validation and replay make many small acyclic values
        parsed = parse_document(obj, source=source, strict=strict)
        deals = unpack_deals(parsed.document, source=source)
        timeline = replay(parsed.document, source=source, previous=previous, deals=deals, summary_only=summary_only)
    return LoadedGame(
        source=source,
        document=parsed.document,
        timeline=timeline,
        problems=parsed.problems,
        production=dict(parsed.production),
        upgraded_from=parsed.upgraded_from,
        form=form,
    )


def _match(obj: Any, *, source: str, strict: bool, form: str, summary_only: bool = False) -> LoadedMatch:
    from . import codec

    if strict:
        codec.validate_emn(obj, source=source)
    games = []
    for i, game in enumerate(obj.get("games") or []):
        data = game.get("gameData") if isinstance(game, dict) else None
        try:
            games.append(game_from_json(data, source=f"{source} game {i}", strict=strict, form=form, summary_only=summary_only))
        except EgnError:
            if strict:
                raise
    return LoadedMatch(source=source, match=obj, games=tuple(games), form=form)
