"""The logger's legal choices come from the engine (engine/choices.py): every action of a
generated game is among the choices offered before it, every choice offered is one the
engine accepts, and warnings are offered where the engine will warn (a renege).  Editing an
earlier action of the deal re-checks every action after it."""

from __future__ import annotations

from typing import Any

import pytest

from engine.actions import actions_of
from engine.choices import Choices, choices_at, choices_of, deal_actions, edited
from engine.errors import ActionError, EgnError
from engine.generate import generate_game
from engine.live import LiveGame


def _meta(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc["metadata"].items() if k != "finalScore"}


def _intended(doc: dict[str, Any], *, hands: bool) -> list[dict[str, Any]]:
    """The actions a logger sends for ``doc`` (without ``seq``; without the hands when the
    logger does not see them)."""
    out = []
    for a in actions_of(doc):
        a = {k: v for k, v in a.items() if k != "seq" and v is not None}
        if a["kind"] == "new_deal" and not hands:
            a.pop("playerCards", None)
        if a.get("call") == "Pass":
            a.pop("alone", None)  # the generator marks a thrown-in deal isAlone false; a pass says nothing
        out.append(a)
    return out


def _offered(game: LiveGame, act: dict[str, Any]) -> Choices:
    if act["kind"] == "new_deal":
        return choices_of(game, dealer=act["dealer"], hands=act.get("playerCards"))
    return choices_of(game)


RULESETS = [
    ({}, 3),
    ({"defend_alone": True}, 12),
    ({"allow_no_trump": True, "std": False}, 4),
    ({"joker": True}, 5),
    ({"canadian": True}, 4),
    ({"min_rank": 7}, 3),
]


def test_actions_of_keeps_the_lone_defender() -> None:
    """A game with a lone defender, sent as actions, is the same game (actions_of lost
    ``aloneDefender``: the wrong seat sat out and a later card was refused)."""
    doc = next(
        d
        for d in (generate_game(s, ruleset={"defend_alone": True}) for s in range(40))
        if any(p.get("aloneDefender", -1) >= 0 for deal in d["deals"] for p in deal["phases"])
    )
    game = LiveGame.new(_meta(doc))
    for a in actions_of(doc):
        game.push(a)
    assert game.to_egn()["deals"] == doc["deals"]


@pytest.mark.parametrize("ruleset, seed", RULESETS)
@pytest.mark.parametrize("hands", [True, False], ids=["hands-known", "hands-unknown"])
def test_every_action_is_offered_and_every_offer_accepted(ruleset: dict[str, Any], seed: int, hands: bool) -> None:
    doc = generate_game(seed, ruleset=ruleset, deals=4)
    game = LiveGame.new(_meta(doc))
    for act in _intended(doc, hands=hands):
        offered = _offered(game, act)
        actions = [c.action for c in offered.choices]
        assert act in actions, (offered.phase, offered.seat, act, actions)
        for choice in offered.choices:
            trial = game.copy()
            try:
                change = trial.push(choice.action)
            except EgnError as exc:  # pragma: no cover - the assertion says which
                pytest.fail(f"offered {choice.action} at {offered.phase}, refused: {exc}")
            renege = [w for w in change.warnings if "renege" in str(w)]
            if choice.group == "card":
                assert bool(renege) == bool(choice.warning), (choice.action, choice.warning, [str(w) for w in renege])
        game.push(act)
    assert choices_of(game).phase in ("deal", "over")


def _game_at(doc: dict[str, Any], n: int, *, hands: bool = True) -> LiveGame:
    game = LiveGame.new(_meta(doc))
    for a in _intended(doc, hands=hands)[:n]:
        game.push(a)
    return game


def _calls(c: Choices) -> list[tuple[str, bool | None, int | None]]:
    return [(x.action["call"], x.action.get("alone"), x.action.get("aloneDefender")) for x in c.choices]


