"""One deal's state machine: dealer and up-card, calls, the dealer's pick-up, tricks, score.

:func:`replay_deal` turns one validated :class:`~engine.model.Deal` into its steps (one
immutable :class:`~engine.state.GameState` each) and a typed :class:`DealOutcome`; the
game loop (:mod:`engine.replay`) and the alternative lines (:mod:`engine.branch`) both
call it.

The deal is walked once, in file order.  Hands missing from ``playerCards`` are
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from .cards import Card, Suit, card_name, parse_card, resolve
from .errors import Place, Problem
from .layout import HAND_SIZE, Layout, card_of, lay_out, resolved
from .model import BiddingPhase, Deal, TrickPlayPhase
from .cards import effective_suit
from .rules import Table, reneges, score_deal
from .ruleset import Ruleset
from .state import (
    Action,
    Call,
    DealSummary,
    StepKind,
    TrickState,
    UpCardState,
    build,
)
from .steps import Record, Steps

__all__ = ["DealContext", "DealOutcome", "replay_deal", "HAND_SIZE"]

UNKNOWN = parse_card("Xx")
_KNOWN = attrgetter("known")  # ``all(map(_KNOWN, cards))``: the check without a Python generator
_CARD_STEP = StepKind.CARD  # bound once: an enum member read through its class costs more than the step's own work


@dataclass
class DealContext:
    """What every deal of one game shares: the source name, rules, table, player names,
    and the list the problems of the replay go to."""

    source: str
    rules: Ruleset
    table: Table
    players: tuple[str, ...]
    problems: list[Problem] = field(default_factory=list)

    def fresh(self) -> DealContext:
        """The same game with an empty problem list (an alternative line collects its own)."""
        return DealContext(source=self.source, rules=self.rules, table=self.table, players=self.players)


@dataclass(frozen=True)
class DealOutcome:
    """The replay of one deal.

    ``states`` is empty in the summary-only pass; everything else is the same in both.
    """

    summary: DealSummary
    states: Steps  # built on first read (:mod:`engine.steps`)
    step_count: int  # steps of this deal (``len(states)`` when they are built)
    score: tuple[int, ...]  # running score after the deal
    tokens: tuple[int, ...]  # four-trick tokens after the deal
    action_steps: tuple[int, ...]  # step (within the deal) of each action: calls, then cards
    problems: tuple[Problem, ...]  # this deal's problems, in the order found
    shown_at: tuple[int, ...]  # for each problem, the step (within the deal) it is shown on; -1: none


class _DealReplay:
    """Mutable walker for one deal; emits one step per visible event."""

    def __init__(self, ctx: DealContext, deal: Deal, index: int, score: tuple[int, ...], tokens: tuple[int, ...], first_step: int, branch: str | None, line: int | None, build: bool) -> None:
        self.ctx = ctx
        self.rules = ctx.rules
        self.table = ctx.table
        self.deal = deal
        self.index = index
        self.branch = branch
        self.line = line
        self.first_step = first_step
        self.build = build
        self.P = self.table.players
        self.rows: list[Record] = []  # one record per step (``build`` only): a field row, or a card record
        self._shown: tuple[Problem, ...] = ()  # the problems shown on the step just numbered
        self.count = 0  # steps emitted
        self.action_steps: list[int] = []
        self.pending: list[Problem] = []
        self.found: list[Problem] = []
        self.shown_at: list[int] = []
        self.score = score
        self.tokens = tokens
        st = deal.initialState
        self.dealer = st.dealer % self.P
        if st.dealer >= self.P:
            self.problem(f"dealer {st.dealer} is not a seat of a {self.P}-player table", kind="schema")
        self.up = parse_card(st.upCard)
        self.up_state = UpCardState.FACE_UP
        self.calls: list[Call] = []
        self.trump: Suit | None = None
        self.no_trump = False
        self.maker: int | None = None
        self.alone = False
        self.alone_defender = -1
        self.sit_out: frozenset[int] = frozenset()
        self.discard: Card | None = None
        self.picked_up = False
        self.tricks: list[TrickState] = []
        #: every trick of the file in order, the short ones too (for the summary)
        self.shown: list[TrickState] = []
        self.trick: TrickState | None = None
        self.per_seat = [0] * self.P
        self.per_team = [0] * self.table.teams
        self.points: tuple[int, ...] | None = None
        self.thrown_in = False
        self.played: dict[tuple[object, ...], int] = {}  # card identity -> trick it was played in
        self.layout: Layout | None = None
        self.hands, self.known, self.given = self._initial_hands()
        self._known_t = tuple(self.known)
        self.ready = False  # hands back-calculated (see the module docstring)
        self.ids: list[list[tuple[object, ...]]] = []  # per seat: identity of each card held (set with the hands)
        self.suits: list[list[Suit | None]] = []  # per seat: effective suit of each card held
        # tuples for the states, rebuilt only when their source changes
        self._hand_rows: list[tuple[Card, ...]] = [tuple(h) for h in self.hands]
        self._hands_t: tuple[tuple[Card, ...], ...] | None = None
        self._calls_t: tuple[Call, ...] = ()
        self._tricks_t: tuple[TrickState, ...] = ()
        self._per_seat_t: tuple[int, ...] = tuple(self.per_seat)
        self._per_team_t: tuple[int, int] = (0, 0)
        self._fixed: dict[str, Any] | None = None  # see _fields
        self._score_t = _pair(score)  # what states show; updated with ``score`` and ``tokens`` in :meth:`finish`
        self._tokens_t = _pair(tokens)

    # -- helpers -------------------------------------------------------------

    def problem(self, message: str, *, kind: str = "rule", severity: str = "error", **where: Any) -> None:
        p = Problem(Place(source=self.ctx.source, deal=self.index, line=self.line, **where), message, kind, severity)
        self.pending.append(p)
        self.found.append(p)
        self.shown_at.append(-1)
        self.ctx.problems.append(p)

    def tricks_per_team(self) -> tuple[int, ...]:
        return _teams(self.per_team)

    def emit(self, kind: StepKind, action: Action | None, *, annotations: Sequence[str] = (), to_act: int | None = None) -> None:
        """One step that is not a card's (a card step is :meth:`emit_card`)."""
        at = self._count_step()
        if not self.build:
            return
        row = self._fixed = self._fields()  # the next card steps start from this row
        row["step"] = self.first_step + at
        row["kind"] = kind
        row["action"] = action
        row["trick"] = self.trick
        row["annotations"] = tuple(annotations) if annotations else ()
        row["to_act"] = to_act
        row["problems"] = self._shown
        self.rows.append(row)

    def emit_card(self, seat: int, card: Card, flat: int, t: int, lead: int, seats: tuple[int, ...], cards: tuple[Card, ...], c: int, led: Suit | None, annotations: Sequence[str], to_act: int | None) -> None:
        """A card step, kept as a :data:`~engine.steps.CardRecord`: its state is built when read."""
        at = self._count_step()
        if not self.build:
            return
        fixed = self._fixed
        if fixed is None:
            fixed = self._fixed = self._fields()
        hands = self._hands_t
        if hands is None:
            hands = self._hands_t = tuple(self._hand_rows)
        self.rows.append(
            (fixed, hands, self.first_step + at, seat, card, flat, t, lead, seats, cards, c, led, tuple(annotations) if annotations else (), to_act, self._shown)
        )

    def _count_step(self) -> int:
        """Number the next step and show on it the problems found since the last (in ``_shown``)."""
        at = self.count
        self.count += 1
        pending = self.pending
        if pending:
            first = len(self.found) - len(pending)
            for i in range(first, len(self.found)):
                self.shown_at[i] = at
            self.pending = []
            self._shown = tuple(pending)
        else:
            self._shown = ()
        return at

    def _fields(self) -> dict[str, Any]:
        """The state's fields that change at most once a trick (a card step changes only the hands).

        :meth:`emit` rebuilds them for every step but a card's, and after the hands are
        back-calculated.
        """
        hands = self._hands_t
        if hands is None:
            hands = self._hands_t = tuple(self._hand_rows)
        return {
            "deal": self.index,
            "deal_number": self.deal.dealNumber,
            "num_players": self.P,
            "players": self.ctx.players,
            "dealer": self.dealer,
            "up_card": self.up,
            "up_card_state": self.up_state,
            "calls": self._calls_t,
            "trump": self.trump,
            "no_trump": self.no_trump,
            "maker": self.maker,
            "alone": self.alone,
            "alone_defender": self.alone_defender,
            "sit_out": self.sit_out,
            "discard": self.discard,
            "hands": hands,
            "hands_known": self._known_t,
            "tricks": self._tricks_t,
            "tricks_per_seat": self._per_seat_t,
            "tricks_per_team": self._per_team_t,
            "score": self._score_t,
            "deal_points": _pair(self.points) if self.points is not None else None,
            "tokens": self._tokens_t,
            "thrown_in": self.thrown_in,
            "game_over": False,
            "winner": None,
            "branch": self.branch,
        }

    def _initial_hands(self) -> tuple[list[list[Card]], list[bool], list[bool]]:
        """Hands as dealt, from ``playerCards``; the others are filled in by :meth:`ensure_hands`."""
        given = self.deal.initialState.playerCards or []
        hands: list[list[Card]] = [[] for _ in range(self.P)]
        known = [False] * self.P
        for seat in range(self.P):
            if seat < len(given) and given[seat]:
                hands[seat] = [card_of(c) for c in given[seat]]
                known[seat] = all(map(_KNOWN, hands[seat]))
        # one deck: a card dealt twice (or the up-card also in a hand) is not a real deal
        holder: dict[tuple[object, ...], int] = {}  # identity -> the seat dealt it first (-1: the up-card)
        if self.up.known:
            holder[self.up.identity] = -1
        for seat, hand in enumerate(hands):
            for card in hand:
                if not card.known:
                    continue
                key = card.identity
                first = holder.get(key)
                if first is None:
                    holder[key] = seat
                else:
                    where = "the up-card" if first < 0 else f"seat {first}"
                    self.problem(f"{card_name(card)!r} is dealt twice: seat {seat} and {where}", kind="schema")
        return hands, known, [bool(h) for h in hands]

    # -- hands -----------------------------------------------------------------

    def ensure_hands(self, play: TrickPlayPhase | None, *, picked_up: bool, first_discard: Card | None) -> None:
        """Lay out the play (if any) and fill the hands not given in the file, once.

        Called before the first card leaves a hand.  The dealer's dealt hand is what it
        played, minus the up-card it picked up, plus its recorded discard.  Cards never
        seen stay unknown (``Xx``).  The steps already emitted get these hands.
        """
        if self.ready:
            return
        self.ready = True
        layout = self.layout = lay_out(play.tricks, self.table, self.trump, self.sit_out, self._first_leader()) if play is not None else None
        played_by = layout.played_by if layout is not None else {}
        complete = layout is not None and layout.complete
        for seat in range(self.P):
            if self.given[seat]:
                continue
            cards = list(played_by.get(seat, []))
            if seat == self.dealer and picked_up:
                cards = [c for c in cards if not c.same(self.up)]
                if first_discard is not None and not first_discard.same(self.up):
                    cards.append(first_discard)
            cards = cards[:HAND_SIZE] + [UNKNOWN] * max(0, HAND_SIZE - len(cards))
            self.hands[seat] = cards
            self.known[seat] = complete and all(map(_KNOWN, cards))
            self._hand_rows[seat] = tuple(cards)
        # identities with trump-relative notation resolved, and effective suits, from the
        # layout's memo (every card here has its text: parsed, or resolved from parsed text)
        trump = self.trump
        rows = [[resolved(c.text, trump) for c in hand] for hand in self.hands]
        self.ids = [[r[0].identity for r in hand] for hand in rows]
        self.suits = [[r[1] for r in hand] for hand in rows]
        self._hands_t = hands = tuple(self._hand_rows)
        known = self._known_t = tuple(self.known)
        for row in self.rows:  # field rows only: no card has been played yet
            assert isinstance(row, dict)
            row["hands"] = hands
            row["hands_known"] = known
        self._fixed = None

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
        calls = phase.calls
        for i, call in enumerate(calls):
            seat = (self.dealer + 1 + i) % P
            rnd = 1 if i < P else 2
            if ended:
                self.problem(f"{call!r}: bidding already ended with {self.calls[-1].call!r}", phase=phase_index, phase_type="EUCHRE_BIDDING", call=i)
            elif i >= 2 * P:
                self.problem(f"{call!r}: only {2 * P} calls are possible", phase=phase_index, phase_type="EUCHRE_BIDDING", call=i)
            self.calls.append(build(Call, {"seat": seat, "call": call, "index": i, "round": rnd}))
            if self.build:
                self._calls_t = tuple(self.calls)
            last = i == len(calls) - 1
            made = False
            if not ended and call != "Pass" and not (call == "x" and not last):
                self._make(call, seat, rnd, {"phase": phase_index, "phase_type": "EUCHRE_BIDDING", "call": i})
                ended = made = True
                made_round = rnd
            if not ended and rnd == 1 and i == P - 1:
                self.up_state = UpCardState.TURNED_DOWN
            if made:
                self._declare(phase, phase_index, rnd)
            if not self.build:
                self.emit(StepKind.CALL, None)
                continue
            if not ended:
                to_act: int | None = None if i + 1 >= 2 * P else (seat + 1) % P
            else:
                to_act = self._after_bidding(phase, made_round)
            action = build(Action, {"kind": StepKind.CALL, "seat": seat, "card": None, "call": call, "index": i})
            self.emit(StepKind.CALL, action, annotations=ann.get(str(i), ()), to_act=to_act)
        if not ended and len(calls) >= 2 * P:
            self.thrown_in = True
            self.up_state = UpCardState.TURNED_DOWN
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
            self.up_state = UpCardState.TURNED_DOWN

    def _dealer_skips_pick_up(self, phase: BiddingPhase) -> bool:
        """A dealer who sits out (partner of a loner) takes the up-card only if a discard is recorded."""
        return self.dealer in self.sit_out and phase.discard is None

    def _first_leader(self) -> int:
        return self.table.first_leader(self.rules, self.dealer, self.maker, self.alone, self.sit_out)

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
            self.up_state = UpCardState.TAKEN
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
        if not any(c.same(self.up) for c in hand):
            hand.append(self.up)
            self.ids[self.dealer].append(resolve(self.up, self.trump).identity)
            self.suits[self.dealer].append(effective_suit(self.up, self.trump))
        out = self.discard
        if out is None and len(hand) > HAND_SIZE and any(not c.known for c in hand):
            out = UNKNOWN
        if out is not None and not self._take(self.dealer, out, resolve(out, self.trump).identity) and self.known[self.dealer]:
            self.problem(f"{card_name(out)!r} (discard) is not in seat {self.dealer}'s hand", phase=phase_index, phase_type="EUCHRE_BIDDING")
        self._hand_rows[self.dealer] = tuple(hand)
        self._hands_t = None
        self.emit(StepKind.DISCARD, Action(StepKind.DISCARD, seat=self.dealer, card=self.discard), to_act=self._first_leader())

    def _inferred_discard(self) -> Card | None:
        """With every trick recorded, the dealer's discard is the one card it held and never played."""
        layout = self.layout
        if layout is None or not layout.complete:
            return None
        held = list(self.hands[self.dealer])
        if not any(c.same(self.up) for c in held):
            held.append(self.up)
        for card in layout.played_by.get(self.dealer, []):
            for i, c in enumerate(held):
                if c.same(card):
                    del held[i]
                    break
        return held[0] if len(held) == 1 and held[0].known else None

    def _take(self, seat: int, card: Card, key: tuple[object, ...]) -> bool:
        """Take ``card`` (or, failing that, an unknown card) out of a hand; False if neither is there.

        Trump is settled by the time any card leaves a hand, so each hand keeps the
        identities of its cards with trump-relative notation resolved; ``key`` is the
        card's identity so resolved (the layout's cards are resolved already).
        """
        ids = self.ids[seat]
        try:
            i = ids.index(key)
        except ValueError:
            hand = self.hands[seat]
            for i, held in enumerate(hand):
                if not held.known:
                    break
            else:
                return False
        del self.hands[seat][i]
        del ids[i]
        del self.suits[seat][i]
        if self.build:
            self._hand_rows[seat] = tuple(self.hands[seat])
            self._hands_t = None
        return True

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
                elif self.pending:
                    self._count_step()
                else:
                    self.count += 1  # what emit does for a step without problems when no state is built
                self.action_steps.append(self.count - 1)
                flat += 1
            if len(cards) == per_trick:
                w = layout.winners[t]
                if w is None:
                    self.problem("no card of this trick can be judged; the leader is assumed to win", severity="warning", phase=phase_index, phase_type="TRICK_PLAY", trick=t)
                    w = 0
                winner = seats[w]
                done = build(TrickState, {"number": t, "leader": lead, "seats": seats, "cards": cards, "led": led, "winner": winner, "complete": True})
                self.per_seat[winner] += 1
                self.per_team[self.table.team(winner)] += 1
                self.tricks.append(done)
                self.trick = done
                if keep:
                    self._per_seat_t = tuple(self.per_seat)
                    self._per_team_t = _pair(self.per_team)
                    self._tricks_t = tuple(self.tricks)
                    action = build(Action, {"kind": StepKind.TRICK_TAKEN, "seat": winner, "card": None, "call": None, "index": None})
                    self.emit(StepKind.TRICK_TAKEN, action, to_act=winner if t + 1 < HAND_SIZE else None)
                elif self.pending:
                    self._count_step()
                else:
                    self.count += 1
                self.trick = None if t + 1 < len(tricks) else done
                self.shown.append(done)
            elif cards:
                short = build(TrickState, {"number": t, "leader": lead, "seats": seats, "cards": cards, "led": led, "winner": None, "complete": False})
                self.shown.append(short)
                self.trick = short  # the trick on the table, as its last card's step shows it

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
            self.emit(StepKind.DEAL_SCORED, Action(StepKind.DEAL_SCORED))
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
        self.score = tuple(a + b for a, b in zip(self.score, result.points))
        self._score_t, self._tokens_t = _pair(self.score), _pair(self.tokens)
        self.trick = None
        self.emit(StepKind.DEAL_SCORED, Action(StepKind.DEAL_SCORED))

    def summary(self) -> DealSummary:
        trump = self.trump
        return build(
            DealSummary,
            {
                "deal": self.index,
                "deal_number": self.deal.dealNumber,
                "dealer": self.dealer,
                "up_card": card_name(self.up),
                "trump": None if self.thrown_in else ("n" if self.no_trump else (trump.value if trump is not None else None)),
                "maker": self.maker,
                "alone": self.alone,
                "alone_defender": self.alone_defender,
                "sit_out": tuple(sorted(self.sit_out)),
                "tricks": tuple(self.shown),
                "tricks_per_team": self.tricks_per_team(),
                "points": _teams(self.points) if self.points is not None else None,
                "score_after": _teams(self.score),
                "complete": self.points is not None,
                "first_step": self.first_step,
                "last_step": self.first_step + self.count - 1,
            },
        )


def _teams(values: Sequence[int]) -> tuple[int, ...]:
    """Per-team values for the contract: at least two entries (one per team at four players)."""
    v = tuple(values)
    return v if len(v) >= 2 else v + (0,) * (2 - len(v))


def _pair(values: Sequence[int]) -> tuple[int, int]:
    """The first two teams' values (what a state shows)."""
    n = len(values)
    return (values[0] if n > 0 else 0, values[1] if n > 1 else 0)


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
    r.emit(StepKind.DEAL_START, Action(StepKind.DEAL_START, seat=r.dealer), to_act=(r.dealer + 1) % r.P)
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
