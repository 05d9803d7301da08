"""Double-dummy solver: the value of a deal in the trick play when every active hand is known.

Why a solver of its own: broadcast analysis needs exact values (tricks and points under best
play by both teams) fast enough to follow a live game.  The method is the one of Bo Haglund's
DDS for bridge, cut to Euchre's five tricks:

* **alpha-beta** over the cards, with a **transposition table** at each trick's start keyed by
  the four remaining hands, the leader and what the past tricks mean for the score;
* **equivalent-card merging**: two cards of one hand that follow the same suit with no live card
  between them take the same tricks, so only one is searched;
* **move ordering**: the leader tries strong cards first; a follower tries the cheapest card that
  wins, or its lowest card when its partner already wins.

The value searched is the deal's **points** under the ruleset's own scoring
(:func:`engine.rules.score_deal`: march, euchre, loner and lone-defence scores, four-trick
tokens, ``fast_break``), tricks breaking ties: team 0 maximises ``8 * (points0 - points1) +
tricks0``, team 1 minimises it.  Suit is judged only by :func:`engine.cards.effective_suit`
(through :func:`engine.cards.trick_power`), legality mirrors :func:`engine.rules.reneges`.

Pure: values in, values out.  A :class:`Solver` keeps its tables between calls, so stepping
through one deal reuses the work of the steps before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card, Suit, card_name, deck, effective_suit, resolve, trick_power
from .pickling import init_values
from .rules import Table, score_deal, trick_winner
from .ruleset import Ruleset
from .state import GameState, StepKind, UpCardState, team_of

__all__ = [
    "TRICKS",
    "Position",
    "CardValue",
    "PlayAnalysis",
    "Solver",
    "position_of",
    "value_of",
]

#: tricks in a deal
TRICKS = 5
#: weight of a point against a trick in the searched value (tricks 0..5 stay below it)
_POINT = 8
_TABLE4 = Table(4)
_SUITS: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)
_NONE = 4  # index of "no suit" (the joker at no-trump)


@dataclass(frozen=True)
class Position:
    """A deal in the trick play, every active hand known: everything the value depends on.

    ``hands`` has one entry per seat (empty for a seat that sits out); ``trick_cards`` are the
    cards of the trick in progress, led by ``leader``; ``winners`` are the seats that took the
    completed tricks of this deal.  ``tokens`` are the four-trick tokens before the deal.
    """

    rules: Ruleset
    trump: Suit | None
    maker: int
    alone: bool
    alone_defender: int
    sit_out: frozenset[int]
    hands: tuple[tuple[Card, ...], ...]
    leader: int
    trick_cards: tuple[Card, ...] = ()
    winners: tuple[int, ...] = ()
    tokens: tuple[int, int] = (0, 0)

    @property
    def to_act(self) -> int:
        seat = self.leader
        for _ in self.trick_cards:
            seat = _TABLE4.left_of(seat, self.sit_out)
        return seat

    def __reduce__(self) -> tuple[type[Position], tuple[object, ...]]:
        return (Position, init_values(self))


@dataclass(frozen=True)
class CardValue:
    """The value of one legal card of the player to act, under best play afterwards."""

    card: Card
    tricks: tuple[int, int]
    points: tuple[int, int]
    #: tricks and points the player's team gives up against its best card (0 for a best card)
    trick_loss: int
    point_loss: int

    def to_json(self) -> dict[str, object]:
        return {"card": card_name(self.card), "ddTricks": list(self.tricks), "points": list(self.points), "trickLoss": self.trick_loss, "pointLoss": self.point_loss}

    def __reduce__(self) -> tuple[type[CardValue], tuple[object, ...]]:
        return (CardValue, init_values(self))


@dataclass(frozen=True)
class PlayAnalysis:
    """Double-dummy result of a position: whole-deal tricks and points per team under best
    play (tricks already taken included), the best cards of the player to act and the value
    of each legal card."""

    tricks: tuple[int, int]
    points: tuple[int, int]
    to_act: int | None
    best: tuple[Card, ...]
    cards: tuple[CardValue, ...]

    def __reduce__(self) -> tuple[type[PlayAnalysis], tuple[object, ...]]:
        return (PlayAnalysis, init_values(self))


def value_of(u: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Decode a searched value into (tricks per team, points per team).  Only one team scores
    in a deal, so the point difference gives both teams' points."""
    tricks0 = u % _POINT
    diff = u // _POINT
    return (tricks0, TRICKS - tricks0), ((diff, 0) if diff > 0 else (0, -diff))


