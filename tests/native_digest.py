"""Digests of everything the engine makes of many games, in whichever mode this process runs.

Run as ``python -m tests.native_digest [FIXTURE_FOLDER]`` by ``tests/engine/test_native.py``,
once with ``EUCHRE_OVERLAY_PURE=1`` and once without: the compiled engine must make exactly
what the pure one makes.  Prints one JSON object: the mode, and per case the SHA-256 of the
full replay (the ``repr`` of every state of the timeline and of its branches, the summaries,
every problem), of the summary-only replay, of what a strict load decides (its error, or its
summary: its states are the full replay's), of both binary forms (bytes, decoded documents,
what damaged files raise) and, for some generated games, of a replay that reuses an earlier
one (``previous``, as a live feed does) and of the double-dummy solver's values at every step
of their first two deals' trick play.

The cases: every ``.egn`` of the fixture folder when given (reference games, broken ones
among them), and games of the project's seeded generator over many rulesets, with and
without ``playerCards``, some damaged on purpose (cards swapped between tricks, a card
played twice, calls past the end of the bidding) so the problem paths run too, and games
with alternative lines.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine import native
from engine.generate import generate_game
from engine.load import LoadedGame, load_game
from tests.lines import lined_game

#: rulesets the generated games cycle through
RULESETS: list[dict[str, Any]] = [
    {},
    {"joker": True},
    {"min_rank": 7},
    {"allow_no_trump": True, "defend_alone": True},
    {"fast_break": True, "loner_lead": "LEFT_OF_LONER"},
    {"canadian": True, "std": True},
    {"four_trick_tokens": True, "loner_march_score": 5, "loner_euchred_score": 3},
    {"winning_score": 5},
    {"winning_score": 11, "joker": True, "allow_no_trump": True},
]
GENERATED = 72  # games of the generator (eight per ruleset)
#: generated games whose double-dummy values are digested too: undamaged (seed % 4 == 0), each
#: ruleset twice
SOLVED = frozenset(range(0, GENERATED, 4))


def _damaged(doc: dict[str, Any], how: int) -> dict[str, Any]:
    """The game with its first deal broken one of three ways (``how`` 1-3; 0: as it is)."""
    if how == 0:
        return doc
    doc = copy.deepcopy(doc)
    phases = doc["deals"][0]["phases"]
    tricks = next((p["tricks"] for p in phases if p["type"] == "TRICK_PLAY"), None)
    if how == 1 and tricks and len(tricks) > 1:
        tricks[0][0], tricks[1][0] = tricks[1][0], tricks[0][0]  # reneges, cards not in hand
    elif how == 2 and tricks and len(tricks) > 2:
        tricks[2][0] = tricks[0][0]  # a card played twice
    elif how == 3:
        phases[0]["calls"] = list(phases[0]["calls"]) + ["Pass", "h"]  # calls after the bidding ended
    return doc


def cases(fixtures: Path | None) -> Iterator[tuple[str, bytes]]:
    if fixtures is not None:
        for path in sorted(fixtures.rglob("*.egn")):
            yield f"fixture:{path.relative_to(fixtures)}", path.read_bytes()
    for seed in range(GENERATED):
        rules = RULESETS[seed % len(RULESETS)]
        doc = generate_game(seed, ruleset=rules or None, player_cards=seed % 3 != 0, annotate=seed % 4 == 0)
        yield f"generated:{seed}", json.dumps(_damaged(doc, seed % 4)).encode()
    for seed in (7, 11, 19, 23):
        yield f"lines:{seed}", json.dumps(lined_game(seed)).encode()


#: how :func:`canon` writes each type: 0 by ``repr``, 1 an enum member, 2 a tuple or list,
#: 3 a set, 4 a dict, else a dataclass's (``Name(``, field names)
_SHAPES: dict[type, Any] = {}


def _shape(t: type) -> Any:
    if issubclass(t, enum.Enum):
        shape: Any = 1
    elif t in (int, str, float, bool, bytes, type(None)):
        shape = 0
    elif dataclasses.is_dataclass(t):
        shape = (t.__qualname__ + "(", tuple(f.name for f in dataclasses.fields(t)))
    elif issubclass(t, (tuple, list)):
        shape = 2
    elif issubclass(t, (set, frozenset)):
        shape = 3
    elif issubclass(t, dict):
        shape = 4
    else:
        shape = 0
    _SHAPES[t] = shape
    return shape


def canon(obj: Any, memo: dict[int, tuple[Any, str]]) -> str:
    """Every field of ``obj``, recursively, as text: what ``repr`` of the engine's dataclasses
    shows (and the fields it leaves out), 2.4x faster.  ``memo`` (one per game: the states of a
    timeline share their cards, calls and tricks) keeps each object's text by ``id``, with the
    object, so an id reused after a collection is never mistaken."""
    t = type(obj)
    shape = _SHAPES.get(t)
    if shape is None:
        shape = _shape(t)
    if shape == 0:
        return repr(obj)
    if shape == 1:
        return f"{t.__name__}.{obj.name}"
    hit = memo.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if shape == 2:
        out = t.__name__ + "(" + ",".join([canon(x, memo) for x in obj]) + ")"
    elif shape == 3:
        out = t.__name__ + "{" + ",".join(sorted([canon(x, memo) for x in obj])) + "}"
    elif shape == 4:
        out = "{" + ",".join([canon(k, memo) + ":" + canon(v, memo) for k, v in obj.items()]) + "}"
    else:
        head, names = shape
        out = head + ",".join([canon(getattr(obj, n), memo) for n in names]) + ")"
    memo[id(obj)] = (obj, out)
    return out


def _full(game: LoadedGame) -> list[str]:
    tl = game.timeline
    memo: dict[int, tuple[Any, str]] = {}
    parts = [canon(state, memo) for state in tl.steps]
    parts += [canon((b.deal, b.line, b.branch_index, b.parent_step, b.steps), memo) for b in tl.branches]
    parts += [json.dumps(tl.to_json(), sort_keys=True), canon(tl.deals, memo), canon(game.all_problems, memo)]
    return parts


def _attempt(data: bytes, name: str, **options: Any) -> list[str]:
    """What a load makes, or the error it raises (both modes must raise the same)."""
    try:
        game = load_game(data, source=name, **options)
    except ValueError as exc:
        return [f"{type(exc).__name__}: {exc}"]
    if options.get("summary_only") or options.get("strict"):
        # (a strict load replays as the first load did: the states are digested there; here
        # what the strict path itself decides, the outcome and the problems it let through)
        memo: dict[int, tuple[Any, str]] = {}
        return [json.dumps(game.timeline.to_json(), sort_keys=True), canon(game.timeline.deals, memo), canon(game.all_problems, memo)]
    return _full(game)


def _resumed(data: bytes, name: str) -> list[str]:
    """A replay reusing the replay of the game's first half (the live feed's path)."""
    doc = json.loads(data)
    half = copy.deepcopy(doc)
    half["deals"] = half["deals"][: max(1, len(half["deals"]) // 2)]
    earlier = load_game(json.dumps(half), source=name)
    return _full(load_game(data, source=name, previous=earlier.timeline))


def _codecs(data: bytes, name: str) -> list[str]:
    """What the binary codecs make of the game (compiled: their hot paths too): both forms'
    bytes, what decoding them gives, and what a damaged file raises."""
    from engine import codec

    try:
        doc = json.loads(data)
    except ValueError:
        return ["not JSON"]
    out: list[str] = []
    for encode, decode in ((codec.encode_condensed, codec.decode_condensed), (codec.encode_expanded, codec.decode_expanded)):
        try:
            blob = encode(doc, source=name)
        except ValueError as exc:
            out.append(f"{type(exc).__name__}: {exc}")
            continue
        out.append(hashlib.sha256(blob).hexdigest())
        # as written, truncated, one byte flipped (a file the reference writes may not read
        # back: its g124 quirk, which the codecs keep)
        for cut in (len(blob), len(blob) // 3, len(blob) - 2):
            damaged = blob if cut == len(blob) else blob[:cut] if cut == len(blob) // 3 else blob[:cut] + bytes([blob[cut] ^ 0x5A]) + blob[cut + 1 :]
            try:
                out.append(json.dumps(decode(damaged, source=name), sort_keys=True))
            except ValueError as exc:
                out.append(f"{type(exc).__name__}: {exc}")
    return out


def _solved(data: bytes, name: str) -> list[str]:
    """What the double-dummy solver makes of every step of the trick play of the game's first
    two deals: whole-deal tricks and points under best play, the best cards and the value of
    every legal card (one solver through the game, as the analysis keeps it)."""
    from engine.ruleset import Ruleset
    from engine.solve import Solver, position_of

    game = load_game(data, source=name)
    rules = game.document.metadata.ruleset or Ruleset()
    solver = Solver()
    memo: dict[int, tuple[Any, str]] = {}
    out: list[str] = []
    for state in game.timeline.steps:
        position = position_of(state, rules) if state.deal < 2 else None
        if position is not None:
            out.append(canon(solver.analyse(position), memo))
    return out


def digest(name: str, data: bytes) -> str:
    parts = _attempt(data, name) + ["--summary"] + _attempt(data, name, summary_only=True)
    parts += ["--codecs"] + _codecs(data, name)
    parts += ["--strict"] + _attempt(data, name, strict=True)
    if name.startswith("generated:") and int(name.split(":")[1]) % 5 == 0:
        parts += ["--resumed"] + _resumed(data, name)
    if name.startswith("generated:") and int(name.split(":")[1]) in SOLVED:
        parts += ["--solver"] + _solved(data, name)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def main() -> None:
    fixtures = Path(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] else None
    status = native.status()
    digests = {name: digest(name, data) for name, data in cases(fixtures)}
    print(json.dumps({"mode": status.mode, "detail": status.detail, "digests": digests}))


if __name__ == "__main__":
    main()
