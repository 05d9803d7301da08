"""One deal's state machine: dealer and up-card, calls, the dealer's pick-up, tricks, score.

:func:`replay_deal` turns one validated :class:`~engine.model.Deal` into its steps (one
immutable :class:`~engine.state.GameState` each) and a typed :class:`DealOutcome`; the
game loop (:mod:`engine.replay`) and the alternative lines (:mod:`engine.branch`) both
call it.

The deal is walked once, in file order, over a :class:`~engine.dealstate.DealState` (what
the deal holds, its problems and its step records); this module is the rules that walk
it: bidding, the dealer's pick-up, the play and its checks, scoring.  Hands missing from ``playerCards`` are
back-calculated from the play (:mod:`engine.layout`: who played each card), which needs
the trick winners, which need trump: so the steps before the first card leaves a hand
(deal start and the calls, during which no hand changes) are kept as field rows and get
their hands once the play has been laid out, just before the dealer picks up or the
first card is played.

``states=False`` (the summary-only pass) runs the same rules and checks, finds the same
problems and the same summary, and builds no states: what ``inspect``, statistics and a
database import need.
"""

from __future__ import annotations

from operator import add, attrgetter
from typing import Any, Final

from .cards import Card, Suit, card_name, effective_suit, parse_card, resolve
from .dealstate import UNKNOWN, DealContext, DealState, state_pair
from .errors import Problem
from .layout import HAND_SIZE
from .model import BiddingPhase, Deal, TrickPlayPhase
from .outcome import DealOutcome
from .rules import reneges, score_deal
from .state import Action, Call, DealSummary, StepKind, TrickState, UpCardState, build
from .steps import Steps

__all__ = ["DealContext", "DealOutcome", "replay_deal", "HAND_SIZE"]

# Enum members bound once: reading one through its class costs about 0.3 us (ten times a
# global), and a deal reads them some thirty times.
_CARD_STEP: Final = StepKind.CARD
_CALL: Final = StepKind.CALL
_DISCARD: Final = StepKind.DISCARD
_TRICK_TAKEN: Final = StepKind.TRICK_TAKEN
_DEAL_START: Final = StepKind.DEAL_START
_DEAL_SCORED: Final = StepKind.DEAL_SCORED
_TURNED_DOWN: Final = UpCardState.TURNED_DOWN
_TAKEN: Final = UpCardState.TAKEN
_IDENTITY: Final = attrgetter("identity")