class _Context:
    """What stays fixed through one deal's play: the card tables under this trump and the
    score of every pattern of tricks won by the makers."""

    def __init__(self, rules: Ruleset, trump: Suit | None, maker: int, alone: bool, alone_defender: int, sit_out: frozenset[int], tokens: tuple[int, int]) -> None:
        self.cards = [resolve(c, trump) for c in deck(rules.min_rank, joker=rules.joker)]
        self.index = {c.identity: i for i, c in enumerate(self.cards)}
        led_options: list[Suit | None] = [*_SUITS, None]
        self.esuit: list[int] = []
        self.power: list[list[int]] = []
        for c in self.cards:
            s = effective_suit(c, trump)
            self.esuit.append(_NONE if s is None else _SUITS.index(s))
            self.power.append([trick_power(c, trump, led) for led in led_options])
        self.suit_mask = [0] * 5
        for i, e in enumerate(self.esuit):
            self.suit_mask[e] |= 1 << i
        # each suit's cards strongest first, for merging runs of equivalent cards
        self.order = [sorted((i for i in range(len(self.cards)) if self.esuit[i] == s), key=lambda i: -self.power[i][self.esuit[i]]) for s in range(5)]
        self.maker_team = team_of(maker)
        self.sit_out = sit_out
        self.next_seat = [_TABLE4.left_of(s, sit_out) for s in range(4)]
        self.trick_size = 4 - len(sit_out)
        # value of every pattern of the five tricks (bit t set: the makers took trick t)
        defender = (maker + 1) % 4
        self.final: list[int] = []
        for pattern in range(1 << TRICKS):
            winners = [maker if pattern >> t & 1 else defender for t in range(TRICKS)]
            r = score_deal(rules, _TABLE4, maker=maker, alone=alone, alone_defender=alone_defender, winners=winners, tokens=tokens)
            taken = bin(pattern).count("1")
            tricks0 = taken if self.maker_team == 0 else TRICKS - taken
            self.final.append(_POINT * (r.points[0] - r.points[1]) + tricks0)
        # the best and worst final value still open after ``done`` tricks with this history
        self.bounds: dict[tuple[int, int], tuple[int, int]] = {}
        for done in range(TRICKS + 1):
            for history in range(1 << done):
                finals = [self.final[history | rest << done] for rest in range(1 << (TRICKS - done))]
                self.bounds[(history, done)] = (min(finals), max(finals))
        # when only the number of tricks counts (no fast break), past tricks key by their count
        by_count: dict[int, int] = {}
        self.count_only = all(by_count.setdefault(bin(p).count("1"), v) == v for p, v in enumerate(self.final))
        self.table: dict[tuple[int, int, int, int, int, int], tuple[int, int]] = {}
        self.nodes = 0


