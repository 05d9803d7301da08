"""Golden frames of the renderer at 1920x1080 and 1280x720 (see tests/golden.py for tolerance).

States come from the project's own seeded generated games, found by predicate, so the
goldens need no fixture files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import GameState, StepKind, Timeline
from renderer.build import build_scene
from renderer.raster import raster, to_rgba

PLAYERS = ["Zoë Ångström-Nakamura", "Bartholomew Featherstonehaugh-Wolfeschlegel", "Åsa Ødegård", "Đặng Thị Ngọc Hân"]
CJK_PLAYERS = ["王小明", "佐藤 健", "김민준", "陳 美玲"]


@lru_cache(maxsize=None)
def timeline(seed: int, joker: bool = False, players: bool = False, cjk: bool = False) -> tuple[Timeline, str]:
    names = CJK_PLAYERS if cjk else PLAYERS if players else None
    g = generate_game(seed, ruleset={"joker": True} if joker else None, players=names)
    return load_game(json.dumps(g), source=f"gen-{seed}").timeline, str(g["metadata"].get("title", ""))


def find(seed: int, pred: Callable[[GameState], bool], **kw: bool) -> tuple[GameState, str]:
    tl, title = timeline(seed, **kw)
    return next(s for s in tl.steps if pred(s)), title


def _r2(s: GameState) -> bool:
    return s.kind is StepKind.CALL and bool(s.calls) and s.calls[-1].round == 2


CASES: dict[str, tuple[Callable[[], tuple[GameState, str]], float | None]] = {
    "deal_start": (lambda: find(1, lambda s: s.kind is StepKind.DEAL_START, players=True), None),
    "bidding_round1": (lambda: find(2, lambda s: s.kind is StepKind.CALL and len(s.calls) == 2), 0.8),
    "bidding_round2": (lambda: find(1, _r2), 0.8),
    "loner_sitting_out": (lambda: find(1, lambda s: s.alone and bool(s.sit_out) and s.kind is StepKind.CARD), None),
    "joker_game": (
        lambda: find(3, lambda s: s.kind is StepKind.CARD and s.action is not None and s.action.card is not None and s.action.card.joker, joker=True),
        None,
    ),
    "trick_half_played": (lambda: find(2, lambda s: s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 2 and len(s.tricks) == 1), None),
    "card_in_flight": (lambda: find(2, lambda s: s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 3 and len(s.tricks) == 2), 0.2),
    "deal_scored": (lambda: find(2, lambda s: s.kind is StepKind.DEAL_SCORED and bool(s.deal_points) and max(s.deal_points or (0,)) > 0), 1.5),
    "game_over": (lambda: find(2, lambda s: s.kind is StepKind.GAME_OVER), None),
    "cjk_names": (lambda: find(4, lambda s: s.kind is StepKind.CALL and s.trump_code is not None, cjk=True), 0.8),
}


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)], ids=["1080", "720"])
@pytest.mark.parametrize("name", list(CASES))
def test_golden_frame(name: str, size: tuple[int, int], golden: object) -> None:
    make, t = CASES[name]
    state, title = make()
    scene = build_scene(state, title=title, size=size)
    frame = to_rgba(raster(scene, scene.duration if t is None else t))
    golden.check(f"render/{name}_{size[1]}", frame)  # type: ignore[attr-defined]


def test_golden_broadcast_long_names_720(golden: object) -> None:
    """A broadcast picture at 720p with what used to be cut or too small (issue 24, items 4
    and 5): long player names on plates with the dealer button and the MAKER tab, a long
    pair of names on the win bar, the event title with its subtitle, BEST tabs, bower tabs,
    the bidding table's values and the win graph's marks, every extra of the analysis layer."""
    from renderer.analysis import GameAnalysis, build_analysis_layer, compose, default_extras
    from renderer.extras import build_broadcast_scene
    from renderer.matchdata import MatchData
    from renderer.view import default_view

    # seat 1 deals and makes trump in deal 2; seats 0 and 2 are "LLAMA & LEFTYKNAPP"
    names = ["Llama", "Robert Edwardson-MacAllister", "LeftyKnapp", "Marguerite Okafor-Whitfield"]
    tl = load_game(json.dumps(generate_game(2, players=names)), source="gen-2").timeline
    steps = tl.steps
    analysis = GameAnalysis(steps)

    def marked(i: int) -> bool:  # a card step whose player to act has a best card to mark
        losses = analysis.reading(i).get("cards") or ()
        return any(c["trickLoss"] or c["pointLoss"] for c in losses)

    i = next(i for i, s in enumerate(steps) if s.kind is StepKind.CARD and s.maker == s.dealer == 1 and s.deal >= 1 and marked(i))
    view = default_view().model_copy(update={"extras": default_extras()})
    match = MatchData(event_title="Harbour Open 2026 \u00b7 Final Table", event_subtitle="Semi-final \u00b7 Table 2")
    scene = build_broadcast_scene(steps[i], view, match=match, size=(1280, 720))
    scene = compose(scene, build_analysis_layer(steps[i], view, analysis(i), match=match, size=(1280, 720)))
    golden.check("render/broadcast_long_names_720", to_rgba(raster(scene, scene.duration)))  # type: ignore[attr-defined]
