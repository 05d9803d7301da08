"""Live feed: whole games, single actions and followed files, turned into new timelines.

No rules live here.  A single action is pushed onto the engine's live game
(:class:`engine.live.LiveGame`), which writes it into the last deal, replays that deal
alone and judges it: an action whose replay reports a new problem is refused with the
engine's own text (file, deal, phase, index).  Its cost does not grow with the game.

A match (``.emn``) loads as every game it holds, played one after the other: its
:attr:`Loaded.steps` run through game 1, then game 2...; :attr:`Loaded.parts` says where each
game starts and how to label it ("Game 2 of 6 · match 1–0"; "Game 2" while the match is in
progress: :mod:`renderer.gametitle`).  A plain game is a single part.  Single actions write
into a match's last game: the logger's next game at the same table (:func:`next_game_bytes`)
makes the match it is played in.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from engine.errors import EgnError, Place, Problem, SchemaError
from engine.live import Change, LiveAction, LiveGame, actions_of  # actions_of: re-exported (benchmarks, tests)
from engine.load import MAX_INPUT, LoadedGame
from engine.state import GameState, Timeline
from engine.validate import validate_document
from renderer.gametitle import IN_PROGRESS, MatchGame, index_of, labels_of, part_title
from studio.games import Held, append_games

from .errors import BadRequest, TooLarge, Unprocessable
from .protocol import ActionIn, FeedGame

__all__ = [
    "Part",
    "Loaded",
    "load_bytes",
    "push_action",
    "live_of",
    "next_game_bytes",
    "with_live_game",
    "replay_log",
    "compare",
    "new_problems",
    "new_warnings",
    "document_bytes",
    "digest",
    "feed_game_bytes",
    "actions_of",
]



@dataclass(frozen=True)
class Part:
    """One game of what a channel plays (the only one, or one game of a match)."""

    index: int  # game index in the match file (0 for a plain game)
    timeline: Timeline
    first_step: int  # global step index of the game's first state
    #: which game of a match this is, as its scenes draw it (renderer.gametitle; None: a plain game)
    match_game: MatchGame | None
    #: the engine's problems with this game (a match's; a plain game's are the Loaded's)
    problems: tuple[Problem, ...] = ()

    @property
    def label(self) -> str | None:
        """ "Game 2 of 6 \u00b7 match 1\u20130" (None for a plain game)."""
        return None if self.match_game is None else self.match_game.label

    @property
    def title(self) -> str | None:
        """The game's own title and, in a match, which game (the state messages' ``gameTitle``;
        a scene draws the label on the title's last line, under an event title too)."""
        return part_title(self.timeline.title, self.label)


@dataclass(frozen=True)
class Loaded:
    """A game (or match) the engine accepted: the bytes kept on disk and what they replay to.

    ``timeline`` is the game's replay; for a match it is the first game's (single actions
    write into a match's last game, :func:`push_action`).  ``steps`` is what the Director plays
    (a plain game's are its timeline's steps, not copied: a game 3,000 steps long grows by
    one action without a pass over them).

    ``data`` and ``digest`` are the stored bytes and their SHA-256: given for a game that
    arrived whole (``raw``), made from the live game only when asked for a game an action
    made (the store writes the game every few actions, not on each: :mod:`overlay.service.store`).
    """

    source: str
    document: dict[str, Any]  # EGN JSON (what single actions edit); EMN JSON for a match
    timeline: Timeline
    problems: tuple[Problem, ...]
    parts: tuple[Part, ...] = ()
    steps: Sequence[GameState] = ()
    match: bool = False
    games_in_file: int = 1
    #: the bytes as they arrived (None: the live game's, made when ``data`` is read)
    raw: bytes | None = field(default=None, repr=False, compare=False)
    #: the engine's load (of a match: its last game's), and the live game single actions are
    #: pushed onto (made from the load on the first action, then handed from game to game)
    engine: LoadedGame | None = field(default=None, repr=False, compare=False)
    live: LiveGame | None = field(default=None, repr=False, compare=False)
    _firsts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.parts:
            object.__setattr__(self, "parts", (Part(0, self.timeline, 0, None),))
            object.__setattr__(self, "steps", self.timeline.steps)
        object.__setattr__(self, "_firsts", tuple(p.first_step for p in self.parts))

    @cached_property
    def data(self) -> bytes:
        """The game's bytes as stored: as they arrived, or the live game's compact JSON (a
        match's: its EMN JSON, the live game as its last game)."""
        if self.raw is not None:
            return self.raw
        if self.match:
            return document_bytes(self.document)
        return b"" if self.live is None else self.live.to_egn_bytes()

    @cached_property
    def digest(self) -> str:
        """SHA-256 of :attr:`data` (a whole game sent again with the same bytes is no change)."""
        return digest(self.data)

    def part_of(self, step: int) -> Part:
        """The game that global step ``step`` belongs to."""
        i = bisect.bisect_right(self._firsts, step) - 1
        return self.parts[max(i, 0)]

    def slim(self) -> Loaded:
        """The same replay without the stored bytes or the live game (kept for delayed outputs)."""
        return replace(self, raw=b"", live=None)