class _Search:
    """One search's mutable board over a :class:`_Context` (hands as bit masks)."""

    def __init__(self, ctx: _Context, hands: list[int], leader: int, trick: list[int], history: int, done: int) -> None:
        self.ctx = ctx
        self.hands = hands
        self.leader = leader
        self.trick = trick  # card indices of the trick in progress
        self.history = history  # bit t: the makers took trick t
        self.done = done  # completed tricks

    def to_act(self) -> int:
        seat = self.leader
        for _ in self.trick:
            seat = self.ctx.next_seat[seat]
        return seat

    def legal(self, seat: int) -> int:
        """Legal cards as a mask: follow the led suit if the hand can (a card of no suit, the
        joker at no-trump, may always be played, as :func:`engine.rules.reneges` says)."""
        hand = self.hands[seat]
        if not self.trick:
            return hand
        ctx = self.ctx
        led = ctx.esuit[self.trick[0]]
        if led == _NONE:
            return hand
        follow = hand & ctx.suit_mask[led]
        return (follow | (hand & ctx.suit_mask[_NONE])) if follow else hand

    def moves(self, seat: int) -> list[int]:
        """One card per run of equivalent legal cards, in search order."""
        ctx = self.ctx
        legal = self.legal(seat)
        alive = self.hands[0] | self.hands[1] | self.hands[2] | self.hands[3]
        for c in self.trick:
            alive |= 1 << c
        reps: list[int] = []
        for s in range(5):
            if not legal & ctx.suit_mask[s]:
                continue
            run = False
            for c in ctx.order[s]:
                bit = 1 << c
                if not alive & bit:
                    continue  # played in an earlier trick: separates nothing
                if legal & bit:
                    if not run:
                        reps.append(c)
                    run = True
                else:
                    run = False
        if not self.trick:
            reps.sort(key=lambda c: -ctx.power[c][ctx.esuit[c]])
            return reps
        led = ctx.esuit[self.trick[0]]
        winner_seat, best = self._winning()
        if team_of(winner_seat) == team_of(seat):
            reps.sort(key=lambda c: ctx.power[c][led])
        else:
            reps.sort(key=lambda c: (ctx.power[c][led] <= best, ctx.power[c][led]))
        return reps

    def _winning(self) -> tuple[int, int]:
        """The seat winning the trick on the table so far, and its card's power in the led suit."""
        ctx = self.ctx
        led = ctx.esuit[self.trick[0]]
        best_at, best = 0, -1
        for i, c in enumerate(self.trick):
            p = ctx.power[c][led]
            if p > best:
                best_at, best = i, p
        seat = self.leader
        for _ in range(best_at):
            seat = ctx.next_seat[seat]
        return seat, best

    def representative(self, seat: int, card: int) -> int:
        """The card :meth:`moves` searches for ``card``'s run of equivalent cards (its
        strongest card)."""
        ctx = self.ctx
        legal = self.legal(seat)
        alive = self.hands[0] | self.hands[1] | self.hands[2] | self.hands[3]
        for c in self.trick:
            alive |= 1 << c
        top: int | None = None
        for c in ctx.order[ctx.esuit[card]]:
            bit = 1 << c
            if not alive & bit:
                continue  # played in an earlier trick: separates nothing
            if legal & bit:
                if top is None:
                    top = c
                if c == card:
                    return top
            else:
                top = None
        return card

    def play(self, seat: int, card: int) -> tuple[int, int, list[int]] | None:
        """Play a card; a finished trick is taken, and what :meth:`unplay` needs is returned."""
        ctx = self.ctx
        self.hands[seat] &= ~(1 << card)
        self.trick.append(card)
        if len(self.trick) < ctx.trick_size:
            return None
        winner, _ = self._winning()
        undo = (self.leader, self.history, self.trick)
        if team_of(winner) == ctx.maker_team:
            self.history |= 1 << self.done
        self.done += 1
        self.leader = winner
        self.trick = []
        return undo

    def unplay(self, seat: int, card: int, undo: tuple[int, int, list[int]] | None) -> None:
        self.hands[seat] |= 1 << card
        if undo is not None:
            self.leader, self.history, self.trick = undo
            self.done -= 1
        self.trick.pop()

    def value(self, alpha: int, beta: int) -> int:
        """Alpha-beta value (team 0 maximises) of the board, exact inside (alpha, beta)."""
        ctx = self.ctx
        ctx.nodes += 1
        if self.done == TRICKS:
            return ctx.final[self.history]
        key = None
        if not self.trick:
            if self.done == TRICKS - 1:
                return self._last_trick()
            lo, hi = ctx.bounds[(self.history, self.done)]
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi
            past = bin(self.history).count("1") if ctx.count_only else self.history | 1 << 8
            key = self._key(past)
            bounds = ctx.table.get(key)
            if bounds is not None:
                lo, hi = bounds
                if lo >= beta or lo == hi:
                    return lo
                if hi <= alpha:
                    return hi
                alpha, beta = max(alpha, lo), min(beta, hi)
        a0, b0 = alpha, beta
        seat = self.to_act()
        maximise = team_of(seat) == 0
        best = -10_000 if maximise else 10_000
        for card in self.moves(seat):
            undo = self.play(seat, card)
            v = self.value(alpha, beta)
            self.unplay(seat, card, undo)
            if maximise:
                if v > best:
                    best = v
                if best > alpha:
                    alpha = best
            else:
                if v < best:
                    best = v
                if best < beta:
                    beta = best
            if alpha >= beta:
                break
        if key is not None:
            lo, hi = ctx.table.get(key, (-10_000, 10_000))
            if best <= a0:
                hi = min(hi, best)
            elif best >= b0:
                lo = max(lo, best)
            else:
                lo = hi = best
            ctx.table[key] = (lo, hi)
        return best

    def _key(self, past: int) -> tuple[int, int, int, int, int, int]:
        """The table key at a trick's start: each hand by the *relative* ranks of its cards
        among the live cards of each suit (DDS's trick: which low cards are gone does not
        matter, only the order of what is left), the leader and what the past tricks score."""
        h0, h1, h2, h3 = self.hands
        alive = h0 | h1 | h2 | h3
        rel = [0, 0, 0, 0]
        for s, order in enumerate(self.ctx.order):
            k = s * 11  # a suit holds at most 10 cards (trump: 8 ranks, left bower, joker)
            for c in order:
                bit = 1 << c
                if alive & bit:
                    r = 1 << k
                    if h0 & bit:
                        rel[0] |= r
                    elif h1 & bit:
                        rel[1] |= r
                    elif h2 & bit:
                        rel[2] |= r
                    else:
                        rel[3] |= r
                    k += 1
        return (rel[0], rel[1], rel[2], rel[3], self.leader, past)

    def _last_trick(self) -> int:
        """Each hand holds one card: the trick plays itself."""
        ctx = self.ctx
        seat = self.leader
        best, winner = -1, seat
        led = -1
        for _ in range(ctx.trick_size):
            c = (self.hands[seat] & -self.hands[seat]).bit_length() - 1
            if led < 0:
                led = ctx.esuit[c]
            p = ctx.power[c][led]
            if p > best:
                best, winner = p, seat
            seat = ctx.next_seat[seat]
        history = self.history | (1 << self.done if team_of(winner) == ctx.maker_team else 0)
        return ctx.final[history]


