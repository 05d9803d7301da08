"""Type that reads and names that fit (issue 24, items 3 and 5), checked on the scene's ops:
the bidding table coloured by value, no "best" where every choice is as good, the fitting
order (tracking, size down to the 720p floor, ellipsis last) and the long names and titles
of a real broadcast."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pytest

from engine.generate import generate_game
from engine.load import load_game
from engine.state import GameState, StepKind, Timeline
from renderer.analysis import AnalysisFrame, CallRow, Reading, build_analysis_layer, default_extras
from renderer.contrast import MIN_CONTRAST, parse_colour, worst_contrast
from renderer.extras import build_broadcast_scene
from renderer.fonts import MIN_TEXT, fit, measure
from renderer.gametitle import MatchGame
from renderer.matchdata import MatchData, PlayerData
from renderer.panels import SIZES, TITLE_GROWTH
from renderer.scene import Scene
from renderer.table import PLATE_W, PLATE_X
from renderer.theme import DEFAULT_THEME
from renderer.view import Extra, ExtraType, default_view

TH = DEFAULT_THEME
LONG = "Robert Edwardson-MacAllister"


@lru_cache(maxsize=None)
def timeline(seed: int = 2, players: tuple[str, ...] | None = None) -> Timeline:
    return load_game(json.dumps(generate_game(seed, players=list(players) if players else None)), source=f"gen-{seed}").timeline


def texts(scene: Scene) -> list[Any]:
    return [op for op in scene.ops if op[0] == "t"]


def words(scene: Scene) -> list[str]:
    return [op[5] for op in texts(scene)]


# item 3: the bidding table and the best marks ------------------------------------------------


def _bidding_state() -> GameState:
    return next(s for s in timeline().steps if s.kind is StepKind.CALL and s.trump_code is None and s.to_act is not None)


def _bidding_layer(values: list[tuple[str, bool, int]]) -> Scene:
    """The bidding table of the first bid, its calls worth ``values`` (call, alone, points
    for the bidder's side: negative = the other side scores)."""
    st = _bidding_state()
    assert st.to_act is not None
    team = st.to_act % 2
    rows = []
    for call, alone, v in values:
        pts = [0, 0]
        pts[team if v >= 0 else 1 - team] = abs(v)
        rows.append(CallRow(call, alone, (3, 2), (pts[0], pts[1])))
    now = Reading(step=st.step, deal=st.deal, to_act=st.to_act, calls=tuple(rows))
    view = default_view().model_copy(update={"extras": (Extra(id="b", type=ExtraType.BIDDING_TABLE, x=96, y=640),)})
    return build_analysis_layer(st, view, AnalysisFrame(now))


def _value_cells(layer: Scene) -> dict[str, tuple[str, str | None]]:
    """Each value's text -> (its ink, the fill of the pill under it or None)."""
    ops = layer.ops
    out: dict[str, tuple[str, str | None]] = {}
    for i, op in enumerate(ops):
        if op[0] == "t" and op[5][:1] in ("+", "\u2212", "0"):
            prev = ops[i - 1]
            pill = prev[6] if prev[0] == "rr" and prev[3] == 80 else None
            out[op[5]] = (op[6], pill)
    return out


def test_a_best_call_that_still_loses_is_red_not_green() -> None:
    cells = _value_cells(_bidding_layer([("Order", False, -1), ("Order", True, -2)]))
    assert cells["\u22121 (3)"][1] == TH.bad  # the best call, marked, on the colour of its value
    assert cells["\u22122 (3)"][1] is None
    for text, (ink, pill) in cells.items():
        assert pill != TH.good and ink != TH.good, text


def test_values_are_coloured_by_value() -> None:
    cells = _value_cells(_bidding_layer([("Order", False, 2), ("Order", True, 1)]))
    assert cells["+2 (3)"][1] == TH.good  # the best, a gain: green
    ink, pill = cells["+1 (3)"]
    assert pill is None and ink != TH.bad and ink != TH.text  # a gain not marked best: a green ink
    gr, gg, gb = parse_colour(ink)[:3]
    assert gg > gr and gg > gb
    neg = _value_cells(_bidding_layer([("Order", False, 0), ("Order", True, -2)]))
    assert neg["0 (3)"][1] is not None and neg["0 (3)"][1] not in (TH.good, TH.bad)  # best, worth nothing: neutral
    r, g, b = parse_colour(neg["\u22122 (3)"][0])[:3]
    assert r > g and r > b  # a loss: a red ink


def test_no_call_is_best_when_every_call_ties() -> None:
    cells = _value_cells(_bidding_layer([("Order", False, -2), ("Order", True, -2)]))
    assert cells and all(pill is None for _, pill in cells.values())


def test_value_inks_read_on_the_panel() -> None:
    layers = [(parse_colour(TH.panel), 1.0), (parse_colour(TH.panel_top), 1.0)]
    for values in ([("Order", False, -1), ("Order", True, -2)], [("Order", False, 2), ("Order", True, 1)]):
        for text, (ink, pill) in _value_cells(_bidding_layer(values)).items():
            under = layers + ([(parse_colour(pill), 1.0)] if pill else [])
            assert worst_contrast(parse_colour(ink), under) >= MIN_CONTRAST, text


def _card_state() -> GameState:
    return next(s for s in timeline().steps if s.kind is StepKind.CARD and s.to_act is not None and len(s.hands[s.to_act]) >= 3)


def _best_layer(losses: dict[str, tuple[int, int]], best: tuple[str, ...]) -> Scene:
    st = _card_state()
    now = Reading(step=st.step, deal=st.deal, to_act=st.to_act, best=best, losses=losses)
    view = default_view().model_copy(update={"extras": default_extras()})
    return build_analysis_layer(st, view, AnalysisFrame(now))


def test_no_card_is_best_when_every_card_is_as_good() -> None:
    from engine.cards import card_name

    st = _card_state()
    assert st.to_act is not None
    hand = [card_name(c) for c in st.hands[st.to_act]]
    assert len(hand) >= 2
    some = _best_layer({hand[0]: (0, 0), hand[1]: (1, 0)}, (hand[0],))
    assert "BEST" in words(some)
    every = _best_layer({c: (0, 0) for c in hand}, tuple(hand))
    assert "BEST" not in words(every)  # neither the tab on a card nor the caption


# item 5: fitting ---------------------------------------------------------------------------


def test_fit_takes_back_spacing_then_size_then_cuts() -> None:
    text = "HARBOUR OPEN 2026 \u00b7 FINAL TABLE"
    full = measure("bold", 28, text, 1.0)
    # a little too wide: the letter spacing gives way, the size stays
    f = fit("bold", 28, text, full - 10, spacing=1.0)
    assert (f.text, f.size) == (text, 28) and f.spacing < 1.0 and f.width <= full - 10
    # too wide without spacing: smaller, never under the floor, whole
    f = fit("bold", 28, text, 300, spacing=1.0)
    assert f.text == text and MIN_TEXT <= f.size < 28 and f.spacing == 0 and f.width <= 300
    # too wide at the floor: cut, at the floor
    f = fit("bold", 28, text, 150, spacing=1.0)
    assert f.text.endswith("\u2026") and f.size == MIN_TEXT and f.width <= 150


# item 5: long names and titles on air --------------------------------------------------------


def _dealer_maker(players: tuple[str, ...]) -> GameState:
    """A card step where the dealer made trump (the plate has the button and the MAKER tab)."""
    return next(s for s in timeline(2, players).steps if s.kind is StepKind.CARD and s.maker is not None and s.maker == s.dealer)


def _box(op: list[Any]) -> tuple[float, float, float, float]:
    _, font, size, x, y, text, _, ls = op
    return x, y - size * 0.72, x + measure(font, size, text, ls), y


def test_a_long_name_fits_a_plate_with_the_dealer_button_and_the_maker_tab() -> None:
    probe = _dealer_maker(("A", "B", "C", "D"))
    players = ["Ann", "Bo", "Cy", "Di"]
    players[probe.dealer] = LONG
    st = _dealer_maker(tuple(players))
    assert st.dealer == st.maker
    scene = build_broadcast_scene(st, size=(1280, 720))
    ops = texts(scene)
    name = next(op for op in ops if op[5] == LONG.upper())
    assert name[2] >= MIN_TEXT  # in view units: 13 px at 720p
    assert {"MAKER", "D"} <= set(words(scene))
    # the name stays inside the plate and clear of the tab on the plate's top edge
    tab = next(op for op in ops if op[5] == "MAKER")
    nx0, ny0, nx1, ny1 = _box(name)
    tx0, ty0, tx1, ty1 = _box(tab)
    assert ny0 >= ty1 or nx1 <= tx0
    assert PLATE_X < nx0 and nx1 <= PLATE_X + PLATE_W  # inside the plate (the hand's units)


def test_a_scorebug_whose_names_do_not_fit_says_its_side_once() -> None:
    """Names too long for the score panel even as first names: the side of the table alone,
    once (it was both the panel's small heading and its name: "EAST · WEST" twice)."""
    players = ("Maximilian Hohenzollern", "Bartholomew Fitzgerald-Worthington", "Anastasiya Vladimirovna", "Christopher Featherstonehaugh")
    st = next(s for s in timeline(2, players).steps if s.kind is StepKind.CARD)
    got = words(build_broadcast_scene(st, size=(1280, 720)))
    assert got.count("EAST \u00b7 WEST") == 1 and "MAXIMILIAN & ANASTASIYA" in got and got.count("NORTH \u00b7 SOUTH") == 1, got


def test_the_cards_played_panel_shows_the_rules_whole_deck_from_the_first_card() -> None:
    """British and Australian rules deal the joker, New Zealand's the 7s and 8s: the panel
    shows them before any is played (the 7 and 8 columns came with the first one played, the
    joker never), and the joker in the muted colour once played."""
    joker_game = next(g for g in (generate_game(seed, ruleset={"joker": True}) for seed in range(60)) if any(
        c == "B" for d in g["deals"] for p in d["phases"] if p["type"] == "TRICK_PLAY" for t in p["tricks"] for c in t))
    steps = load_game(json.dumps(joker_game), source="joker.egn").timeline.steps
    first = next(st for st in steps if st.kind is StepKind.CARD)
    assert (first.lowest_rank, first.joker) == (9, True)

    def joker_ink(st: GameState) -> str | None:
        return next((op[6] for op in texts(build_broadcast_scene(st, size=(1280, 720))) if op[5] == "JOKER"), None)

    played = next(st for st in steps if st.kind is StepKind.CARD and any(c.joker for c in (st.trick.cards if st.trick else ())))
    assert joker_ink(first) not in (None, TH.muted) and joker_ink(played) == TH.muted
    nz = next(st for st in load_game(json.dumps(generate_game(0, ruleset={"min_rank": 7})), source="nz.egn").timeline.steps if st.kind is StepKind.CARD)
    assert nz.lowest_rank == 7 and {"7", "8"} <= set(words(build_broadcast_scene(nz, size=(1280, 720))))
    plain = next(st for st in timeline(2).steps if st.kind is StepKind.CARD)
    assert (plain.lowest_rank, plain.joker) == (9, False) and "JOKER" not in words(build_broadcast_scene(plain, size=(1280, 720)))


def test_the_win_bar_fits_a_long_pair_of_names() -> None:
    players = ("Priya Raman", "Llama", "Marguerite Okafor", "LeftyKnapp")
    st = next(s for s in timeline(2, players).steps if s.kind is StepKind.CARD)
    view = default_view().model_copy(update={"extras": (Extra(id="w", type=ExtraType.WIN_BAR, x=96, y=244),)})
    now = Reading(step=st.step, deal=st.deal, to_act=st.to_act, win=(0.4, 0.6), estimate=True)
    got = words(build_analysis_layer(st, view, AnalysisFrame(now)))
    assert "LLAMA & LEFTYKNAPP" in got and not any(w.endswith("\u2026") for w in got), got


@pytest.mark.parametrize("subtitle", ["", "Semi-final \u00b7 Table 2 \u00b7 Harbour Hall"])
def test_the_title_shows_the_event_title_and_grows_for_its_subtitle(subtitle: str) -> None:
    st = timeline().steps[3]
    match = MatchData(event_title="Harbour Open 2026 \u00b7 Final Table", event_subtitle=subtitle,
                      players=tuple(PlayerData() for _ in range(4)))
    view = default_view().model_copy(update={"extras": (Extra(id="e", type=ExtraType.EVENT_TITLE, x=96, y=300),)})
    scene = build_broadcast_scene(st, view, match=match)
    got = words(scene)
    assert got.count("HARBOUR OPEN 2026 \u00b7 FINAL TABLE") == 2  # the title element and the extra, whole
    assert got.count(subtitle.upper()) == (2 if subtitle else 0)
    title = next(e for e in scene.elements if e["type"] == "title")
    assert title["h"] == SIZES["title"][1] + (TITLE_GROWTH if subtitle else 0)
    assert not any(w.endswith("\u2026") for w in got), got


@pytest.mark.parametrize("event", ["", "Harbour Open 2026"])
def test_the_title_says_which_game_of_a_match_even_under_an_event_title(event: str) -> None:
    """A match's game says which it is on the title's last line ("GAME 2 OF 3 · DEAL 1"): it
    was a suffix of the file's title, which an event title replaced, so a tournament with an
    event title never showed it."""
    st = timeline().steps[3]
    match = MatchData(event_title=event, players=tuple(PlayerData() for _ in range(4)))
    got = words(build_broadcast_scene(st, default_view(), match=match, title="Semi-final", game=MatchGame("Game 2 of 3")))
    assert f"GAME 2 OF 3 \u00b7 DEAL {st.deal + 1}" in got
    assert (event.upper() if event else "SEMI-FINAL") in got
    assert not any(w.endswith("\u2026") for w in got), got
    alone = words(build_broadcast_scene(st, default_view(), match=match, title="Semi-final"))
    assert f"DEAL {st.deal + 1}" in alone and not any("GAME" in w for w in alone)


def test_the_game_over_banner_of_a_match_carries_the_match_score_on() -> None:
    """The end of a match's game: the banner's score line adds the games each side has won
    now, the winner's first ("10 – 7 · MATCH 2–1"), from the games won before it."""
    over = timeline().steps[-1]
    assert over.game_over and over.winner is not None
    w = over.winner
    before = (1, 1)  # seats 0 and 2 first
    got = words(build_broadcast_scene(over, default_view(), title="Final", game=MatchGame("Game 3 of 3 \u00b7 match 1\u20131", before)))
    assert f"{over.score[w]} \u2013 {over.score[1 - w]} \u00b7 MATCH 2\u20131" in got
    assert "GAME 3 OF 3 \u00b7 MATCH 1\u20131 \u00b7 DEAL" in " ".join(got)
    plain = words(build_broadcast_scene(over, default_view(), title="Final", game=MatchGame("Game 2 of 2")))  # partners changed
    assert f"{over.score[w]} \u2013 {over.score[1 - w]}" in plain and not any("MATCH" in x for x in plain)