class _DealReplay(DealState):
    """One deal's rules, walking its :class:`~engine.dealstate.DealState` and emitting one step per visible event."""

    # -- bidding -------------------------------------------------------------

    def bidding(self, phase: BiddingPhase, phase_index: int) -> int:
        """One step per call; returns the round trump was made in (0: not made).

        The making call's step already shows the loner, the lone defender, who sits out
        and whether the dealer takes the up-card.
        """
        P = self.P
        ann = phase.callAnnotations or {}
        ended = False
        made_round = 0
        ending = 0  # the index of the call that made trump (read once ``ended``)
        calls = phase.calls
        for i, call in enumerate(calls):
            seat = (self.dealer + 1 + i) % P
            rnd = 1 if i < P else 2
            if ended:
                self.problem(f"{call!r}: bidding already ended with call {ending} ({calls[ending]!r})", phase=phase_index, phase_type="EUCHRE_BIDDING", call=i)
            elif i >= 2 * P:
                self.problem(f"{call!r}: only {2 * P} calls are possible", phase=phase_index, phase_type="EUCHRE_BIDDING", call=i)
            if self.build:  # the calls are the states' alone
                self.calls.append(build(Call, {"seat": seat, "call": call, "index": i, "round": rnd}))
                self._calls_t = tuple(self.calls)
            last = i == len(calls) - 1
            made = False
            if not ended and call != "Pass" and not (call == "x" and not last):
                self._make(call, seat, rnd, {"phase": phase_index, "phase_type": "EUCHRE_BIDDING", "call": i})
                ended = made = True
                made_round = rnd
                ending = i
            if not ended and rnd == 1 and i == P - 1:
                self.up_state = _TURNED_DOWN
            if made:
                self._declare(phase, phase_index, rnd)
            if not self.build:
                self.emit(_CALL, None)
                continue
            if not ended:
                to_act: int | None = None if i + 1 >= 2 * P else (seat + 1) % P
            else:
                to_act = self._after_bidding(phase, made_round)
            action = build(Action, {"kind": _CALL, "seat": seat, "card": None, "call": call, "index": i})
            self.emit(_CALL, action, annotations=ann.get(str(i), ()), to_act=to_act)
        if not ended and len(calls) >= 2 * P:
            self.thrown_in = True
            self.up_state = _TURNED_DOWN
            if self.rules.std:
                self.problem(f"stick the dealer: dealer {self.dealer} must name trump, but all {2 * P} calls are Pass", phase=phase_index, phase_type="EUCHRE_BIDDING", call=len(calls) - 1)
        return made_round

    def _declare(self, phase: BiddingPhase, phase_index: int, rnd: int) -> None:
        """Loner, lone defender and sitting-out seats, known as soon as trump is made."""
        P = self.P
        self.alone = bool(phase.isAlone)
        where: dict[str, Any] = {"phase": phase_index, "phase_type": "EUCHRE_BIDDING"}
        assert self.maker is not None
        if self.rules.canadian and not self.alone and rnd == 1 and self.maker == self.table.partner(self.dealer):
            self.problem(f"canadian loner: seat {self.maker} ordered up the dealer's card and must go alone", severity="warning", **where)
            self.alone = True
        d = phase.aloneDefender
        if d is not None and d >= 0:
            if not self.alone:
                self.problem(f"aloneDefender {d} without a loner is ignored", severity="warning", **where)
            elif d >= P or self.table.team(d) == self.table.team(self.maker):
                self.problem(f"aloneDefender {d} is not a defender", **where)
            else:
                if not self.rules.defend_alone:
                    self.problem(f"aloneDefender {d} but the ruleset does not allow defending alone", severity="warning", **where)
                self.alone_defender = d
        self.sit_out = self.table.sit_out(self.maker, self.alone, self.alone_defender)
        if rnd == 1 and self._dealer_skips_pick_up(phase):
            self.up_state = _TURNED_DOWN

    def _dealer_skips_pick_up(self, phase: BiddingPhase) -> bool:
        """A dealer who sits out (partner of a loner) takes the up-card only if a discard is recorded."""
        return self.dealer in self.sit_out and phase.discard is None

    def _after_bidding(self, phase: BiddingPhase, made_round: int) -> int:
        """Whose turn once trump is made: the dealer to discard after a round-1 order, else the first leader."""
        if made_round == 1 and not self._dealer_skips_pick_up(phase):
            return self.dealer
        return self._first_leader()

    def _make(self, call: str, seat: int, rnd: int, where: dict[str, Any]) -> None:
        """The call that makes trump (or no-trump, or leaves it unknown: then tricks are judged without trump)."""
        up_suit = self.up.suit
        self.maker = seat
        if rnd == 1:
            self.up_state = _TAKEN
            if self.up.joker and call in ("s", "h", "c", "d"):
                self.trump = Suit(call)  # the joker turned up: the suit named in round 1 is trump
                return
            if call not in ("Order", "x") and (up_suit is None or call != up_suit.value):
                self.problem(f"{call!r}: round 1 only orders up the up-card's suit", **where)
            self.trump = up_suit
            if up_suit is None and self.up.joker:
                self.problem(f"{call!r}: the up-card is the joker and no suit is named; tricks are judged without trump", severity="warning", **where)
        elif call == "n":
            self.no_trump = True
            if not self.rules.allow_no_trump:
                self.problem("'n': no-trump is not allowed by this ruleset", **where)
        elif call == "x":
            self.problem("'x': trump is unknown; tricks are judged without trump", severity="warning", **where)
        elif call == "Order":
            self.problem("'Order' in round 2: the up-card is turned down; trump is unknown", **where)
        else:
            self.trump = Suit(call)
            if up_suit is not None and self.trump is up_suit:
                self.problem(f"{call!r}: the turned-down suit cannot be named in round 2", **where)

    def pick_up(self, phase: BiddingPhase, phase_index: int, play: TrickPlayPhase | None) -> None:
        """After a round-1 order: the dealer takes the up-card and discards (one step)."""
        if self._dealer_skips_pick_up(phase):
            return
        self.picked_up = True
        written = parse_card(phase.discard) if phase.discard is not None else None
        self.ensure_hands(play, picked_up=True, first_discard=written)
        self.discard = written if written is not None else self._inferred_discard()
        hand = self.hands[self.dealer]
        if self.up.identity not in map(_IDENTITY, hand):  # no card of the hand is the same as the up-card
            hand.append(self.up)
            self.ids[self.dealer].append(resolve(self.up, self.trump).identity)
            self.suits[self.dealer].append(effective_suit(self.up, self.trump))
        out = self.discard
        if out is None and len(hand) > HAND_SIZE and any(not c.known for c in hand):
            out = UNKNOWN
        if out is not None and not self._take(self.dealer, out, resolve(out, self.trump).identity) and self.known[self.dealer]:
            self.problem(f"{card_name(out)!r} (discard) is not in seat {self.dealer}'s hand", phase=phase_index, phase_type="EUCHRE_BIDDING")
        if self.build:
            self._hand_rows[self.dealer] = tuple(hand)
            self._hands_t = None
        self.emit(_DISCARD, Action(_DISCARD, seat=self.dealer, card=self.discard) if self.build else None, to_act=self._first_leader())

    def _inferred_discard(self) -> Card | None:
        """With every trick recorded, the dealer's discard is the one card it held and never played."""
        layout = self.layout
        if layout is None or not layout.complete:
            return None
        held = list(self.hands[self.dealer])
        keys = list(map(_IDENTITY, held))  # ``Card.same`` is equal identities: compared in C
        if self.up.identity not in keys:
            held.append(self.up)
            keys.append(self.up.identity)
        for card in layout.played_by.get(self.dealer, []):
            key = card.identity
            if key in keys:
                i = keys.index(key)
                del held[i], keys[i]
        return held[0] if len(held) == 1 and held[0].known else None

    # -- play ------------------------------------------------------------------

    def play(self, phase: TrickPlayPhase, phase_index: int) -> None:
        """One step per card and one per trick taken."""
        self.ensure_hands(phase, picked_up=self.picked_up, first_discard=None)
        layout = self.layout
        assert layout is not None
        tricks = phase.tricks
        keep = self.build  # build the states
        ann = phase.playAnnotations or {}
        per_trick = self.P - len(self.sit_out)
        flat = 0
        ids, hands, held_suits = self.ids, self.hands, self.suits
        played = self.played
        # a known card that is neither played before, nor the discard, nor the up-card
        # needs no check but the renege (the common case, judged inline)
        discard_key = self.discard.identity if self.discard is not None else None
        up_key = self.up.identity
        # bound once: read per card or per trick.  ``count`` mirrors ``self.count`` in the
        # summary-only pass and is written back before anything else reads it
        add_step = self.action_steps.append
        team_of, per_seat, per_team = self.table.team, self.per_seat, self.per_team
        count = self.count
        for t, trick in enumerate(tricks):
            if t >= HAND_SIZE:
                self.problem(f"trick {t}: a deal has only {HAND_SIZE} tricks", phase=phase_index, phase_type="TRICK_PLAY", trick=t)
            if len(trick) > per_trick:
                self.problem(f"{len(trick)} cards in a trick of {per_trick} players; the extra cards are ignored", phase=phase_index, phase_type="TRICK_PLAY", trick=t)
            elif len(trick) < per_trick and t + 1 < len(tricks):
                self.problem(f"{len(trick)} cards in a trick of {per_trick} players, and more tricks follow; this trick is not taken by anyone", phase=phase_index, phase_type="TRICK_PLAY", trick=t)
            lead = layout.leaders[t]
            order = layout.orders[t]
            seats = layout.seats[t]
            cards = layout.cards[t]
            suits = layout.suits[t]
            led: Suit | None = None
            for c, card in enumerate(cards):
                seat = seats[c]
                key = card.identity
                if not card.known:
                    pass
                elif key in played or key == discard_key or key == up_key:
                    self._check_known(card, seat, t, c, phase_index)
                else:
                    played[key] = t
                if c == 0:
                    led = suits[0]  # the layout's effective suit of the lead: what led_suit gives
                elif suits[c] is not led and reneges(suits[c], held_suits[seat], led):
                    self._renege(card, seat, t, c, led, phase_index)
                held = ids[seat]
                if key in held:  # the common case, inline; :meth:`_take` does the rest
                    i = held.index(key)
                    del held[i], hands[seat][i], held_suits[seat][i]
                    if keep:
                        self._hand_rows[seat] = tuple(hands[seat])
                        self._hands_t = None
                elif not self._take(seat, card, key) and self.known[seat]:
                    self.problem(f"{card_name(card)!r} (played) is not in seat {seat}'s hand", phase=phase_index, phase_type="TRICK_PLAY", trick=t, card=c)
                if keep:
                    to_act = order[c + 1] if c + 1 < per_trick else None
                    self.emit_card(seat, card, flat, t, lead, seats, cards, c, led, ann.get(str(flat), ()) if ann else (), to_act)
                    count = self.count
                elif self.pending:
                    self.count = count
                    count = self._count_step() + 1
                else:
                    count += 1  # what emit does for a step without problems when no state is built
                add_step(count - 1)
                flat += 1
            if len(cards) == per_trick:
                w = layout.winners[t]
                if w is None:
                    self.problem("no card of this trick can be judged; the leader is assumed to win", severity="warning", phase=phase_index, phase_type="TRICK_PLAY", trick=t)
                    w = 0
                winner = seats[w]
                done = build(TrickState, {"number": t, "leader": lead, "seats": seats, "cards": cards, "led": led, "winner": winner, "complete": True})
                per_seat[winner] += 1
                per_team[team_of(winner)] += 1
                self.tricks.append(done)
                self.trick = done
                if keep:
                    self._per_seat_t = tuple(per_seat)
                    self._per_team_t = state_pair(per_team)
                    self._tricks_t = tuple(self.tricks)
                    action = build(Action, {"kind": _TRICK_TAKEN, "seat": winner, "card": None, "call": None, "index": None})
                    self.emit(_TRICK_TAKEN, action, to_act=winner if t + 1 < HAND_SIZE else None)
                    count = self.count
                elif self.pending:
                    self.count = count
                    count = self._count_step() + 1
                else:
                    count += 1
                self.trick = None if t + 1 < len(tricks) else done
                self.shown.append(done)
            elif cards:
                short = build(TrickState, {"number": t, "leader": lead, "seats": seats, "cards": cards, "led": led, "winner": None, "complete": False})
                self.shown.append(short)
                self.trick = short  # the trick on the table, as its last card's step shows it
        self.count = count

    def _check_known(self, card: Card, seat: int, t: int, c: int, phase_index: int) -> None:
        """A known card played twice, the discard or the up-card played (then remembered as played)."""
        key = card.identity
        played = self.played
        if key in played:
            self.problem(f"{card_name(card)!r} was already played in trick {played[key]}", phase=phase_index, phase_type="TRICK_PLAY", trick=t, card=c)
        played[key] = t
        if self.discard is not None and self.discard.identity == key:
            self.problem(f"{card_name(card)!r} was discarded by the dealer", phase=phase_index, phase_type="TRICK_PLAY", trick=t, card=c)
        if self.up.identity == key and not (self.picked_up and seat == self.dealer):
            if self.picked_up:
                self.problem(f"{card_name(card)!r} is the up-card, which the dealer (seat {self.dealer}) picked up", phase=phase_index, phase_type="TRICK_PLAY", trick=t, card=c)
            else:
                self.problem(f"{card_name(card)!r} is the turned-down up-card, out of play", phase=phase_index, phase_type="TRICK_PLAY", trick=t, card=c)

    def _renege(self, card: Card, seat: int, t: int, c: int, led: Suit | None, phase_index: int) -> None:
        """A card off the led suit from a hand that holds it (:func:`engine.rules.reneges` said so)."""
        name = led.label if led is not None else "?"
        # a renege happens at real tables: a fact of the game (a warning), not a bad record
        self.problem(
            f"{card_name(card)!r}: renege — seat {seat} holds {name} and must follow {name}",
            severity="warning", phase=phase_index, phase_type="TRICK_PLAY", trick=t, card=c,
        )

    # -- scoring ---------------------------------------------------------------

    def finish(self) -> None:
        """Score a complete deal (or a throw-in) and emit its step."""
        self.ensure_hands(None, picked_up=self.picked_up, first_discard=None)
        if self.thrown_in:
            self.points = (0,) * self.table.teams
            self.emit(_DEAL_SCORED, Action(_DEAL_SCORED) if self.build else None)
            return
        if len(self.tricks) < HAND_SIZE or self.maker is None:
            return
        result = score_deal(
            self.rules,
            self.table,
            maker=self.maker,
            alone=self.alone,
            alone_defender=self.alone_defender,
            winners=[t.winner for t in self.tricks[:HAND_SIZE] if t.winner is not None],
            tokens=self.tokens,
        )
        self.points = result.points
        self.tokens = result.tokens
        self.score = tuple(map(add, self.score, result.points))
        if self.build:
            self._score_t, self._tokens_t = state_pair(self.score), state_pair(self.tokens)
        self.trick = None
        self.emit(_DEAL_SCORED, Action(_DEAL_SCORED) if self.build else None)