class Solver:
    """Solves positions, keeping per-deal transposition tables and a cache of answers.

    One solver may serve many deals; ``max_contexts`` bounds how many deals' tables it keeps.
    """

    def __init__(self, *, max_contexts: int = 8, max_results: int = 4096) -> None:
        self._contexts: OrderedDict[tuple[object, ...], _Context] = OrderedDict()
        self._results: OrderedDict[Position, PlayAnalysis] = OrderedDict()
        self._max_contexts = max_contexts
        self._max_results = max_results

    @property
    def nodes(self) -> int:
        """Nodes searched by the contexts still kept (for benchmarks)."""
        return sum(c.nodes for c in self._contexts.values())

    def _context(self, p: Position) -> _Context:
        key = (p.rules, p.trump, p.maker, p.alone, p.alone_defender, p.sit_out, p.tokens)
        ctx = self._contexts.get(key)
        if ctx is None:
            ctx = _Context(p.rules, p.trump, p.maker, p.alone, p.alone_defender, p.sit_out, p.tokens)
            self._contexts[key] = ctx
            if len(self._contexts) > self._max_contexts:
                self._contexts.popitem(last=False)
        else:
            self._contexts.move_to_end(key)
        return ctx

    def _board(self, p: Position) -> _Search:
        """The position as bit masks.

        Raises:
            ValueError: a card is unknown or not in this ruleset's deck, or the hands do not
                fit the tricks still to play.
        """
        ctx = self._context(p)

        def idx(card: Card) -> int:
            c = resolve(card, p.trump)
            i = ctx.index.get(c.identity) if c.known else None
            if i is None:
                raise ValueError(f"{card_name(card)!r} is not a known card of this deck")
            return i

        hands = [0, 0, 0, 0]
        for seat in range(4):
            if seat in p.sit_out:
                continue
            for card in p.hands[seat] if seat < len(p.hands) else ():
                hands[seat] |= 1 << idx(card)
        done = len(p.winners)
        history = 0
        for t, w in enumerate(p.winners):
            if team_of(w) == ctx.maker_team:
                history |= 1 << t
        board = _Search(ctx, hands, p.leader, [idx(c) for c in p.trick_cards], history, done)
        seat = p.leader
        for i in range(ctx.trick_size):
            need = TRICKS - done - (1 if i < len(p.trick_cards) else 0)
            if seat not in p.sit_out and bin(hands[seat]).count("1") != need:
                raise ValueError(f"seat {seat} holds {bin(hands[seat]).count('1')} cards, {need} expected")
            seat = ctx.next_seat[seat]
        return board

    def value(self, p: Position) -> int:
        """The searched value of a position (see :func:`value_of`).

        Raises:
            ValueError: as :meth:`analyse`.
        """
        board = self._board(p)
        return board.value(-10_000, 10_000)

    def analyse(self, p: Position) -> PlayAnalysis:
        """Tricks and points under best play, and the value of each legal card.

        Raises:
            ValueError: a hand holds an unknown card, or the hands do not fit the tricks left.
        """
        cached = self._results.get(p)
        if cached is not None:
            self._results.move_to_end(p)
            return cached
        board = self._board(p)
        ctx = board.ctx
        if board.done == TRICKS:
            tricks, points = value_of(ctx.final[board.history])
            result = PlayAnalysis(tricks, points, None, (), ())
        else:
            seat = board.to_act()
            team = team_of(seat)
            values: list[tuple[int, int]] = []  # (card index, value)
            legal = board.legal(seat)
            searched: dict[int, int] = {}
            for c in board.moves(seat):
                undo = board.play(seat, c)
                searched[c] = board.value(-10_000, 10_000)
                board.unplay(seat, c, undo)
            for c in range(len(ctx.cards)):
                if legal >> c & 1:
                    values.append((c, searched[board.representative(seat, c)]))
            sign = 1 if team == 0 else -1
            top = max(sign * v for _, v in values)
            cards: list[CardValue] = []
            best_tricks, best_points = value_of(sign * top)
            for c, v in values:
                tricks, points = value_of(v)
                cards.append(CardValue(ctx.cards[c], tricks, points, best_tricks[team] - tricks[team], (best_points[team] - best_points[1 - team]) - (points[team] - points[1 - team])))
            original = {resolve(c, p.trump).identity: c for c in p.hands[seat]}
            cards = [CardValue(original.get(cv.card.identity, cv.card), cv.tricks, cv.points, cv.trick_loss, cv.point_loss) for cv in cards]
            best = tuple(cv.card for c, cv in zip(values, cards) if sign * c[1] == top)
            result = PlayAnalysis(best_tricks, best_points, seat, best, tuple(cards))
        self._results[p] = result
        if len(self._results) > self._max_results:
            self._results.popitem(last=False)
        return result


