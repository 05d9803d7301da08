"""Replay an EGN document into a :class:`~engine.state.Timeline` of immutable states.

The file stores only decisions (dealer, up-card, calls, cards in table order); this module
derives everything else: seats of each card, led suit, trick winners, leads, sitting-out
seats, hands at every step, points and the running score.  Rule breaches in the play
(a renege, a card played twice, a call out of turn) never stop the replay: they are
recorded as :class:`~engine.errors.Problem` values on the state where they happen and on
the timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .cards import Card, Suit, card_name, parse_card, resolve
from .errors import EgnError, Place, Problem
from .model import BiddingPhase, Deal, EgnDocument, TrickPlayPhase
from .rules import Table, is_renege, led_suit, score_deal, trick_winner
from .ruleset import Ruleset
from .state import (
    Action,
    Branch,
    Call,
    DealSummary,
    GameState,
    StepKind,
    Timeline,
    TrickState,
    UpCardState,
)

__all__ = ["replay", "replay_deal", "HAND_SIZE", "MIN_PLAYERS", "MAX_PLAYERS"]

HAND_SIZE = 5
#: Table sizes the replay seats (EGN holds at most 10 players, dealers 0-9, 10 cards a trick);
#: any other ``num_players`` is replayed as 4 players with a warning.
MIN_PLAYERS, MAX_PLAYERS = 2, 10
UNKNOWN = parse_card("Xx")


@dataclass
class _Ctx:
    source: str
    rules: Ruleset
    table: Table
    players: tuple[str, ...]
    problems: list[Problem] = field(default_factory=list)


@dataclass
class _DealOut:
    states: list[GameState]
    summary_args: dict[str, Any]
    score: tuple[int, ...]
    tokens: tuple[int, ...]
    action_steps: list[int]  # index in ``states`` of each action (calls, then cards)


@dataclass(frozen=True)
class _Checkpoint:
    """Everything the replay loop carries from one deal to the next, taken after a deal."""

    key: tuple[Any, ...]  # (source, metadata) the deal was replayed under
    deal: Deal | str
    steps: int
    summaries: int
    branches: int
    problems: int
    score: tuple[int, ...]
    tokens: tuple[int, ...]
    game_over_at: int | None
    winner: int | None


def replay(document: EgnDocument, *, source: str = "<input>", previous: Timeline | None = None) -> Timeline:
    """Replay every deal of a validated document.

    Packed (string) deals are unpacked through the condensed codec first.  With
    ``previous`` (an earlier replay of the same game, e.g. before a live logger added an
    action), deals equal to those already replayed are reused and the replay starts at
    the first deal that changed: the result is identical to a full replay.

    Rule breaches are collected on the timeline, never raised.  A ``num_players`` outside
    ``MIN_PLAYERS``..``MAX_PLAYERS`` is replayed as 4 players (a warning).
    """
    meta = document.metadata
    rules = meta.rules
    supported = MIN_PLAYERS <= rules.num_players <= MAX_PLAYERS
    table = Table(rules.num_players if supported else 4)
    names = list(meta.player_names)
    names += [f"Seat {i}" for i in range(len(names), table.players)]
    ctx = _Ctx(source=source, rules=rules, table=table, players=tuple(names))
    if not supported:
        ctx.problems.append(
            Problem(
                Place(source=source, path="/metadata/ruleset/num_players"),
                f"num_players {rules.num_players!r} is not a table of {MIN_PLAYERS} to {MAX_PLAYERS} players; the game is replayed as 4 players",
                "rule",
                "warning",
            )
        )
    init = list(meta.initialScore) + [0] * table.teams
    score: tuple[int, ...] = tuple(init[: table.teams])
    tokens: tuple[int, ...] = (0,) * table.teams
    steps: list[GameState] = []
    summaries: list[DealSummary] = []
    branches: list[Branch] = []
    game_over_at: int | None = None
    winner: int | None = None
    key = (source, meta)
    checkpoints: list[_Checkpoint] = []
    start = 0
    if previous is not None:
        for cp, raw in zip(previous.checkpoints, document.deals):
            if not isinstance(cp, _Checkpoint) or cp.key != key or cp.deal != raw:
                break
            checkpoints.append(cp)
        if checkpoints:
            cp = checkpoints[-1]
            start = len(checkpoints)
            steps = list(previous.steps[: cp.steps])
            summaries = list(previous.deals[: cp.summaries])
            branches = list(previous.branches[: cp.branches])
            ctx.problems = list(previous.problems[: cp.problems])
            score, tokens, game_over_at, winner = cp.score, cp.tokens, cp.game_over_at, cp.winner
    for index in range(start, len(document.deals)):
        raw = document.deals[index]
        deal = _unpack(raw, index, document, ctx)
        if deal is not None:
            if game_over_at is not None:
                ctx.problems.append(
                    Problem(Place(source=source, deal=index), f"this deal is played after the game ended at deal {game_over_at}", "rule", "warning")
                )
            out = replay_deal(ctx, deal, index, score=score, tokens=tokens, first_step=len(steps))
            steps.extend(out.states)
            for line_no, line in enumerate(deal.alternativeLines or []):
                from .branch import build_branch  # the branch module builds on this one

                branch = build_branch(ctx, deal, index, line_no, line, out, score_before=score, tokens_before=tokens)
                if branch is not None:
                    branches.append(branch)
            score, tokens = out.score, out.tokens
            summaries.append(DealSummary(**out.summary_args))
            if game_over_at is None and out.summary_args["points"] is not None:
                winner = _game_winner(rules, score, len(summaries))
                if winner is not None or _fixed_deals_done(rules, len(summaries)):
                    game_over_at = index
                    steps.append(_game_over_step(steps[-1], len(steps), winner))
                    summaries[-1] = replace(summaries[-1], last_step=len(steps) - 1)
        checkpoints.append(
            _Checkpoint(key, raw, len(steps), len(summaries), len(branches), len(ctx.problems), score, tokens, game_over_at, winner)
        )
    _check_final_score(ctx, meta.finalScore, score, len(summaries) > 0)
    return Timeline(
        steps=tuple(steps),
        deals=tuple(summaries),
        branches=tuple(branches),
        problems=tuple(ctx.problems),
        final_score=tuple(score) if len(score) >= 2 else (score[0], 0),
        winner=winner if game_over_at is not None else None,
        players=ctx.players,
        title=meta.title,
        checkpoints=tuple(checkpoints),
    )


def _game_over_step(last: GameState, index: int, winner: int | None) -> GameState:
    return replace(
        last,
        step=index,
        kind=StepKind.GAME_OVER,
        action=Action(StepKind.GAME_OVER),
        annotations=(),
        problems=(),
        game_over=True,
        winner=winner,
        to_act=None,
    )


def _game_winner(rules: Ruleset, score: Sequence[int], deals_played: int) -> int | None:
    target = rules.target
    if target is not None:
        best = max(range(len(score)), key=lambda t: score[t])
        return best if score[best] >= target else None
    if rules.num_deals > 0 and deals_played >= rules.num_deals:
        top = max(score)
        leaders = [t for t, s in enumerate(score) if s == top]
        return leaders[0] if len(leaders) == 1 else None
    return None


def _fixed_deals_done(rules: Ruleset, deals_played: int) -> bool:
    return rules.target is None and rules.num_deals > 0 and deals_played >= rules.num_deals


def _check_final_score(ctx: _Ctx, written: list[int] | None, score: Sequence[int], any_deal: bool) -> None:
    if written and any_deal and list(written) != list(score[: len(written)]):
        ctx.problems.append(
            Problem(Place(source=ctx.source, path="/metadata/finalScore"), f"finalScore {written!r} differs from the replayed score {list(score)!r}", "rule", "warning")
        )


def _unpack(raw: Deal | str, index: int, document: EgnDocument, ctx: _Ctx) -> Deal | None:
    if isinstance(raw, Deal):
        return raw
    try:
        from .codec.deal_bits import unpack_deal
    except ImportError:  # pragma: no cover - the codec package always ships
        ctx.problems.append(Problem(Place(source=ctx.source, deal=index), "packed deals need the condensed codec", "codec"))
        return None
    try:
        data = unpack_deal(raw, index, ruleset=document.metadata.ruleset.written() if document.metadata.ruleset else {}, place=Place(source=ctx.source, deal=index))
        return Deal.model_validate(data)
    except (EgnError, ValueError) as exc:
        place = getattr(exc, "place", Place(source=ctx.source, deal=index))
        ctx.problems.append(Problem(place, f"packed deal {raw[:24]!r} cannot be read: {getattr(exc, 'detail', exc)}", "codec"))
        return None


# --------------------------------------------------------------------------- one deal


class _DealReplay:
    """Mutable builder for one deal; emits an immutable state per step."""

    def __init__(self, ctx: _Ctx, deal: Deal, index: int, score: tuple[int, ...], tokens: tuple[int, ...], first_step: int, branch: str | None, line: int | None, prefill: _DealReplay | None = None, quiet: bool = False) -> None:
        self.ctx = ctx
        self.rules = ctx.rules
        self.table = ctx.table
        self.deal = deal
        self.index = index
        self.branch = branch
        self.line = line
        self.first_step = first_step
        self.P = self.table.players
        self.states: list[GameState] = []
        self.action_steps: list[int] = []
        self.pending: list[Problem] = []
        self.score = score
        self.tokens = tokens
        self.score_before = score
        self.tokens_before = tokens
        st = deal.initialState
        self.dealer = st.dealer % self.P
        if st.dealer >= self.P:
            self.problem(f"dealer {st.dealer} is not a seat of a {self.P}-player table", kind="schema")
        self.up = parse_card(st.upCard)
        self.up_state = UpCardState.FACE_UP
        self.calls: list[Call] = []
        self.trump: Suit | None = None
        self.no_trump = False
        self.trump_unknown = False
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
        self._per_team: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
        self.points: tuple[int, ...] | None = None
        self.thrown_in = False
        self.played: dict[tuple[object, ...], tuple[int, int]] = {}
        self.played_by: dict[int, list[Card]] = {}
        self.complete_play = False
        #: the first of the two passes only needs to know who played what: no states
        self.quiet = quiet
        self.hands, self.known = self._initial_hands()
        self.prefill = prefill
        self._placeholder: GameState = None  # type: ignore[assignment]
        if prefill is not None:
            self.backfill(prefill)

    # -- helpers -------------------------------------------------------------

    def place(self, **kw: Any) -> Place:
        return Place(source=self.ctx.source, deal=self.index, line=self.line, **kw)

    def problem(self, message: str, *, kind: str = "rule", severity: str = "error", **where: Any) -> None:
        p = Problem(self.place(**where), message, kind, severity)
        self.pending.append(p)
        self.ctx.problems.append(p)

    def tricks_per_team(self) -> tuple[int, ...]:
        key = tuple(self.per_seat)
        if self._per_team[0] != key:  # tricks change only when one is taken: keep the last answer
            per_team = [0] * self.table.teams
            for seat, n in enumerate(key):
                per_team[self.table.team(seat)] += n
            self._per_team = (key, _teams(per_team))
        return self._per_team[1]

    def emit(self, kind: StepKind, action: Action | None, *, annotations: Sequence[str] = (), to_act: int | None = None) -> None:
        if self.quiet:
            self.states.append(self._placeholder)
            return
        state = GameState(
            step=self.first_step + len(self.states),
            kind=kind,
            action=action,
            deal=self.index,
            deal_number=self.deal.dealNumber,
            num_players=self.P,
            players=self.ctx.players,
            dealer=self.dealer,
            up_card=self.up,
            up_card_state=self.up_state,
            calls=tuple(self.calls),
            trump=self.trump,
            no_trump=self.no_trump,
            maker=self.maker,
            alone=self.alone,
            alone_defender=self.alone_defender,
            sit_out=self.sit_out,
            discard=self.discard,
            hands=tuple(tuple(h) for h in self.hands),
            hands_known=tuple(self.known),
            trick=self.trick,
            tricks=tuple(self.tricks),
            tricks_per_seat=tuple(self.per_seat),
            tricks_per_team=_pair(self.tricks_per_team()),
            score=_pair(self.score),
            deal_points=_pair(self.points) if self.points is not None else None,
            tokens=_pair(self.tokens),
            annotations=tuple(annotations),
            to_act=to_act,
            thrown_in=self.thrown_in,
            problems=tuple(self.pending),
            branch=self.branch,
        )
        self.pending = []
        self.states.append(state)

    def _initial_hands(self) -> tuple[list[list[Card]], list[bool]]:
        """Hands as dealt: from ``playerCards``, else back-calculated from the play."""
        given = self.deal.initialState.playerCards or []
        hands: list[list[Card]] = [[] for _ in range(self.P)]
        known = [False] * self.P
        for seat in range(self.P):
            if seat < len(given) and given[seat]:
                hands[seat] = [parse_card(c) for c in given[seat]]
                known[seat] = all(c.known for c in hands[seat])
        self._given = [bool(h) for h in hands]
        # one deck: a card dealt twice (or the up-card also in a hand) is not a real deal
        holder: dict[Card, str] = {}
        if self.up.known:
            holder[self.up] = "the up-card"
        for seat, hand in enumerate(hands):
            for card in hand:
                if card.known and card in holder and not self.quiet:
                    self.problem(f"{card_name(card)!r} is dealt twice: seat {seat} and {holder[card]}", kind="schema")
                holder.setdefault(card, f"seat {seat}")
        return hands, known

    def backfill(self, first: _DealReplay) -> None:
        """Fill the hands not given in the file from what a first pass saw each seat play.

        The dealer's dealt hand is what it played, minus the up-card it picked up, plus
        its discard.  Cards never seen stay unknown (``Xx``).
        """
        for seat in range(self.P):
            if self._given[seat]:
                continue
            cards = list(first.played_by.get(seat, []))
            if seat == self.dealer and first.picked_up:
                cards = [c for c in cards if not c.same(self.up)]
                if first.discard is not None and not first.discard.same(self.up):
                    cards.append(first.discard)
            cards = cards[:HAND_SIZE] + [UNKNOWN] * max(0, HAND_SIZE - len(cards))
            self.hands[seat] = cards
            self.known[seat] = first.complete_play and all(c.known for c in cards)

    # -- bidding -------------------------------------------------------------

    def bidding(self, phase: BiddingPhase, phase_index: int) -> None:
        """One step per call.  The making call's step already shows the loner, the lone
        defender, who sits out and whether the dealer takes the up-card."""
        P = self.P
        ann = phase.callAnnotations or {}
        ended = False
        made_round = 0
        calls = list(phase.calls)
        for i, call in enumerate(calls):
            where: dict[str, Any] = {"phase": phase_index, "phase_type": "EUCHRE_BIDDING", "call": i}
            seat = (self.dealer + 1 + i) % P
            rnd = 1 if i < P else 2
            if ended:
                self.problem(f"{call!r}: bidding already ended with {self.calls[-1].call!r}", **where)
            elif i >= 2 * P:
                self.problem(f"{call!r}: only {2 * P} calls are possible", **where)
            self.calls.append(Call(seat=seat, call=call, index=i, round=rnd))
            last = i == len(calls) - 1
            made = False
            if not ended and call != "Pass" and not (call == "x" and not last):
                ended = made = self._make(call, seat, rnd, where)
                made_round = rnd
            if not ended and rnd == 1 and i == P - 1:
                self.up_state = UpCardState.TURNED_DOWN
            if made:
                self._declare(phase, phase_index, rnd)
            if not ended:
                to_act: int | None = None if i + 1 >= 2 * P else (seat + 1) % P
            else:
                to_act = self._after_bidding(phase, made_round)
            self.emit(StepKind.CALL, Action(StepKind.CALL, seat=seat, call=call, index=i), annotations=ann.get(str(i), []), to_act=to_act)
        if not ended:
            if len(calls) >= 2 * P:
                self.thrown_in = True
                self.up_state = UpCardState.TURNED_DOWN
                if self.rules.std:
                    self.problem(f"stick the dealer: dealer {self.dealer} must name trump, but all {2 * P} calls are Pass", phase=phase_index, phase_type="EUCHRE_BIDDING", call=len(calls) - 1)
            return
        if made_round == 1:
            self._pick_up(phase, phase_index)
        elif phase.discard is not None:
            self.problem(f"discard {phase.discard!r} after a round-2 call: the dealer picks up nothing", severity="warning", phase=phase_index, phase_type="EUCHRE_BIDDING")

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

    def _make(self, call: str, seat: int, rnd: int, where: dict[str, Any]) -> bool:
        up_suit = self.up.suit
        self.maker = seat
        if rnd == 1:
            self.up_state = UpCardState.TAKEN
            if self.up.joker and call in ("s", "h", "c", "d"):
                self.trump = Suit(call)  # the joker turned up: the suit named in round 1 is trump
                return True
            if call not in ("Order", "x") and (up_suit is None or call != up_suit.value):
                self.problem(f"{call!r}: round 1 only orders up the up-card's suit", **where)
            self.trump = up_suit
            if up_suit is None:
                self.trump_unknown = True
                if self.up.joker:
                    self.problem(f"{call!r}: the up-card is the joker and no suit is named; tricks are judged without trump", severity="warning", **where)
        else:
            if call == "n":
                self.no_trump = True
                if not self.rules.allow_no_trump:
                    self.problem("'n': no-trump is not allowed by this ruleset", **where)
            elif call == "x":
                self.trump_unknown = True
                self.problem("'x': trump is unknown; tricks are judged without trump", severity="warning", **where)
            elif call == "Order":
                self.problem("'Order' in round 2: the up-card is turned down; trump is unknown", **where)
                self.trump_unknown = True
            else:
                self.trump = Suit(call)
                if up_suit is not None and self.trump is up_suit:
                    self.problem(f"{call!r}: the turned-down suit cannot be named in round 2", **where)
        return True

    def _pick_up(self, phase: BiddingPhase, phase_index: int) -> None:
        where: dict[str, Any] = {"phase": phase_index, "phase_type": "EUCHRE_BIDDING"}
        if self._dealer_skips_pick_up(phase):
            return
        self.picked_up = True
        self.discard = parse_card(phase.discard) if phase.discard is not None else self._inferred_discard()
        hand = self.hands[self.dealer]
        if not any(c.same(self.up) for c in hand):
            hand.append(self.up)
        if self.discard is not None:
            self._remove(hand, self.discard, self.dealer, "discard", where)
        elif len(hand) > HAND_SIZE and any(not c.known for c in hand):
            self._remove(hand, UNKNOWN, self.dealer, "discard", where)
        self.emit(StepKind.DISCARD, Action(StepKind.DISCARD, seat=self.dealer, card=self.discard), to_act=self._first_leader())

    def _inferred_discard(self) -> Card | None:
        """With every trick recorded, the dealer's discard is the one card it held and never played."""
        first = self.prefill
        if first is None or not first.complete_play:
            return None
        held = list(self.hands[self.dealer])
        if not any(c.same(self.up) for c in held):
            held.append(self.up)
        for card in first.played_by.get(self.dealer, []):
            for i, c in enumerate(held):
                if c.same(card):
                    del held[i]
                    break
        return held[0] if len(held) == 1 and held[0].known else None

    def _remove(self, hand: list[Card], card: Card, seat: int, what: str, where: dict[str, Any]) -> None:
        for i, c in enumerate(hand):
            if resolve(c, self.trump).same(resolve(card, self.trump)):
                del hand[i]
                return
        for i, c in enumerate(hand):
            if not c.known:
                del hand[i]
                return
        if self.known[seat]:
            self.problem(f"{card_name(card)!r} ({what}) is not in seat {seat}'s hand", **where)

    # -- play ------------------------------------------------------------------

    def play(self, phase: TrickPlayPhase, phase_index: int, tricks: Sequence[Sequence[str]]) -> None:
        P = self.P
        trump = self.trump
        ann = phase.playAnnotations or {}
        order_leader = self._first_leader()
        per_trick = P - len(self.sit_out)
        flat = 0
        # seat of every card first (needs winners, which need only the cards), then hands
        parsed: list[list[tuple[int, Card]]] = []
        leader: int | None = order_leader
        leaders: list[int] = []
        for t, trick in enumerate(tricks):
            lead = leader if leader is not None else order_leader
            leaders.append(lead)
            seats = self.table.order_from(lead, self.sit_out)
            cards = [resolve(parse_card(c), trump) for c in trick]
            parsed.append(list(zip(seats, cards)))
            if len(trick) == per_trick:
                w = trick_winner(cards, trump)
                leader = seats[w if w is not None else 0]  # as below: an unjudgeable trick goes to its leader
            else:
                leader = None
        for row in parsed:
            for seat, card in row[:per_trick]:
                self.played_by.setdefault(seat, []).append(card)
        self.complete_play = len(tricks) >= HAND_SIZE and all(len(t) == per_trick for t in tricks[:HAND_SIZE])
        if self.quiet:
            return  # the first pass only learns who played what
        # with the hands known, walk the cards and emit steps
        for t, trick in enumerate(tricks):
            where_t: dict[str, Any] = {"phase": phase_index, "phase_type": "TRICK_PLAY", "trick": t}
            if t >= HAND_SIZE:
                self.problem(f"trick {t}: a deal has only {HAND_SIZE} tricks", **where_t)
            if len(trick) > per_trick:
                self.problem(f"{len(trick)} cards in a trick of {per_trick} players; the extra cards are ignored", **where_t)
            elif len(trick) < per_trick and t + 1 < len(tricks):
                self.problem(f"{len(trick)} cards in a trick of {per_trick} players, and more tricks follow; this trick is not taken by anyone", **where_t)
            row = parsed[t][:per_trick]
            lead = leaders[t]
            seats_so_far: list[int] = []
            cards_so_far: list[Card] = []
            led: Suit | None = None
            for c, (seat, card) in enumerate(row):
                where = dict(where_t, card=c)
                self._check_card(card, seat, t, c, led, where)
                if c == 0:
                    led = led_suit([card], trump)
                seats_so_far.append(seat)
                cards_so_far.append(card)
                self._remove(self.hands[seat], card, seat, "played", where)
                self.trick = TrickState(number=t, leader=lead, seats=tuple(seats_so_far), cards=tuple(cards_so_far), led=led)
                nxt = self.table.order_from(lead, self.sit_out)
                to_act = nxt[c + 1] if c + 1 < len(nxt) and c + 1 < per_trick else None
                self.emit(StepKind.CARD, Action(StepKind.CARD, seat=seat, card=card, index=flat), annotations=ann.get(str(flat), []), to_act=to_act)
                self.action_steps.append(len(self.states) - 1)
                flat += 1
            if len(row) == per_trick:
                w = trick_winner(cards_so_far, trump)
                if w is None:
                    self.problem("no card of this trick can be judged; the leader is assumed to win", severity="warning", **where_t)
                    w = 0
                winner = seats_so_far[w]
                done = TrickState(number=t, leader=lead, seats=tuple(seats_so_far), cards=tuple(cards_so_far), led=led, winner=winner, complete=True)
                self.per_seat[winner] += 1
                self.tricks.append(done)
                self.trick = done
                self.emit(StepKind.TRICK_TAKEN, Action(StepKind.TRICK_TAKEN, seat=winner), to_act=winner if t + 1 < HAND_SIZE else None)
                self.trick = None if t + 1 < len(tricks) else done
                self.shown.append(done)
            elif row:
                self.shown.append(TrickState(number=t, leader=lead, seats=tuple(seats_so_far), cards=tuple(cards_so_far), led=led))

    def _check_card(self, card: Card, seat: int, t: int, c: int, led: Suit | None, where: dict[str, Any]) -> None:
        name = card_name(card)
        if card.known:
            key = card.identity
            if key in self.played:
                pt, _pc = self.played[key]
                self.problem(f"{name!r} was already played in trick {pt}", **where)
            self.played[key] = (t, c)
            if self.discard is not None and self.discard.same(card):
                self.problem(f"{name!r} was discarded by the dealer", **where)
            if self.up.same(card) and not (self.picked_up and seat == self.dealer):
                if self.picked_up:
                    self.problem(f"{name!r} is the up-card, which the dealer (seat {self.dealer}) picked up", **where)
                else:
                    self.problem(f"{name!r} is the turned-down up-card, out of play", **where)
        if c > 0 and is_renege(card, self.hands[seat], led, self.trump):
            suit = led.label if led is not None else "?"
            # a renege happens at real tables: a fact of the game (a warning), not a bad record
            self.problem(f"{name!r}: renege — seat {seat} holds {suit} and must follow {suit}", severity="warning", **where)

    # -- scoring ---------------------------------------------------------------

    def finish(self) -> None:
        complete = len(self.tricks) >= HAND_SIZE
        if self.thrown_in:
            self.points = (0,) * self.table.teams
            self.emit(StepKind.DEAL_SCORED, Action(StepKind.DEAL_SCORED))
            return
        if not complete or self.maker is None:
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
        self.trick = None
        self.emit(StepKind.DEAL_SCORED, Action(StepKind.DEAL_SCORED))


