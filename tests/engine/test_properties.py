"""Property tests: random legal games under random rulesets replay cleanly and consistently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cards import Card, card_name, deck, effective_suit, parse_card, sort_key
from engine.generate import generate_game
from engine.validate import validate_document
from engine.replay import replay
from engine.state import StepKind

rulesets = st.fixed_dictionaries(
    {},
    optional={
        "std": st.booleans(),
        "min_rank": st.sampled_from([7, 8, 9]),
        "canadian": st.booleans(),
        "loner_lead": st.sampled_from(["LEFT_OF_DEALER", "LEFT_OF_LONER"]),
        "loner_march_score": st.integers(1, 6),
        "loner_euchred_score": st.integers(1, 6),
        "defend_alone": st.booleans(),
        "joker": st.booleans(),
        "allow_no_trump": st.booleans(),
        "fast_break": st.booleans(),
        "four_trick_tokens": st.booleans(),
        "winning_score": st.sampled_from([5, 7, 10, 11]),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), rules=rulesets)
def test_random_legal_games_replay_without_error(seed: int, rules: dict[str, Any]) -> None:
    doc = generate_game(seed, ruleset=rules)
    tl = replay(validate_document(doc), source="gen.egn")
    assert tl.problems == (), [str(p) for p in tl.problems]
    assert list(tl.final_score) == doc["metadata"]["finalScore"]
    for d in tl.deals:
        for prev, nxt in zip(d.tricks, d.tricks[1:]):
            assert prev.winner is not None and nxt.leader == prev.winner  # the winner leads next
        for t in d.tricks:
            assert sum(1 for c in t.cards) == len(t.seats) == 4 - len(d.sit_out)
            assert t.winner in t.seats
    # tricks total the cards played, per deal
    for d in tl.deals:
        played = [s for s in tl.steps[d.first_step : d.last_step + 1] if s.kind is StepKind.CARD]
        assert len(played) == sum(len(t.cards) for t in d.tricks)
        taken = [s for s in tl.steps[d.first_step : d.last_step + 1] if s.kind is StepKind.TRICK_TAKEN]
        assert len(taken) == len(d.tricks) == sum(tl.steps[d.last_step].tricks_per_seat)
    if tl.winner is not None:
        assert tl.steps[-1].kind is StepKind.GAME_OVER


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), rules=rulesets)
def test_a_game_without_hands_is_the_same_game_with_none_listed(seed: int, rules: dict[str, Any]) -> None:
    """``player_cards=False`` (a table with no hole-card camera) writes no hands and changes
    nothing else: the same deals, calls, discards and cards, and the same replayed score."""
    full = generate_game(seed, ruleset=rules)
    bare = generate_game(seed, ruleset=rules, player_cards=False)
    assert all("playerCards" not in d["initialState"] for d in bare["deals"])
    assert all("playerCards" in d["initialState"] for d in full["deals"])
    for a, b in zip(full["deals"], bare["deals"], strict=True):
        assert {k: v for k, v in a["initialState"].items() if k != "playerCards"} == b["initialState"]
        assert a.get("phases") == b.get("phases")
    tl = replay(validate_document(bare), source="bare.egn")
    assert tl.problems == (), [str(p) for p in tl.problems]
    assert list(tl.final_score) == bare["metadata"]["finalScore"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, 400))
def test_a_game_cut_anywhere_replays_to_exactly_where_it_stops(seed: int, cut: int) -> None:
    """A live logger's file: the last deal stops after any action."""
    doc = generate_game(seed, deals=2)
    full = replay(validate_document(doc))
    actions = [s for s in full.steps if s.kind in (StepKind.CALL, StepKind.CARD)]
    cut = min(cut, len(actions))
    last = actions[cut - 1]
    deal = doc["deals"][last.deal]
    doc["deals"] = doc["deals"][: last.deal + 1]
    bid, *rest = deal["phases"]
    n_calls = len(bid["calls"])
    index = last.action.index if last.action and last.action.index is not None else 0
    if last.kind is StepKind.CALL:
        bid["calls"] = bid["calls"][: index + 1]
        deal["phases"] = [bid]
    else:
        flat = [c for t in rest[0]["tricks"] for c in t]
        per = len(rest[0]["tricks"][0])
        kept = flat[: index + 1]
        rest[0]["tricks"] = [kept[i : i + per] for i in range(0, len(kept), per)]
    tl = replay(validate_document(doc))
    assert n_calls >= 1
    # the cut game is the full game's prefix up to the last action ...
    for mine, ref in zip(tl.steps[: last.step + 1], full.steps):
        assert (mine.kind, mine.action, mine.trick, mine.tricks, mine.calls, mine.trump, mine.maker, mine.score) == (
            ref.kind, ref.action, ref.trick, ref.tricks, ref.calls, ref.trump, ref.maker, ref.score)
    assert len(tl.steps) > last.step
    # ... followed only by what that action completes (the pick-up, the trick, the score)
    after = {s.kind for s in tl.steps[last.step + 1 :]}
    assert after <= {StepKind.DISCARD, StepKind.TRICK_TAKEN, StepKind.DEAL_SCORED, StepKind.GAME_OVER}


@given(st.sampled_from([c for c in deck(7, joker=True)] + [parse_card(t) for t in ("Xx", "Nd", "Xs", "Jx", "R", "L", "Kt", "9n", "Ag", "QS", "TH")]))
def test_card_notation_round_trips(card: Card) -> None:
    assert card_name(parse_card(card_name(card))) == card_name(card)


def test_one_place_judges_suit() -> None:
    """The left-bower rule lives in engine/cards.py only: no second copy anywhere."""
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("engine", "renderer", "overlay", "studio"):
        for path in (root / folder).rglob("*.py"):
            if path.name == "cards.py" and path.parent.name == "engine":
                continue
            text = path.read_text(encoding="utf-8")
            if ".partner" in text and ("Rank.JACK" in text or "'J'" in text or '"J"' in text):
                offenders.append(str(path.relative_to(root)))
            if "def effective_suit" in text:
                offenders.append(str(path.relative_to(root)))
    assert offenders == []


def test_hand_sorting_uses_effective_suit() -> None:
    hand = [parse_card(t) for t in ("9d", "Jd", "Ah", "Jh", "9c", "B")]
    ordered = [card_name(c) for c in sorted(hand, key=lambda c: sort_key(c, effective_suit(parse_card("Th"), None)))]
    assert ordered[:4] == ["B", "Jh", "Jd", "Ah"]  # joker, right, left, then trump by rank


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rules=rulesets, data=st.data())
def test_incremental_replay_equals_a_full_replay(seed: int, rules: dict[str, Any], data: st.DataObject) -> None:
    """A live feed replays from the first changed deal; the result must be the full replay."""
    import copy

    doc = generate_game(seed, ruleset=rules)
    k = data.draw(st.integers(1, len(doc["deals"])))
    earlier = copy.deepcopy(doc)
    earlier["deals"] = earlier["deals"][:k]
    if data.draw(st.booleans()):  # and a correction to a past deal
        j = data.draw(st.integers(0, k - 1))
        earlier["deals"][j]["phases"][0]["calls"] = ["Pass"] * 8
        earlier["deals"][j]["phases"] = earlier["deals"][j]["phases"][:1]
    before = replay(validate_document(earlier))
    full = replay(validate_document(doc))
    incremental = replay(validate_document(doc), previous=before)
    assert incremental == full
    assert [s.to_json() for s in incremental.steps] == [s.to_json() for s in full.steps]
    assert incremental.problems == full.problems