def _play_after(deal: Deal, start: int) -> TrickPlayPhase | None:
    """The first trick-play phase after position ``start`` (the one that will be played)."""
    for phase in deal.phases[start + 1 :]:
        if isinstance(phase, TrickPlayPhase):
            return phase
    return None


def replay_deal(
    ctx: DealContext,
    deal: Deal,
    index: int,
    *,
    score: tuple[int, ...],
    tokens: tuple[int, ...],
    first_step: int,
    branch: str | None = None,
    line: int | None = None,
    states: bool = True,
) -> DealOutcome:
    """Replay one deal from the given running score; its problems go to ``ctx``.

    ``states=False`` builds no :class:`GameState` (the summary-only pass): the summary,
    score, problems and step numbers are the same.
    """
    r = _DealReplay(ctx, deal, index, score, tokens, first_step, branch, line, states)
    r.emit(_DEAL_START, Action(_DEAL_START, seat=r.dealer) if states else None, to_act=(r.dealer + 1) % r.P)
    bid_seen = False
    play_seen = False
    calls: list[int] = []
    for pi, phase in enumerate(deal.phases):
        if isinstance(phase, BiddingPhase):
            if bid_seen or play_seen:
                r.problem("a second bidding phase is ignored", phase=pi, phase_type="EUCHRE_BIDDING")
                continue
            bid_seen = True
            first_call_step = r.count
            made_round = r.bidding(phase, pi)
            calls = list(range(first_call_step, first_call_step + len(phase.calls)))
            if made_round == 1:
                r.pick_up(phase, pi, _play_after(deal, pi))
            elif made_round == 2 and phase.discard is not None:
                r.problem(f"discard {phase.discard!r} after a round-2 call: the dealer picks up nothing", severity="warning", phase=pi, phase_type="EUCHRE_BIDDING")
        else:
            if play_seen:
                r.problem("a second trick-play phase is ignored", phase=pi, phase_type="TRICK_PLAY")
                continue
            play_seen = True
            if r.thrown_in:
                if any(phase.tricks):
                    r.problem("cards played after a throw-in", phase=pi, phase_type="TRICK_PLAY")
                continue
            if r.maker is None and phase.tricks:
                r.problem("cards played before trump was made", severity="warning", phase=pi, phase_type="TRICK_PLAY")
            r.play(phase, pi)
    r.finish()
    return build(  # one per deal: the frozen constructor's setattr per field is worth skipping
        DealOutcome,
        {
            "summary": r.summary(),
            "states": Steps(r.rows),
            "step_count": r.count,
            "score": r.score,
            "tokens": r.tokens,
            "action_steps": tuple(calls + r.action_steps),
            "problems": tuple(r.found),
            "shown_at": tuple(r.shown_at),
        },
    )