def _teams(values: Sequence[int]) -> tuple[int, ...]:
    """Per-team values for the contract: at least two entries (one per team at four players)."""
    v = tuple(values)
    return v if len(v) >= 2 else v + (0,) * (2 - len(v))


def _pair(values: Sequence[int]) -> tuple[int, int]:
    v = list(values) + [0, 0]
    return (v[0], v[1])


def _run(
    ctx: _Ctx,
    deal: Deal,
    index: int,
    score: tuple[int, ...],
    tokens: tuple[int, ...],
    first_step: int,
    branch: str | None,
    line: int | None,
    prefill: _DealReplay | None,
) -> _DealReplay:
    r = _DealReplay(ctx, deal, index, score, tokens, first_step, branch, line, prefill, quiet=prefill is None)
    r.emit(StepKind.DEAL_START, Action(StepKind.DEAL_START, seat=r.dealer), to_act=(r.dealer + 1) % r.P)
    bid_seen = False
    play_seen = False
    for pi, phase in enumerate(deal.phases):
        if isinstance(phase, BiddingPhase):
            if bid_seen or play_seen:
                r.problem("a second bidding phase is ignored", phase=pi, phase_type="EUCHRE_BIDDING")
                continue
            bid_seen = True
            first_call_step = len(r.states)
            r.bidding(phase, pi)
            r.action_steps[0:0] = list(range(first_call_step, first_call_step + len(phase.calls)))
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
            r.play(phase, pi, phase.tricks)
    r.finish()
    return r