def position_of(state: GameState, rules: Ruleset, *, hands: Sequence[Sequence[Card]] | None = None) -> Position | None:
    """The solver's position at a step of the trick play (the last trick taken included: its
    value is the deal's result), or ``None`` when there is none: trump not made (or unknown),
    a thrown-in or scored deal, a table other than four, or an active hand holding a card
    not known.  The hands may be recorded or rebuilt from a play that shows every card
    (:mod:`engine.hindsight` says which, and why not).  ``hands`` replaces the state's hands
    (for sampled deals).
    """
    if state.num_players != 4 or state.maker is None or state.thrown_in:
        return None
    if state.trump is None and not state.no_trump:
        return None
    if state.kind not in (StepKind.DISCARD, StepKind.CARD, StepKind.TRICK_TAKEN, StepKind.CALL):
        return None
    if state.kind is StepKind.CALL and state.up_card_state is UpCardState.TAKEN:
        return None  # the dealer still has to pick up and discard: see engine.bidtable
    trump = None if state.no_trump else state.trump
    use = hands if hands is not None else state.hands
    if len(use) < 4:
        return None
    cards = tuple(tuple(resolve(c, trump) for c in use[seat]) if seat not in state.sit_out else () for seat in range(4))
    if any(not c.known for h in cards for c in h):
        return None
    trick = state.trick
    if trick is None or trick.complete:
        leader = trick.winner if trick is not None and trick.winner is not None else state.to_act
        trick_cards: tuple[Card, ...] = ()
    else:
        leader = trick.leader
        trick_cards = tuple(resolve(c, trump) for c in trick.cards)
    if leader is None:
        return None
    winners = tuple(t.winner for t in state.tricks if t.winner is not None)
    if trick_cards and len(trick_cards) == 4 - len(state.sit_out):
        # the trick's last card is on the table: it is as good as taken
        won = trick_winner(trick_cards, trump)
        assert trick is not None
        leader = trick.seats[won if won is not None else 0]
        winners, trick_cards = winners + (leader,), ()
    return Position(rules, trump, state.maker, state.alone, state.alone_defender, state.sit_out, cards, leader, trick_cards, winners, state.tokens)