def load_bytes(data: bytes, *, source: str, strict: bool = True, previous: Loaded | None = None) -> Loaded:
    """Load a game of any supported format (JSON ``.egn``, ``.egnb``, ``.emn``).

    ``strict`` refuses schema problems (the live feed); lenient repairs and lists them.
    ``previous`` (the channel's current game) lets the engine replay only the deals that
    changed.  A match loads every game it holds (lenient: games the engine cannot read are
    left out, and the others keep their numbers).

    Raises:
        TooLarge: more than :data:`MAX_INPUT` bytes.
        EgnError: the engine's typed error for a document it cannot accept.
    """
    from engine.load import LoadedMatch, load_any

    if len(data) > MAX_INPUT:
        raise TooLarge(f"{source}: input of {len(data)} bytes is over the {MAX_INPUT} byte cap")
    if not data.strip():
        raise BadRequest(f"{source}: empty input")
    prev = previous.timeline if previous is not None and not previous.match else None
    loaded = load_any(data, source=source, strict=strict, previous=prev)
    if isinstance(loaded, LoadedMatch):
        return _match(data, loaded, source=source)
    doc = loaded.document
    document = doc.to_json() if hasattr(doc, "to_json") else dict(doc)
    if not strict:
        _refuse_blank(document, loaded.all_problems, source=source)
    return Loaded(
        raw=bytes(data),
        source=source,
        document=document,
        timeline=loaded.timeline,
        problems=tuple(loaded.all_problems),
        engine=loaded,
    )


def _refuse_blank(document: dict[str, Any], problems: tuple[Problem, ...], *, source: str) -> None:
    """A lenient load may repair a document, but not into a game with nobody at the table:
    ``{}`` or a truncated save would otherwise blank a channel that had a good game.

    Raises:
        EgnError: the engine's first error about the document (typed as the engine typed it).
    """
    metadata = document.get("metadata")
    if isinstance(metadata, dict) and metadata.get("players"):
        return
    first = next((p for p in problems if p.severity == "error"), None)
    if first is not None:
        raise first.error()
    raise SchemaError("the game lists no players", Place(source=source, path="/metadata/players"))


