"""The live game (engine.live): pushing actions one at a time makes what the full replay makes.

The oracle is the path the feed took before it: write the action into the EGN document
(:func:`feed_write`, the feed's rules for where an action goes), load the document strictly
and replay it whole, and refuse the action for the first error the load did not have
before.  Hypothesis pushes random legal games (the seeded generator, nine rulesets, hands
given or worked out from the play, some with alternative lines) with illegal and corrupt
actions and undos mixed in; after every push the live game's timeline, document and change
must be the oracle's, and a refused push must raise the oracle's error (type, place and
text) and leave the game as it was.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.live
from engine.errors import ActionError, EgnError, Place, SchemaError, SizeLimitError
from engine.generate import generate_game
from engine.live import LiveAction, LiveGame, actions_of
from engine.load import LoadedGame, load_game
from engine.model import MAX_DEALS
from engine.replay import replay_next
from engine.state import GameState, StepKind, Timeline, evolve_state
from engine.steps import JoinedSteps, Steps
from engine.validate import validate_document
from tests.lines import lined_game
from tests.native_digest import RULESETS

SOURCE = "live.egn"

# --------------------------------------------------------------------------- the oracle


def _compact(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def _phase(deal: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((p for p in deal.get("phases", []) if isinstance(p, dict) and p.get("type") == kind), None)


def feed_write(doc: dict[str, Any], last: GameState | None, action: dict[str, Any]) -> dict[str, Any]:
    """The document with ``action`` written in, as the feed wrote it before the live game
    (``overlay/feed.py``'s ``apply_action``: a deep copy of the last deal edited in place;
    ``last`` is the replay's last state)."""
    here = Place(source=SOURCE)
    doc = dict(doc)
    deals = list(doc["deals"])
    if deals:
        deals[-1] = copy.deepcopy(deals[-1])
    doc["deals"] = deals
    kind = action["kind"]
    if kind == "new_deal":
        if action.get("dealer") is None or action.get("upCard") is None:
            raise ActionError("new_deal needs 'dealer' and 'upCard'", here)
        over = last is not None and (last.deal_points is not None or last.thrown_in or last.game_over)
        if deals and last is not None and last.deal == len(deals) - 1 and not over:
            played = sum(len(t.cards) for t in last.tricks) + (len(last.trick.cards) if last.trick is not None and not last.trick.complete else 0)
            raise ActionError(
                f"new_deal while this deal is not over ({len(last.calls)} calls, {played} cards played): finish it or undo it first",
                here.with_(deal=len(deals) - 1),
            )
        initial: dict[str, Any] = {"dealer": action["dealer"], "upCard": action["upCard"]}
        if action.get("playerCards") is not None:
            initial["playerCards"] = action["playerCards"]
        number = action["dealNumber"] if action.get("dealNumber") is not None else len(deals)
        deals.append({"dealNumber": number, "initialState": initial, "phases": []})
        return doc
    if not deals:
        raise ActionError(f"{kind} needs a deal: send new_deal first", here)
    index = len(deals) - 1
    deal = deals[-1]
    at = here.with_(deal=index)
    phases = deal["phases"]
    if kind == "undo":
        if not any((p.get("calls") if p["type"] == "EUCHRE_BIDDING" else p.get("tricks")) for p in phases):
            deals.pop()
            return doc
        play = _phase(deal, "TRICK_PLAY")
        if play is not None:
            tricks = play["tricks"]
            if tricks:
                tricks[-1].pop()
                if not tricks[-1]:
                    tricks.pop()
            if not tricks:
                phases.remove(play)
            return doc
        bidding = _phase(deal, "EUCHRE_BIDDING")
        assert bidding is not None
        if "discard" in bidding:
            del bidding["discard"]
            return doc
        calls = bidding["calls"]
        calls.pop()
        if all(c == "Pass" for c in calls):
            bidding.pop("isAlone", None)
            bidding.pop("aloneDefender", None)
        if not calls:
            phases.remove(bidding)
        return doc
    if kind == "call":
        if not action.get("call"):
            raise ActionError("call needs 'call'", at)
        if _phase(deal, "TRICK_PLAY") is not None:
            raise ActionError(f"call {action['call']!r} after the play has started", at.with_(phase=1, phase_type="TRICK_PLAY"))
        bidding = _phase(deal, "EUCHRE_BIDDING")
        if bidding is None:
            bidding = {"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": []}
            phases.insert(0, bidding)
        bidding["calls"].append(action["call"])
        if action.get("alone") is not None:
            bidding["isAlone"] = action["alone"]
        if action.get("aloneDefender") is not None:
            bidding["aloneDefender"] = action["aloneDefender"]
        return doc
    if kind == "discard":
        if not action.get("card"):
            raise ActionError("discard needs 'card'", at)
        bidding = _phase(deal, "EUCHRE_BIDDING")
        if bidding is None:
            raise ActionError(f"discard {action['card']!r} before any call", at)
        making = [c for c in last.calls if c.call != "Pass"] if last is not None and last.deal == index else []
        if making and making[-1].round >= 2:
            raise ActionError(
                f"discard {action['card']!r} after a round-{making[-1].round} call: the dealer picked up nothing",
                at.with_(phase=0, phase_type="EUCHRE_BIDDING"),
            )
        bidding["discard"] = action["card"]
        return doc
    assert kind == "card"
    if not action.get("card"):
        raise ActionError("card needs 'card'", at)
    if not (last is not None and last.deal == index and any(c.call != "Pass" for c in last.calls)):
        raise ActionError(f"card {action['card']!r} before trump was made: send the calls first", at.with_(phase=0, phase_type="EUCHRE_BIDDING"))
    play = _phase(deal, "TRICK_PLAY")
    if play is None:
        play = {"phaseNumber": len(phases), "type": "TRICK_PLAY", "tricks": []}
        phases.append(play)
    tricks = play["tricks"]
    if tricks and last.trick is not None and not last.trick.complete and last.kind == StepKind.CARD:
        tricks[-1].append(action["card"])
    else:
        tricks.append([action["card"]])
    return doc


def oracle_push(game: LoadedGame, action: dict[str, Any]) -> LoadedGame:
    """The feed's verdict: the game with ``action`` loaded whole, or the error it refused with.

    Raises:
        EgnError: the refusal.
    """
    last = game.timeline.steps[-1] if len(game.timeline.steps) else None
    written = feed_write(game.document.to_json(), last, action)
    loaded = load_game(_compact(written), source=SOURCE, strict=True)
    seen = {str(p) for p in game.all_problems}
    fresh = [p for p in loaded.all_problems if p.severity == "error" and str(p) not in seen]
    if fresh:
        raise fresh[0].error()
    return loaded


def _without_hands(state: GameState) -> GameState:
    return evolve_state(state, hands=(), hands_known=())


def oracle_change(old: Timeline, new: Timeline) -> tuple[int, int | None]:
    """Leading equal steps (hands included), and the first step whose play changed."""
    a, b = list(old.steps), list(new.steps)
    n = min(len(a), len(b))
    shared = 0
    while shared < n and a[shared] == b[shared]:
        shared += 1
    first = next((i for i in range(shared, n) if _without_hands(a[i]) != _without_hands(b[i])), None)
    if first is None and len(a) != len(b):
        first = n
    return shared, first


def assert_same(live: LiveGame, ref: LoadedGame) -> None:
    """The live game is what the full load of its document makes."""
    tl, want = live.timeline, ref.timeline
    assert live.to_egn() == ref.document.to_json()
    assert live.to_egn_bytes() == _compact(live.to_egn()) and live.size == len(live.to_egn_bytes())
    assert len(tl.steps) == len(want.steps)
    assert list(tl.steps) == list(want.steps)
    assert tl.deals == want.deals
    assert tl.branches == want.branches
    assert tl.problems == want.problems
    assert (tl.final_score, tl.winner, tl.players, tl.title) == (want.final_score, want.winner, want.players, want.title)
    assert len(tl.checkpoints) == len(want.checkpoints)


#: a script's entry: an action, and whether to undo it at once if it is accepted (a corrupt
#: action the engine cannot tell from a real one, say a card from a hand it does not know)
Entry = tuple[dict[str, Any], bool]


def run(live: LiveGame, ref: LoadedGame, script: list[Entry]) -> tuple[int, int]:
    """Push every action of ``script`` onto both; returns (accepted, refused)."""
    accepted = refused = 0
    pending = list(script)
    while pending:
        action, undo = pending.pop(0)
        try:
            after = oracle_push(ref, action)
        except EgnError as exc:
            expected: EgnError | None = exc
        else:
            expected = None
        before_doc, before_tl, before_size = live.to_egn(), live.timeline, live.size
        try:
            change = live.push(action) if action["kind"] != "undo" or action.get("seq") else live.pop()
        except EgnError as exc:
            assert expected is not None, f"{action}: refused, the oracle accepts it: {exc}"
            assert (type(exc), str(exc)) == (type(expected), str(expected)), action
            assert exc.place == expected.place
            assert live.to_egn() == before_doc and live.size == before_size and live.timeline is before_tl
            refused += 1
            continue
        assert expected is None, f"{action}: accepted, the oracle refuses it: {expected}"
        assert_same(live, after)
        shared, first = oracle_change(ref.timeline, after.timeline)
        assert (change.shared, change.first, change.total) == (shared, first, len(after.timeline.steps)), action
        assert change.steps == tuple(after.timeline.steps)[shared:]
        seen = {str(p) for p in ref.all_problems}
        assert [str(p) for p in change.warnings] == [str(p) for p in after.all_problems if p.severity != "error" and str(p) not in seen]
        ref = after
        accepted += 1
        if undo:
            pending.insert(0, ({"kind": "undo"}, False))
    return accepted, refused


# --------------------------------------------------------------------------- random games

CARDS = ["9s", "Ts", "Js", "Qs", "Ks", "As", "9h", "Jh", "Ah", "9d", "Jd", "Kd", "9c", "Jc", "Ac", "8s", "7h", "Xx", "L", "R", "B", "Zz", "9x9", ""]
CALLS = ["Pass", "Order", "s", "h", "d", "c", "n", "x", "Zz", ""]

bad_actions = st.one_of(
    st.builds(lambda c: {"kind": "card", "card": c}, st.sampled_from(CARDS)),
    st.builds(lambda c: {"kind": "discard", "card": c}, st.sampled_from(CARDS)),
    st.builds(
        lambda c, alone, d: {"kind": "call", "call": c, "alone": alone, "aloneDefender": d},
        st.sampled_from(CALLS),
        st.none() | st.booleans(),
        st.none() | st.integers(-1, 4),
    ),
    st.builds(
        lambda dealer, up, number, hands: {"kind": "new_deal", "dealer": dealer, "upCard": up, "dealNumber": number, "playerCards": hands},
        st.integers(0, 11),
        st.sampled_from(CARDS),
        st.none() | st.integers(-1, 3),
        st.none() | st.lists(st.lists(st.sampled_from(CARDS[:17]), max_size=6), max_size=4),
    ),
    st.just({"kind": "undo"}),
    st.just({"kind": "undo", "seq": 1}),  # the undo action, not pop()
)


@st.composite
def scenarios(draw: Any) -> tuple[LiveGame, LoadedGame, list[Entry]]:
    """A live game (empty or loaded with some deals), its oracle, and the actions to push."""
    seed = draw(st.integers(0, 5000))
    if draw(st.integers(0, 4)) == 0:  # the last deal has alternative lines: undo into it, play on
        doc = lined_game(seed % 40, deals=2, deal=1)
        start, pops = 2, draw(st.integers(0, 14))
    else:
        rules = RULESETS[draw(st.integers(0, len(RULESETS) - 1))]
        doc = generate_game(seed, ruleset=rules or None, deals=draw(st.integers(1, 2)))
        start, pops = draw(st.integers(0, len(doc["deals"]))), draw(st.integers(0, 3))
    if draw(st.booleans()):
        for deal in doc["deals"]:
            deal["initialState"].pop("playerCards", None)  # hands worked out from the play
    acts = actions_of(doc)[sum(1 for a in actions_of(doc, deals=start)) :]
    loaded = {**doc, "deals": doc["deals"][:start]}
    if not start:
        loaded["metadata"] = {k: v for k, v in doc["metadata"].items() if k != "finalScore"}
    ref = load_game(_compact(loaded), source=SOURCE)
    how = draw(st.integers(0, 2))
    if start or how:  # from the load (its replay reused), or replayed from the document alone
        live = LiveGame.from_loaded(ref) if how < 2 else LiveGame(ref.document, source=SOURCE, problems=ref.problems)
    else:
        live = LiveGame.new(loaded["metadata"], source=SOURCE)
    if pops:  # what the undos take off is pushed again
        acts = actions_of(doc)[-pops:] + acts if start == len(doc["deals"]) else acts
    script: list[Entry] = [({"kind": "undo"}, False)] * pops + [(a, False) for a in acts]
    inserts = draw(st.lists(st.tuples(st.integers(0, len(script)), bad_actions, st.integers(0, 3)), max_size=6))
    for at, bad, keep in sorted(inserts, key=lambda t: -t[0]):
        script.insert(at, (bad, keep > 0))
    return live, ref, script


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_pushes_make_what_the_full_replay_makes(scenario: tuple[LiveGame, LoadedGame, list[Entry]]) -> None:
    live, ref, script = scenario
    assert_same(live, ref)
    run(live, ref, script)


# --------------------------------------------------------------------------- cases


def _empty(doc: dict[str, Any]) -> LiveGame:
    return LiveGame.new({k: v for k, v in doc["metadata"].items() if k != "finalScore"}, source=SOURCE)


def test_a_whole_game_pushed_is_the_loaded_game() -> None:
    doc = generate_game(12, deals=4)
    live = _empty(doc)
    for action in actions_of(doc):
        live.push(action)
    want = load_game(_compact(doc), source=SOURCE)
    assert live.to_egn()["deals"] == want.document.to_json()["deals"]
    assert list(live.timeline.steps) == list(want.timeline.steps)


@pytest.mark.parametrize(
    "action, error, text",
    [
        ({"kind": "call", "call": "Pass"}, ActionError, "live.egn: call needs a deal: send new_deal first"),
        ({"kind": "undo"}, ActionError, "live.egn: undo needs a deal: send new_deal first"),
        ({"kind": "jump"}, ActionError, "live.egn: unknown action kind 'jump'"),
        ({"kind": "new_deal", "dealer": 0}, ActionError, "live.egn: new_deal needs 'dealer' and 'upCard'"),
        ({"kind": "new_deal", "dealer": 12, "upCard": "9s"}, SchemaError, "live.egn: deal 0: 12: input should be less than or equal to 9 (at /deals/0/initialState/dealer)"),
        ({"kind": "new_deal", "dealer": "0", "upCard": "9s"}, ActionError, "live.egn: 'dealer' must be an integer, not '0'"),
        ({"kind": "card", "card": 9}, ActionError, "live.egn: 'card' must be a string, not 9"),
        ({"kind": "card", "when": 1}, ActionError, "live.egn: unknown action field 'when'"),
        ({"card": "9s"}, ActionError, "live.egn: an action needs 'kind'"),
    ],
)
def test_refusals_name_the_place(action: dict[str, Any], error: type[EgnError], text: str) -> None:
    live = _empty(generate_game(3, deals=1))
    with pytest.raises(error) as caught:
        live.push(action)
    assert str(caught.value) == text
    assert len(live) == 0 and len(live.timeline.steps) == 0


def test_each_push_replays_one_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost of a push does not grow with the game: it replays the last deal only (and
    a live game made from a load replays nothing)."""
    doc = generate_game(8, deals=6)
    loaded = load_game(_compact({**doc, "deals": doc["deals"][:5]}), source=SOURCE)
    replayed: list[int] = []
    real = replay_next

    def counting(ctx: Any, index: int, *args: Any, **kw: Any) -> Any:
        replayed.append(index)
        return real(ctx, index, *args, **kw)

    monkeypatch.setattr(engine.live, "replay_next", counting)
    live = LiveGame.from_loaded(loaded)  # the load's replay is cut into deals, not made again
    assert replayed == [] and list(live.timeline.steps) == list(loaded.timeline.steps)
    acts = actions_of(doc)[len(actions_of(doc, deals=5)) :]
    for action in acts:
        live.push(action)
    live.pop()
    assert replayed == [5] * (len(acts) + 1)


def test_a_live_game_goes_past_the_reference_cap_of_100_deals() -> None:
    """No cap on deals: the 101st deal is pushed like any other; the document loads (a lenient
    load warns that the reference refuses it), and only reference validation refuses it."""
    doc = generate_game(21, ruleset={"num_deals": MAX_DEALS + 1}, deals=MAX_DEALS + 1)
    assert len(doc["deals"]) == MAX_DEALS + 1
    base = {**doc, "deals": doc["deals"][:MAX_DEALS]}
    live = LiveGame.from_loaded(load_game(_compact(base), source=SOURCE, strict=True))
    for action in actions_of(doc)[len(actions_of(base)) :]:
        live.push(action)
    assert len(live) == MAX_DEALS + 1 and live.timeline.winner is not None
    again = load_game(_compact(live.to_egn()), source=SOURCE)
    assert list(again.timeline.steps) == list(live.timeline.steps)
    assert [p.message for p in again.problems] == [f"{MAX_DEALS + 1} deals: the EGN schema allows at most {MAX_DEALS} (the reference and the binary forms refuse more)"]
    with pytest.raises(SchemaError, match="at most 100"):
        validate_document(live.to_egn(), source=SOURCE, reference=True)


def test_the_size_limit_is_a_clear_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = generate_game(4, deals=2)
    live = _empty(doc)
    acts = actions_of(doc)
    for action in acts[:10]:
        live.push(action)
    monkeypatch.setattr(engine.live, "MAX_INPUT", live.size + 2)
    before = live.to_egn()
    with pytest.raises(SizeLimitError) as caught:
        live.push(acts[10])
    assert str(caught.value).startswith("live.egn: deal 0: the game would be ")
    assert "bytes of JSON: a game is limited to" in str(caught.value)
    assert live.to_egn() == before


def test_copy_and_pop() -> None:
    doc = generate_game(6, deals=1)
    live = _empty(doc)
    acts = actions_of(doc)
    for action in acts[:8]:
        live.push(action)
    kept = live.copy()
    doc_before, steps_before = live.to_egn(), list(live.timeline.steps)
    change = kept.push(acts[8])
    assert live.to_egn() == doc_before and list(live.timeline.steps) == steps_before
    back = kept.pop()
    assert kept.to_egn() == doc_before and list(kept.timeline.steps) == steps_before
    assert back.first == change.first and back.total == len(steps_before)


def test_action_values() -> None:
    a = LiveAction.from_json({"seq": 3, "kind": "new_deal", "dealer": 1, "upCard": "9s", "playerCards": [["9h"]], "dealNumber": 4})
    assert a == LiveAction("new_deal", dealer=1, up_card="9s", player_cards=(("9h",),), deal_number=4)
    assert LiveAction.from_json({"kind": "call", "call": "h", "alone": True, "alone_defender": 1}).alone_defender == 1
    with pytest.raises(ActionError):
        LiveAction.from_json({"kind": "call", "alone": 1})


def test_joined_steps_behave_as_steps() -> None:
    live = LiveGame.from_loaded(load_game(_compact(generate_game(9, deals=3)), source=SOURCE))
    steps = live.timeline.steps
    assert isinstance(steps, JoinedSteps)
    want = load_game(_compact(live.to_egn()), source=SOURCE).timeline.steps
    assert steps == want and want == steps and steps[-1] == want[-1] and steps[3:9] == want[3:9]
    assert steps[len(steps) - 1] is steps[-1]
    back = pickle.loads(pickle.dumps(steps))
    assert isinstance(back, Steps) and back == want
    with pytest.raises(IndexError):
        steps[len(steps)]
