"""Which game of a match is on screen, and the games each team has won before it
(renderer/gametitle.py): one label for the pages, render and frame."""

from __future__ import annotations

from renderer.gametitle import IN_PROGRESS, MatchGame, Played, game_label, game_labels, games_won, part_title

ANA_CHLOE_SOUTH = ("Ana", "Ben", "Chloe", "Dev")  # seats 0 and 2: Ana and Chloe
ANA_CHLOE_EAST = ("Ben", "Chloe", "Dev", "Ana")  # the same partnerships, seats turned: Ana and Chloe at 1 and 3
NEW_PARTNERS = ("Ana", "Ben", "Dev", "Chloe")  # Ana with Dev


def test_a_games_label_says_of_how_many_unless_the_match_is_in_progress() -> None:
    assert game_label(1, 3, {"metadata": {}}) == "Game 2 of 3"
    assert game_label(1, 2, {"metadata": {"result": {"status": IN_PROGRESS}}}) == "Game 2"
    assert part_title("Finals", "Game 2 of 3") == "Finals \u2014 Game 2 of 3"
    assert part_title(None, "Game 2 of 3") == "Game 2 of 3" and part_title("Finals", None) == "Finals"


def test_games_won_follow_the_partnerships_wherever_they_sit() -> None:
    before = [Played(0, ANA_CHLOE_SOUTH, 0), Played(1, ANA_CHLOE_EAST, 0)]  # Ana & Chloe, then Ben & Dev
    assert games_won(before[:1], ANA_CHLOE_EAST) == (0, 1)  # Ana & Chloe sit at 1 and 3 now: the second number
    assert games_won(before, ANA_CHLOE_SOUTH) == (1, 1)
    assert games_won([Played(0, ANA_CHLOE_SOUTH, None)], ANA_CHLOE_SOUTH) == (0, 0)  # not over: nobody won it
    assert games_won(before, NEW_PARTNERS) is None  # partners changed: no team score
    assert games_won([], ("Ana", "Ben", "Ana", "Dev")) is None  # one name twice: not two partnerships


def test_labels_add_the_match_score_from_the_second_game_once_a_game_is_won() -> None:
    match: dict[str, dict[str, str]] = {"metadata": {}}
    played = [Played(0, ANA_CHLOE_SOUTH, 0), Played(1, ANA_CHLOE_EAST, 0), Played(2, ANA_CHLOE_SOUTH, None)]
    assert game_labels(match, 3, played) == [
        MatchGame("Game 1 of 3", (0, 0)), MatchGame("Game 2 of 3 \u00b7 match 0\u20131", (0, 1)), MatchGame("Game 3 of 3 \u00b7 match 1\u20131", (1, 1))]
    # the banner at the end of game 3 carries it on: the team of seats 0 and 2 won it
    assert game_labels(match, 3, played)[2].after(0) == (2, 1)
    unfinished = [Played(0, ANA_CHLOE_SOUTH, None), Played(1, ANA_CHLOE_SOUTH, None)]
    assert [g.label for g in game_labels(match, 2, unfinished)] == ["Game 1 of 2", "Game 2 of 2"]  # "match 0-0" would say nothing
    changed = game_labels(match, 2, [played[0], Played(1, NEW_PARTNERS, None)])
    assert changed[1] == MatchGame("Game 2 of 2", None) and changed[1].after(0) is None