def replay_deal(
    ctx: _Ctx,
    deal: Deal,
    index: int,
    *,
    score: tuple[int, ...],
    tokens: tuple[int, ...],
    first_step: int,
    branch: str | None = None,
    line: int | None = None,
) -> _DealOut:
    """Replay one deal from the given running score; returns its states and summary.

    Two passes: the first (silent) learns which seat played which card, so that hands not
    given in the file are known from the first step of the second.
    """
    quiet = _Ctx(source=ctx.source, rules=ctx.rules, table=ctx.table, players=ctx.players)
    first = _run(quiet, deal, index, score, tokens, first_step, branch, line, None)
    r = _run(ctx, deal, index, score, tokens, first_step, branch, line, first)
    summary = {
        "deal": index,
        "deal_number": deal.dealNumber,
        "dealer": r.dealer,
        "up_card": card_name(r.up),
        "trump": None if r.thrown_in else ("n" if r.no_trump else (r.trump.value if r.trump else None)),
        "maker": r.maker,
        "alone": r.alone,
        "alone_defender": r.alone_defender,
        "sit_out": tuple(sorted(r.sit_out)),
        "tricks": tuple(r.shown),
        "tricks_per_team": r.tricks_per_team(),
        "points": _teams(r.points) if r.points is not None else None,
        "score_after": _teams(r.score),
        "complete": r.points is not None,
        "first_step": first_step,
        "last_step": first_step + len(r.states) - 1,
    }
    return _DealOut(states=r.states, summary_args=summary, score=r.score, tokens=r.tokens, action_steps=r.action_steps)
