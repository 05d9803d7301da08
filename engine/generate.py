"""A seeded dealer of legal Euchre games, written as EGN JSON.

Used for the bundled demo game, golden images and property tests: real shuffles, simple
but sensible players (they order on strong hands, go alone on very strong ones, follow
suit, trump in when it helps), dealer pick-up and discard, loners with sitting-out
partners, lone defenders, stick-the-dealer and throw-ins, no-trump, the joker, 28/32-card
decks.  Same seed and options, same game.  Pure: the only randomness is ``random.Random(seed)``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .cards import Card, Suit, bower, card_name, deck, effective_suit, trick_power
from .rules import Table, can_follow, score_deal, trick_winner
from .ruleset import Ruleset

__all__ = ["generate_game", "demo_game", "DEMO_PLAYERS"]

DEMO_PLAYERS = ["Marguerite Okafor", "Tobias Lindqvist", "Priya Raman", "Declan Whitfield"]



def _strength(hand: Sequence[Card], trump: Suit | None) -> float:
    """A rough count of tricks the hand can take with this trump."""
    value = 0.0
    for c in hand:
        p = trick_power(c, trump, effective_suit(c, trump))
        if trump is not None and effective_suit(c, trump) is trump:
            value += 1.0 if p >= 499 else 0.75 if p >= 313 else 0.5
        elif c.rank is not None and int(c.rank) == 14:
            value += 0.45
        elif c.joker:
            value += 1.0
    return value


def generate_game(
    seed: int,
    *,
    ruleset: dict[str, Any] | None = None,
    players: list[str] | None = None,
    deals: int | None = None,
    annotate: bool = False,
    title: str | None = None,
    player_cards: bool = True,
) -> dict[str, Any]:
    """A complete legal game as an EGN 1.4 JSON dict.

    ``deals`` caps the number of deals (default: play to the end of the game, at most 60).
    ``annotate`` adds a few commentary notes with quality labels.  ``player_cards=False``
    leaves the hands out of every deal's ``initialState``, as in a file logged at a table
    with no hole-card camera (the same seed deals and plays the same game either way).

    Raises:
        pydantic.ValidationError: the ruleset dict is not a valid ruleset.
        ValueError: ``min_rank`` 6: EGN card notation has no 6, so a 36-card game cannot be written.
    """
    rng = random.Random(seed)
    rules = Ruleset.model_validate(ruleset or {})
    if rules.min_rank == 6:
        raise ValueError("min_rank 6: EGN card notation has no 6, so a 36-card deck cannot be written")
    table = Table(4)
    names = list(players or DEMO_PLAYERS)[:4]
    score = [0, 0]
    tokens: tuple[int, ...] = (0, 0)
    out_deals: list[dict[str, Any]] = []
    dealer = rng.randrange(4)
    limit = deals if deals is not None else 60
    target = rules.target
    while len(out_deals) < limit:
        deal, result = _deal(rng, rules, table, dealer, len(out_deals), annotate, player_cards)
        out_deals.append(deal)
        if result is not None:
            maker, alone, defender, winners = result
            r = score_deal(rules, table, maker=maker, alone=alone, alone_defender=defender, winners=winners, tokens=tokens)
            tokens = r.tokens
            score = [a + b for a, b in zip(score, r.points)]
        dealer = (dealer + 1) % 4
        if target is not None and max(score) >= target:
            break
        if rules.num_deals and len(out_deals) >= rules.num_deals:
            break
    meta: dict[str, Any] = {
        "gameId": f"gen-{seed}",
        "title": title or f"Generated game {seed}",
        "date": "2026-11-30T20:00:00Z",
        "players": names,
        "initialScore": [0, 0],
        "finalScore": score,
    }
    if ruleset:
        meta["ruleset"] = dict(ruleset)
    return {"fileType": "Euchre Game Notation", "version": "1.4", "metadata": meta, "deals": out_deals}


def demo_game() -> dict[str, Any]:
    """The bundled demo game (``assets/demo/demo.egn`` is this, written with 2-space indent):
    a full game to 10 with two marching loners, a euchre and commentary notes."""
    return generate_game(35, deals=40, annotate=True, title="Demo: Harbour Cup final", players=list(DEMO_PLAYERS))


def _deal(
    rng: random.Random, rules: Ruleset, table: Table, dealer: int, number: int, annotate: bool, player_cards: bool = True
) -> tuple[dict[str, Any], tuple[int, bool, int, list[int]] | None]:
    cards = deck(rules.min_rank, joker=rules.joker)
    rng.shuffle(cards)
    hands = [cards[i * 5 : i * 5 + 5] for i in range(4)]
    kitty = cards[20:]
    up = kitty[0]
    if up.joker:  # a joker turned up: deal again with the joker lower in the kitty
        kitty = kitty[1:] + kitty[:1]
        up = kitty[0]
    dealt = [list(h) for h in hands]
    calls: list[str] = []
    maker: int | None = None
    trump: Suit | None = None
    no_trump = False
    up_suit = up.suit
    assert up_suit is not None
    # round 1
    for i in range(4):
        seat = (dealer + 1 + i) % 4
        hand = hands[seat] + ([up] if seat == dealer else [])
        bonus = 0.35 if table.team(seat) == table.team(dealer) else -0.2
        if _strength(hand, up_suit) + bonus + rng.uniform(-0.3, 0.3) >= 2.6:
            calls.append("Order")
            maker, trump = seat, up_suit
            break
        calls.append("Pass")
    if maker is None:
        for i in range(4):
            seat = (dealer + 1 + i) % 4
            options = [s for s in Suit if s is not up_suit]
            best = max(options, key=lambda s: _strength(hands[seat], s))
            strength = _strength(hands[seat], best)
            stuck = rules.std and seat == dealer
            if rules.allow_no_trump and sum(1 for c in hands[seat] if c.rank is not None and int(c.rank) == 14) >= 3:
                calls.append("n")
                maker, no_trump = seat, True
                break
            if strength + rng.uniform(-0.3, 0.3) >= 2.6 or stuck:
                calls.append(best.value)
                maker, trump = seat, best
                break
            calls.append("Pass")
    bidding: dict[str, Any] = {"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": calls, "isAlone": False}
    deal: dict[str, Any] = {"dealNumber": number, "initialState": {"dealer": dealer, "upCard": card_name(up)}}
    if maker is None:  # thrown in
        if player_cards:
            deal["initialState"]["playerCards"] = [[card_name(c) for c in h] for h in dealt]
        deal["phases"] = [bidding]
        return deal, None
    alone = False
    forced = rules.canadian and len(calls) <= 4 and maker == table.partner(dealer)
    if forced or _strength(hands[maker] + ([up] if maker == dealer and len(calls) <= 4 else []), trump) + rng.uniform(-0.2, 0.2) >= 3.3:
        alone = True
    defender = -1
    sit_out: frozenset[int] = frozenset()
    if alone:
        if rules.defend_alone:
            for d in ((maker + 1) % 4, (maker + 3) % 4):
                if _strength(hands[d], trump) >= 1.4:
                    defender = d
                    break
        sit_out = table.sit_out(maker, True, defender)
        bidding["isAlone"] = True
        if defender >= 0:
            bidding["aloneDefender"] = defender
    if len(calls) <= 4 and dealer not in sit_out:
        hand = hands[dealer] + [up]
        discard = min(hand, key=lambda c: (effective_suit(c, trump) is trump, trick_power(c, trump, effective_suit(c, trump))))
        hand.remove(discard)
        hands[dealer] = hand
        bidding["discard"] = card_name(discard)
    if player_cards:
        deal["initialState"]["playerCards"] = [[card_name(c) for c in h] for h in dealt]
    tricks, winners = _play(rng, rules, table, dealer, maker, alone, sit_out, trump if not no_trump else None, hands)
    play: dict[str, Any] = {"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": [[card_name(c) for c in t] for t in tricks]}
    if annotate:
        call_note, play_notes = _commentary(rules, table, dealer, maker, alone, sit_out, trump if not no_trump else None, tricks, winners)
        if call_note:
            bidding["callAnnotations"] = {str(len(calls) - 1): [call_note]}
        if play_notes:
            play["playAnnotations"] = play_notes
    deal["phases"] = [bidding, play]
    return deal, (maker, alone, defender, winners)


def _commentary(
    rules: Ruleset,
    table: Table,
    dealer: int,
    maker: int,
    alone: bool,
    sit_out: frozenset[int],
    trump: Suit | None,
    tricks: list[list[Card]],
    winners: list[int],
) -> tuple[str | None, dict[str, list[str]]]:
    """Notes a commentator would make on what actually happened (quality labels of EGN)."""
    taken = sum(1 for w in winners if table.team(w) == table.team(maker))
    name = trump.label if trump is not None else "no-trump"
    if alone and taken == len(winners):
        call = "[!!] Alone, and all five tricks: the loner pays off in full."
    elif taken * 2 < len(winners):
        call = f"[?] Making {name} on that hand was asking for trouble: euchred."
    elif taken == len(winners):
        call = f"[!] A confident {name} call, rewarded with a march."
    else:
        call = None
    notes: dict[str, list[str]] = {}
    leader = table.first_leader(rules, dealer, maker, alone, sit_out)
    flat = 0
    for t, trick in enumerate(tricks):
        seats = table.order_from(leader, sit_out)
        for c, card in enumerate(trick):
            note = None
            if c == 0 and t == 0 and bower(card, trump) == "right" and table.team(seats[0]) == table.team(maker):
                note = "[!] Textbook: the right bower first, to pull trump."
            elif c == 0 and bower(card, trump) == "left":
                note = "Watch the left bower: it leads trump, not its printed suit."
            elif c > 0 and trump is not None:
                before = trick_winner(trick[:c], trump)
                partner_winning = before is not None and table.team(seats[before]) == table.team(seats[c])
                if partner_winning and effective_suit(card, trump) is trump and trick_winner(trick[: c + 1], trump) == c:
                    led = effective_suit(trick[0], trump)
                    if led is not trump:
                        note = "[??] Trumping the partner's winning card."
            if note and len(notes) < 2:
                notes[str(flat)] = [note]
            flat += 1
        leader = winners[t]
    return call, notes


def _play(
    rng: random.Random,
    rules: Ruleset,
    table: Table,
    dealer: int,
    maker: int,
    alone: bool,
    sit_out: frozenset[int],
    trump: Suit | None,
    hands: list[list[Card]],
) -> tuple[list[list[Card]], list[int]]:
    leader = table.first_leader(rules, dealer, maker, alone, sit_out)
    tricks: list[list[Card]] = []
    winners: list[int] = []
    for _ in range(5):
        seats = table.order_from(leader, sit_out)
        trick: list[Card] = []
        for seat in seats:
            hand = hands[seat]
            led = effective_suit(trick[0], trump) if trick else None
            legal = [c for c in hand if effective_suit(c, trump) is led] if trick and can_follow(hand, led, trump) else list(hand)
            card = _choose(rng, legal, trick, seats, seat, trump, table)
            hand.remove(card)
            trick.append(card)
        w = trick_winner(trick, trump)
        assert w is not None
        leader = seats[w]
        tricks.append(trick)
        winners.append(leader)
    return tricks, winners


def _choose(rng: random.Random, legal: list[Card], trick: list[Card], seats: list[int], seat: int, trump: Suit | None, table: Table) -> Card:
    if not trick:
        ranked = sorted(legal, key=lambda c: trick_power(c, trump, effective_suit(c, trump)))
        return ranked[-1] if rng.random() < 0.6 else ranked[0]
    led = effective_suit(trick[0], trump)
    w = trick_winner(trick, trump)
    assert w is not None
    best = trick_power(trick[w], trump, led)
    partner_winning = table.team(seats[w]) == table.team(seat)
    winning = [c for c in legal if trick_power(c, trump, led) > best]
    if winning and not partner_winning:
        return min(winning, key=lambda c: trick_power(c, trump, led))
    return min(legal, key=lambda c: (trick_power(c, trump, led), rng.random()))