def _deal(dealer: int, up: str, hands: list[list[str]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "new_deal", "dealer": dealer, "upCard": up}
    if hands is not None:
        out["playerCards"] = hands
    return out


HANDS = [["Ah", "Kh", "Qh", "9s", "Ts"], ["Js", "Qs", "Ks", "As", "9c"], ["Tc", "Jc", "Qc", "Kc", "Ac"], ["9d", "Td", "Jd", "Qd", "Kd"]]
PASS = {"kind": "call", "call": "Pass"}


def _table(ruleset: dict[str, Any] | None = None) -> LiveGame:
    return LiveGame.new({"players": [{"name": n} for n in "ABCD"], "initialScore": [0, 0], "ruleset": ruleset or {}})


def test_deal_start_rotates_the_dealer_and_offers_every_up_card() -> None:
    game = _table()
    first = choices_of(game)
    assert first.phase == "deal" and first.dealer == 0 and first.dealer_open
    assert [c.action["upCard"] for c in first.choices] == list(first.deck) and len(first.deck) == 24
    assert choices_of(game, dealer=2).choices[0].action == {"kind": "new_deal", "dealer": 2, "upCard": "9s"}
    with pytest.raises(ActionError, match="dealer 7 is not a seat"):
        choices_of(game, dealer=7)
    doc = generate_game(3, deals=2)
    played = _game_at(doc, len(actions_of(doc, deals=1)))
    after = choices_of(played)
    assert after.phase == "deal" and after.dealer == (doc["deals"][0]["initialState"]["dealer"] + 1) % 4 and not after.dealer_open


def test_hands_entered_leave_their_cards_out_of_the_up_cards() -> None:
    game = _table()
    part = choices_of(game, hands=[HANDS[0], HANDS[1][:3]])
    ups = [c.action["upCard"] for c in part.choices]
    assert not set(ups) & set(HANDS[0] + HANDS[1][:3])
    assert part.choices[0].action["playerCards"] == [HANDS[0], [], [], []]  # a hand goes once it is whole
    assert "seat 1 has 3" in (part.note or "")
    assert set(part.free) == set(part.deck) - set(HANDS[0] + HANDS[1][:3])
    with pytest.raises(ActionError, match="'Ah' is in seat 0's hand and seat 1's"):
        choices_of(game, hands=[["Ah"], ["Ah"]])
    with pytest.raises(ActionError, match="not a card of this deck"):
        choices_of(game, hands=[["8h"]])


@pytest.mark.parametrize(
    "ruleset, up, passes, want",
    [
        ({}, "Jh", 0, [("Pass", None, None), ("Order", False, None), ("Order", True, None)]),
        # Canadian: the dealer's partner (seat 2 when seat 0 deals) orders alone only
        ({"canadian": True}, "Jh", 1, [("Pass", None, None), ("Order", True, None)]),
        # defend alone: one choice per lone defender
        ({"defend_alone": True}, "Jh", 0, [("Pass", None, None), ("Order", False, None), ("Order", True, None), ("Order", True, 0), ("Order", True, 2)]),
        # round 2: every suit but the turned-down one
        ({}, "Jh", 4, [("Pass", None, None), ("s", False, None), ("s", True, None), ("d", False, None), ("d", True, None), ("c", False, None), ("c", True, None)]),
        # no trump where allowed
        ({"allow_no_trump": True}, "Jh", 5, [("Pass", None, None), ("s", False, None), ("s", True, None), ("d", False, None), ("d", True, None), ("c", False, None), ("c", True, None), ("n", False, None), ("n", True, None)]),
        # stick the dealer: no pass for the dealer's last call
        ({}, "Jh", 7, [("s", False, None), ("s", True, None), ("d", False, None), ("d", True, None), ("c", False, None), ("c", True, None)]),
        ({"std": False}, "Jh", 7, [("Pass", None, None), ("s", False, None), ("s", True, None), ("d", False, None), ("d", True, None), ("c", False, None), ("c", True, None)]),
    ],
)
def test_bidding_offers_the_calls_open_to_the_seat(ruleset: dict[str, Any], up: str, passes: int, want: list[Any]) -> None:
    game = _table(ruleset)
    game.push(_deal(0, up))
    for _ in range(passes):
        game.push(PASS)
    offered = choices_of(game)
    assert offered.phase == "bidding" and offered.seat == (1 + passes) % 4
    assert _calls(offered) == want
    if ruleset == {} and passes == 7:
        assert "stick the dealer" in (offered.note or "")


def test_a_joker_up_card_is_ordered_by_naming_a_suit() -> None:
    game = _table({"joker": True})
    game.push(_deal(0, "B"))
    assert [c for c, alone, _ in _calls(choices_of(game)) if alone is False] == ["s", "h", "d", "c"]


def test_the_discard_is_offered_with_the_first_card() -> None:
    game = _table()
    game.push(_deal(3, "Jh", HANDS))
    game.push({"kind": "call", "call": "Order", "alone": False})
    offered = choices_of(game)
    assert offered.phase == "discard" and offered.seat == 3
    discards = [c.action["card"] for c in offered.choices if c.group == "discard"]
    assert sorted(discards) == sorted(HANDS[3] + ["Jh"])  # the dealer's hand with the up-card
    cards = [c for c in offered.choices if c.group == "card"]
    assert {c.seat for c in cards} == {0} and sorted(c.action["card"] for c in cards) == sorted(HANDS[0])


def test_play_offers_the_hand_or_every_unseen_card_and_warns_of_a_renege() -> None:
    # seat 0 names clubs in round 2
    game = _table()
    game.push(_deal(3, "9h", HANDS))
    for _ in range(4):
        game.push(PASS)
    game.push({"kind": "call", "call": "c", "alone": False})  # seat 0 names clubs
    lead = choices_of(game)
    assert lead.phase == "play" and lead.seat == 0
    assert sorted(c.action["card"] for c in lead.choices) == sorted(HANDS[0])
    game.push({"kind": "card", "card": "Ah"})
    follow = {c.action["card"]: c for c in choices_of(game).choices}
    assert set(follow) == set(HANDS[1])  # seat 1 holds no heart: nothing to warn of
    assert not any(c.warning for c in follow.values())
    game.push({"kind": "card", "card": "9c"})
    third = {c.action["card"]: c for c in choices_of(game).choices}
    assert set(third) == set(HANDS[2])  # seat 2 holds all clubs: no heart, no renege
    # hands unknown: every card not played or turned down, the seat's suit shown
    blind = _table()
    blind.push(_deal(3, "9h"))
    for _ in range(4):
        blind.push(PASS)
    blind.push({"kind": "call", "call": "c", "alone": False})
    blind.push({"kind": "card", "card": "Ah"})
    offered = choices_of(blind)
    names = {c.action["card"] for c in offered.choices}
    assert "Ah" not in names and "9h" not in names and len(names) == 22
    assert {c.action["card"] for c in offered.choices if c.follows} == {"Kh", "Qh", "Jh", "Th"}


def test_a_known_hand_that_does_not_follow_is_offered_with_a_warning() -> None:
    game = _table()
    game.push(_deal(3, "9h", HANDS))
    for _ in range(4):
        game.push(PASS)
    game.push({"kind": "call", "call": "d", "alone": False})  # seat 0 names diamonds
    game.push({"kind": "card", "card": "9s"})  # seat 0 leads a spade; seat 1 holds four spades
    offered = {c.action["card"]: c for c in choices_of(game).choices}
    assert offered["9c"].warning is not None and "renege" in offered["9c"].warning
    assert offered["As"].warning is None and offered["As"].follows
    change = game.copy().push({"kind": "card", "card": "9c"})  # recorded, with the engine's warning
    assert any("renege" in str(w) for w in change.warnings)


def test_a_finished_game_offers_nothing() -> None:
    doc = generate_game(5)
    game = _game_at(doc, len(actions_of(doc)))
    over = choices_of(game)
    assert over.phase == "over" and over.choices == ()


def test_deal_actions_name_each_seat() -> None:
    game = _table()
    game.push(_deal(3, "9h", HANDS))
    game.push(PASS)
    game.push({"kind": "call", "call": "Order", "alone": True})
    game.push({"kind": "discard", "card": "9d"})
    listed = deal_actions(game)
    assert [(a.index, a.seat, a.label) for a in listed] == [
        (0, 3, "D deals, 9\u2665 up"),
        (1, 0, "A passes"),
        (2, 1, "B orders up alone"),
        (3, 3, "D discards 9\u2666"),
    ]
    assert deal_actions(_table()) == []


def test_an_edit_rechecks_what_follows() -> None:
    game = _table()
    game.push(_deal(3, "9h"))
    for _ in range(4):
        game.push(PASS)
    game.push({"kind": "call", "call": "c", "alone": False})  # seat 0 names clubs
    for card in ("Ah", "9s", "Th", "Qh", "Kh"):  # A's ace takes trick 1; A leads the king
        game.push({"kind": "card", "card": card})
    before = game.to_egn()
    listed = deal_actions(game)
    wrong = listed[7]
    assert (wrong.seat, wrong.action) == (1, {"kind": "card", "card": "9s"})
    at = choices_at(game, wrong.index)
    assert at.seat == 1 and {"kind": "card", "card": "Kh"} in [c.action for c in at.choices]
    # the king is still unseen at that point, so it is offered; the action after it that
    # plays it is then refused, named, and the game is unchanged
    with pytest.raises(ActionError, match=r"after the edit, action 10 \(A plays K\u2665\) no longer fits: 'Kh' was already played"):
        edited(game, wrong.index, {"kind": "card", "card": "Kh"})
    assert game.to_egn() == before
    new, _ = edited(game, wrong.index, {"kind": "card", "card": "Ts"})
    tricks = new.to_egn()["deals"][-1]["phases"][1]["tricks"]
    assert tricks == [["Ah", "Ts", "Th", "Qh"], ["Kh"]]
    with pytest.raises(ActionError, match="action 99 is not one of the last deal's 11 actions"):
        choices_at(game, 99)


def test_an_edit_of_the_up_card_keeps_the_dealer() -> None:
    game = _table()
    game.push(_deal(2, "9h"))
    game.push(PASS)
    at = choices_at(game, 0)
    assert at.phase == "deal" and at.dealer == 2
    new, _ = edited(game, 0, {"kind": "new_deal", "dealer": 2, "upCard": "Th"})
    assert new.to_egn()["deals"][0]["initialState"] == {"dealer": 2, "upCard": "Th"}
    assert len(deal_actions(new)) == 2