def _match(data: bytes, loaded: Any, *, source: str) -> Loaded:
    games = loaded.games
    if not games:
        raise SchemaError("the match holds no games the engine can read", Place(source=source))
    listed = loaded.match.get("games") if isinstance(loaded.match, dict) else None
    total = max(len(listed) if isinstance(listed, list) else 0, len(games))
    labels = labels_of(loaded)
    parts: list[Part] = []
    steps: list[GameState] = []
    problems: list[Problem] = []
    for pos, g in enumerate(games):
        index = index_of(g, pos)
        parts.append(Part(index, g.timeline, len(steps), labels[index], tuple(g.all_problems)))
        steps.extend(g.timeline.steps)
        problems.extend(g.all_problems)
    return Loaded(
        raw=bytes(data),
        source=source,
        document=dict(loaded.match),
        timeline=games[0].timeline,
        problems=tuple(problems),
        parts=tuple(parts),
        steps=tuple(steps),
        match=True,
        games_in_file=total,
        engine=games[-1],
    )


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def feed_game_bytes(message: FeedGame) -> bytes:
    """The bytes of a whole game sent on a feed socket (a JSON ``document``, or ``data`` as
    text or base64), as a ``PUT …/game`` body: what the owner loads, on one box and when
    another process forwards the frame (:mod:`overlay.cluster.relay`).

    Raises:
        BadRequest: neither ``document`` nor ``data``, or ``data`` that is not base64.
    """
    if message.document is not None:
        return json.dumps(message.document, ensure_ascii=False).encode()
    if message.data is None:
        raise BadRequest("game message needs 'document' or 'data'")
    if message.base64:
        try:
            return base64.b64decode(message.data, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("game 'data' is not valid base64") from None
    return message.data.encode()


def document_bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _first_changed_deal(old: dict[str, Any], new: dict[str, Any]) -> int | None:
    """First deal whose JSON differs (0 when anything outside the deals differs)."""
    if any(old.get(k) != new.get(k) for k in set(old) | set(new) if k != "deals"):
        return 0
    a, b = old.get("deals", []), new.get("deals", [])
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def compare(old: Loaded | None, new: Loaded) -> tuple[int, int | None]:
    """How ``new`` differs from ``old``, the game it replaces: ``(shared, first)``.

    ``shared``: how many leading steps of ``new`` are equal states (hands included) to
    ``old``'s, so their pictures are the same and a new revision need not draw them again
    (0 with no old game, for a match or a changed title: what a scene shows besides the
    state).  ``first``: the first step that replays differently, hands aside (see
    :func:`_played`; None: identical).  The replay is a function of the document, so the
    steps of the deals before the first changed deal are equal and are not compared.
    """
    if old is None:
        return 0, (0 if len(new.steps) else None)
    if old.match or new.match:
        return 0, _first_unequal(old.steps, new.steps, 0)
    a, b = old.timeline.steps, new.timeline.steps
    n = min(len(a), len(b))
    deal = _first_changed_deal(old.document, new.document)
    deals = old.timeline.deals
    if deal is None:
        equal = n
    elif len(deals) == len(old.document.get("deals", [])):
        equal = min(deals[deal].first_step if deal < len(deals) else len(a), n)
    else:
        equal = 0
    while equal < n and a[equal] == b[equal]:
        equal += 1
    shared = equal if old.timeline.title == new.timeline.title else 0
    if deal is None and len(a) == len(b):
        return shared, None
    return shared, _first_unequal(a, b, equal)


def _first_unequal(a: Any, b: Any, start: int) -> int | None:
    for i in range(start, min(len(a), len(b))):
        if a[i] != b[i] and _played(a[i]) != _played(b[i]):
            return i
    if len(a) != len(b):
        return min(len(a), len(b))
    return None


def _played(state: Any) -> Any:
    """A step without its hands.

    Hands not given in the file are worked out from the cards each seat plays later, so
    every new card also fills in the hands of earlier steps.  That is not a correction of
    what happened: only a change in the actions (calls, cards, tricks, score...) is.
    """
    return replace(state, hands=(), hands_known=(), hands_recorded=()) if isinstance(state, GameState) else state


def new_warnings(old: Loaded | None, new: Loaded) -> list[str]:
    """The engine's warnings in ``new`` that ``old`` did not have, as text (for the ack)."""
    seen = {str(p) for p in (old.problems if old else ())}
    return [str(p) for p in new.problems if p.severity != "error" and str(p) not in seen]


def new_problems(old: Loaded | None, new: Loaded) -> list[Problem]:
    """Problems of ``new`` that ``old`` did not have (errors only)."""
    seen = {str(p) for p in (old.problems if old else ())}
    return [p for p in new.problems if p.severity == "error" and str(p) not in seen]


# --------------------------------------------------------------------------- actions


def push_action(base: Loaded | None, action: ActionIn, *, source: str) -> tuple[Loaded, Change]:
    """The game after ``action``, judged by the engine's live game (:mod:`engine.live`): it
    writes the action into the last deal only, validates and replays that deal, and refuses
    the action for an error the deal did not have, as a reload of the whole game did.
    With the game, the engine's :class:`~engine.live.Change` against ``base``: which steps
    stand (their scenes too) and which changed, and the warnings the action brought.

    A match takes the action into its last game (the one being played at the table): the
    games before it stand, and the change's steps count in the whole match.

    Raises:
        BadRequest: no game loaded, or a match whose last game the engine could not read.
        EgnError: the engine refused the action (its place and text).
    """
    if base is None:
        raise BadRequest(f"{source}: no game loaded: PUT a game (with players) before sending actions")
    live = live_of(base, source=source).copy()  # the channel's game changes only once the action is stored
    change = live.push(
        LiveAction(
            action.kind,
            call=action.call,
            alone=action.alone,
            alone_defender=action.alone_defender,
            card=action.card,
            dealer=action.dealer,
            up_card=action.up_card,
            deal_number=action.deal_number,
            player_cards=None if action.player_cards is None else tuple(tuple(h) for h in action.player_cards),
        )
    )
    timeline = live.timeline
    if not base.match:
        return Loaded(source=source, document=live.to_egn(), timeline=timeline, problems=timeline.problems, live=live), change
    last = base.parts[-1]
    offset = last.first_step
    game = with_live_game(base, live)
    moved = Change(
        shared=offset + change.shared,
        first=None if change.first is None else offset + change.first,
        steps=change.steps,
        total=offset + change.total,
        warnings=change.warnings,
    )
    return game, moved


def live_of(game: Loaded, *, source: str | None = None) -> LiveGame:
    """The engine's live game that actions are pushed onto: a plain game's, or the last game
    of a match (never changed here: :meth:`LiveGame.copy` before a push).

    Raises:
        BadRequest: a match whose last game the engine could not read (it was left out).
    """
    if game.live is not None:
        return game.live
    if game.match:
        if game.engine is None or game.parts[-1].index != game.games_in_file - 1:
            raise BadRequest(f"{source or game.source}: the match's last game could not be read, so it cannot take actions: PUT the whole match")
        return LiveGame.from_loaded(game.engine)
    if game.engine is not None:
        return LiveGame.from_loaded(game.engine)
    return LiveGame(validate_document(game.document, source=source or game.source, reference=False), source=source or game.source, problems=game.problems, timeline=game.timeline)


def with_live_game(game: Loaded, live: LiveGame) -> Loaded:
    """``game`` with ``live`` as its game (a match: as its last game; the games before it
    and their steps stand)."""
    timeline = live.timeline
    if not game.match:
        return Loaded(source=game.source, document=live.to_egn(), timeline=timeline, problems=timeline.problems, live=live)
    last = game.parts[-1]
    offset = last.first_step
    entries = list(game.document.get("games") or [])
    entries[-1] = {**entries[-1], "gameData": live.to_egn()}
    parts = (*game.parts[:-1], Part(last.index, timeline, offset, last.match_game, timeline.problems))
    return Loaded(
        source=game.source,
        document={**game.document, "games": entries},
        timeline=game.timeline if len(game.parts) > 1 else timeline,
        problems=tuple(p for part in parts for p in part.problems),
        parts=parts,
        steps=(*game.steps[:offset], *timeline.steps),
        match=True,
        games_in_file=game.games_in_file,
        live=live,
    )


def next_game_bytes(game: Loaded, *, date: str) -> bytes:
    """The match (EMN JSON) of ``game`` and a next game at the same table, to log: the last
    game's players, rules and title, no deals yet.  A plain game becomes game 1 of a match;
    the match is marked in progress (its games are labelled "Game 2", not "Game 2 of 2").

    Raises:
        Unprocessable: the game being played is not over.
    """
    last = game.parts[-1]
    states = last.timeline.steps
    if not states or not states[-1].game_over:
        where = f"game {len(game.parts)} of the match" if game.match else "the game"
        raise Unprocessable(f"{game.source}: {where} is not over yet: finish it before the next game")
    current = ((game.document.get("games") or [{}])[-1].get("gameData") or {}) if game.match else game.document
    kept = {k: v for k, v in (current.get("metadata") or {}).items() if k in ("players", "title", "description", "ruleset")}
    metadata = {**kept, "initialScore": [0, 0], "date": date}
    doc: dict[str, Any] = {"fileType": current.get("fileType"), "version": current.get("version"), "metadata": metadata, "deals": []}
    held = Held(document=game.document, match=game.match, source=game.source)
    match = json.loads(append_games(held, document_bytes(doc), source=f"{game.source} next game"))
    meta = match.setdefault("metadata", {})
    meta["result"] = {**(meta.get("result") or {}), "status": IN_PROGRESS}
    return document_bytes(match)


def replay_log(game: Loaded | None, actions: Iterable[tuple[int, str]], *, source: str) -> tuple[Loaded | None, int | None, str | None]:
    """``game`` (a stored snapshot) with the logged actions after it pushed on, in order, as
    they were when accepted: the channel's game at its last action (a restart, a takeover).
    Returns the game, the seq of the last action pushed (None: none) and, when an action
    no longer replays (the engine refuses it now, or its JSON is not an action), why the
    replay stopped there: what replayed is kept.
    """
    seq: int | None = None
    for number, text in actions:
        try:
            action = ActionIn.model_validate_json(text)
            game, _ = push_action(game, action, source=game.source if game is not None else source)
        except (EgnError, BadRequest, ValidationError) as exc:
            return game, seq, f"{source}: logged action {number} does not replay, the game stops before it ({type(exc).__name__}: {str(exc)[:300]})"
        seq = number
    return game, seq, None
