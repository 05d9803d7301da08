"""Show-day picture fixes (issue 10, items 2, 8, 9, 10, 12), checked on the scene's ops."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from engine.cards import card_name
from engine.generate import generate_game
from engine.load import load_game
from engine.state import GameState, StepKind, Timeline, UpCardState
from renderer.build import build_scene
from renderer.context import Ctx
from renderer.fonts import MIN_TEXT
from renderer.fonts import measure
from renderer.preshow import preshow_state
from renderer.scene import Scene, sample
from renderer.callout import gather_times
from renderer.theme import DEFAULT_THEME
from renderer.timing import DEFAULT_TIMING, Timing
from renderer.view import ElementType, default_view


@lru_cache(maxsize=None)
def timeline(seed: int) -> Timeline:
    return load_game(json.dumps(generate_game(seed)), source=f"gen-{seed}").timeline


def texts(scene: Scene) -> list[str]:
    return [op[5] for op in scene.ops if op[0] == "t"]


def ctx_for(players: list[str]) -> Ctx:
    return Ctx(preshow_state(players), default_view(), DEFAULT_THEME, DEFAULT_TIMING, None)


# item 8: team names --------------------------------------------------------------------
@pytest.mark.parametrize(
    "players, team, expected",
    [
        (["Marguerite Okafor", "Tobias Lindqvist", "Priya Raman", "Declan Whitfield"], 0, "MARGUERITE & PRIYA"),
        (["Orde® Me Up", "A B", "Florida Man", "C D"], 0, "ORDE® & FLORIDA"),
        (["Ann", "Bo", "Cy", "Di"], 1, "BO & DI"),
        (["王小明", "佐藤 健", "김민준", "陳 美玲"], 1, "佐藤 健 & 陳 美玲"),
        (["Bartholomew-Featherstonehaugh-Wolfeschlegelsteinhausen", "x", "Maximiliana-Annunziata-Bartholomea", "y"], 0, "NORTH \u00b7 SOUTH"),
    ],
)
def test_team_label_is_whole_words_that_fit(players: list[str], team: int, expected: str) -> None:
    ctx = ctx_for(players)
    width = 200.0
    label = ctx.team_label(team, "bold", 27, width, ls=0.5)
    assert label == expected
    assert measure("bold", MIN_TEXT, label, 0.5) <= width
    assert "\u2026" not in label


def test_full_names_when_they_fit() -> None:
    ctx = ctx_for(["Al Bo", "Cy Di", "Ed Fu", "Gi Ho"])
    assert ctx.team_label(0, "bold", 27, 400) == "AL BO & ED FU"


def test_score_bug_never_shows_a_fragment() -> None:
    g = generate_game(7, players=["Orde® Me Up", "FLORIDA & BROWNSBACKE® Fan Club", "Q", "Sam Brownsbacke Junior"])
    tl = load_game(json.dumps(g), source="names").timeline
    scene = build_scene(tl.steps[0], size=(1280, 720))
    words = texts(scene)
    assert "ORDE® ME UP & Q" in words  # whole names where they fit
    assert "FLORIDA & SAM" in words  # else the first word of each
    assert "UP" not in words and not any("&" in w and w.endswith("\u2026") for w in words)


# item 9: the trick winner ----------------------------------------------------------------
def _trick_taken(tl: Timeline) -> GameState:
    return next(s for s in tl.steps if s.kind is StepKind.TRICK_TAKEN and s.trick is not None and s.trick.seats[-1] != s.trick.winner)


def test_winning_card_is_drawn_last_and_keeps_its_outline() -> None:
    state = _trick_taken(timeline(2))
    trick = state.trick
    assert trick is not None and trick.winner is not None
    winner = trick.cards[trick.seats.index(trick.winner)]
    scene = build_scene(state)
    sprites = [op[1] for op in scene.ops if op[0] == "sp" and op[1].startswith("f:" + card_name(winner)[:2]) or op[0] == "sp" and any(op[1].startswith("f:" + card_name(c)) for c in trick.cards)]
    assert sprites[-1].startswith("f:" + card_name(winner))
    # the accent outline (stroke only) is fully visible while the cards are gathered
    run = DEFAULT_TIMING.trick_taken.run_time
    mark, gathered, gone = gather_times(run)
    outline_alpha = [op for op in scene.ops if op[0] == "a"]
    assert outline_alpha  # alpha tracks exist
    accent = DEFAULT_THEME.accent
    idx = next(i for i, op in enumerate(scene.ops) if op[0] == "rr" and op[6] is None and op[7] == accent and op[8] == 5)
    alphas = [op[1] for op in scene.ops[max(0, idx - 8) : idx] if op[0] == "a"]
    for t in (mark + 0.01, (mark + gathered) / 2, gathered + 0.01):
        a = 1.0
        for v in alphas:
            a *= sample(scene.tracks[v["k"]], t) if isinstance(v, dict) else float(v)
        assert a > 0.99, t


def test_trick_callout_names_winner_and_card() -> None:
    state = _trick_taken(timeline(2))
    trick = state.trick
    assert trick is not None and trick.winner is not None
    winner = trick.cards[trick.seats.index(trick.winner)]
    scene = build_scene(state)
    rank = "10" if card_name(winner)[0] == "T" else card_name(winner)[0]
    name = state.players[trick.winner].upper()
    assert f"{name} TAKES IT WITH THE {rank}" in texts(scene)  # the card named: "THE A" and its suit
    assert any(e["type"] == "trick-callout" for e in scene.elements)


def test_trick_callout_is_a_view_element_that_can_be_hidden() -> None:
    state = _trick_taken(timeline(2))
    view = default_view()
    hidden = view.model_copy(update={"elements": tuple(e for e in view.elements if e.type is not ElementType.TRICK_CALLOUT)})
    assert not any("TAKES IT WITH" in t for t in texts(build_scene(state, hidden)))


def test_gather_is_slow_enough_for_television() -> None:
    run = Timing().trick_taken.run_time
    mark, gathered, gone = gather_times(run)
    assert mark >= 0.3 and gathered - mark >= 0.4 and gone - gathered >= 0.4


# item 10: the kitty ----------------------------------------------------------------------
def _backs(scene: Scene) -> int:
    return sum(1 for op in scene.ops if op[0] == "sp" and op[1].startswith("b"))


@pytest.mark.parametrize("up_state", [UpCardState.FACE_UP, UpCardState.TURNED_DOWN, UpCardState.TAKEN])
def test_up_card_is_public_and_drawn_once(up_state: UpCardState) -> None:
    states = [s for seed in (1, 2, 3) for s in timeline(seed).steps if s.up_card is not None and s.up_card_state is up_state and s.kind is not StepKind.DEAL_START]
    assert states
    for state in states[:40]:
        if state.action is not None and state.action.call == "Order":
            continue  # the card in flight to the dealer; its kitty copy fades in as it lands
        scene = build_scene(state)
        up = "f:" + card_name(state.up_card)  # type: ignore[arg-type]
        faces = [op[1] for op in scene.ops if op[0] == "sp" and op[1].startswith(up)]
        in_hand = any(c.same(state.up_card) for h in state.hands for c in h)  # type: ignore[arg-type]
        trick = state.trick
        on_table = trick is not None and any(c.same(state.up_card) for c in trick.cards) and state.kind is not StepKind.DEAL_SCORED  # type: ignore[arg-type]
        # the up-card face up exactly once (plus where the dealer holds or has just played it)
        assert len(faces) == 1 + in_hand + on_table, (state.step, up_state, faces)
        assert _backs(scene) == 0  # every hand is face up in the default view: no backs at all


def test_kitty_captions() -> None:
    tl = timeline(2)
    played = next(s for s in tl.steps if s.kind is StepKind.CARD and s.up_card_state is UpCardState.TURNED_DOWN)
    assert "TURNED DOWN" in texts(build_scene(played))
    assert "TURNED" not in texts(build_scene(played))


# item 2: the pre-show picture -----------------------------------------------------------
def test_preshow_shows_title_teams_plates_and_score() -> None:
    players = ["Marguerite Okafor", "Tobias Lindqvist", "Priya Raman", "Declan Whitfield"]
    scene = build_scene(preshow_state(players, score=(3, 5)), title="Finals")
    words = texts(scene)
    for expected in ("FINALS", "STARTING SOON", "MARGUERITE & PRIYA", "TOBIAS & DECLAN", "3", "5", "PRIYA RAMAN", "DECLAN WHITFIELD"):
        assert expected in words, expected
    assert not any(op[0] == "sp" for op in scene.ops)  # no cards
    assert "D" not in words  # no dealer button
    assert not any(w.startswith("DEAL ") for w in words)
