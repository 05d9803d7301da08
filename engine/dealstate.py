"""What one deal holds while it is replayed, and the steps it records.

:class:`DealState` is the mutable record the deal's rules (:mod:`engine.deal`) walk: the
seats' hands (as dealt, back-calculated from the play where ``playerCards`` leaves them
out, and as cards leave them), the calls, trump and maker, the tricks, the score, and the
problems found on the way; it numbers the steps and keeps one record per step for the
states (:mod:`engine.steps`), and it makes the deal's summary.  The rules themselves
(bidding, the pick-up, the play and its checks, scoring) are :class:`engine.deal`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Final

from .cards import Card, Suit, card_name, parse_card
from .errors import Place, Problem
from .layout import HAND_SIZE, Layout, card_of, lay_out, memo_for, resolved
from .model import Deal, TrickPlayPhase
from .rules import Table
from .ruleset import Ruleset
from .state import Action, Call, DealSummary, StepKind, TrickState, UpCardState, build
from .steps import Record

__all__ = ["DealContext", "DealState", "UNKNOWN", "team_values", "state_pair"]

#: The card a hand holds where the file never shows which one.
UNKNOWN: Final = parse_card("Xx")
_KNOWN: Final = attrgetter("known")  # ``all(map(_KNOWN, cards))``: the check without a Python generator
_FACE_UP: Final = UpCardState.FACE_UP  # bound once: an enum member read through its class costs about 0.3 us


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


class DealState:
    """One deal being replayed: its mutable record, its problems and its steps (see the module docstring)."""

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
        self.up_state = _FACE_UP
        self.calls: list[Call] = []  # for the states (``build`` only)
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
        self._recorded_t = tuple(self.known)  # before any hand is back-calculated: the file's own
        self.ready = False  # hands back-calculated (see engine.deal's docstring)
        self.ids: list[list[tuple[object, ...]]] = []  # per seat: identity of each card held (set with the hands)
        self.suits: list[list[Suit | None]] = []  # per seat: effective suit of each card held
        # tuples for the states, rebuilt only when their source changes; the summary-only
        # pass never reads them, so it leaves them empty
        self._hand_rows: list[tuple[Card, ...]] = [tuple(h) for h in self.hands] if build else []
        self._hands_t: tuple[tuple[Card, ...], ...] | None = None
        self._calls_t: tuple[Call, ...] = ()
        self._tricks_t: tuple[TrickState, ...] = ()
        self._per_seat_t: tuple[int, ...] = tuple(self.per_seat) if build else ()
        self._per_team_t: tuple[int, int] = (0, 0)
        self._fixed: dict[str, Any] | None = None  # see _fields
        # what states show; updated with ``score`` and ``tokens`` when the deal is scored
        self._score_t = state_pair(score) if build else (0, 0)
        self._tokens_t = state_pair(tokens) if build else (0, 0)

    # -- problems and steps ----------------------------------------------------

    def problem(self, message: str, *, kind: str = "rule", severity: str = "error", **where: Any) -> None:
        p = Problem(Place(source=self.ctx.source, deal=self.index, line=self.line, **where), message, kind, severity)
        self.pending.append(p)
        self.found.append(p)
        self.shown_at.append(-1)
        self.ctx.problems.append(p)

    def tricks_per_team(self) -> tuple[int, ...]:
        return team_values(self.per_team)

    def emit(self, kind: StepKind, action: Action | None, *, annotations: Sequence[str] = (), to_act: int | None = None) -> None:
        """One step that is not a card's (a card step is :meth:`emit_card`)."""
        if not self.build:  # the summary-only pass: number the step, show its problems
            if self.pending:
                self._count_step()
            else:
                self.count += 1
            return
        at = self._count_step()
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
        """A card step, kept as a :data:`~engine.steps.CardRecord`: its state is built when read (``build`` only)."""
        at = self.count  # :meth:`_count_step` inline: a card step is most steps
        self.count = at + 1
        shown = self._show_pending(at) if self.pending else ()
        fixed = self._fixed
        if fixed is None:
            fixed = self._fixed = self._fields()
        hands = self._hands_t
        if hands is None:
            hands = self._hands_t = tuple(self._hand_rows)
        self.rows.append(
            (fixed, hands, self.first_step + at, seat, card, flat, t, lead, seats, cards, c, led, tuple(annotations) if annotations else (), to_act, shown)
        )

    def _count_step(self) -> int:
        """Number the next step and show on it the problems found since the last (in ``_shown``)."""
        at = self.count
        self.count = at + 1
        self._shown = self._show_pending(at) if self.pending else ()
        return at

    def _show_pending(self, at: int) -> tuple[Problem, ...]:
        """The problems found since the last step, now shown on step ``at``."""
        pending = self.pending
        first = len(self.found) - len(pending)
        for i in range(first, len(self.found)):
            self.shown_at[i] = at
        self.pending = []
        return tuple(pending)

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
            "hands_recorded": self._recorded_t,
            "tricks": self._tricks_t,
            "tricks_per_seat": self._per_seat_t,
            "tricks_per_team": self._per_team_t,
            "score": self._score_t,
            "deal_points": state_pair(self.points) if self.points is not None else None,
            "tokens": self._tokens_t,
            "thrown_in": self.thrown_in,
            "game_over": False,
            "winner": None,
            "branch": self.branch,
            "lowest_rank": self.rules.lowest_rank,
            "joker": self.rules.joker,
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
                up_key = self.up.identity
                cards = [c for c in cards if c.identity != up_key]  # not ``c.same(self.up)``, without the call
                if first_discard is not None and not first_discard.same(self.up):
                    cards.append(first_discard)
            cards = cards[:HAND_SIZE] + [UNKNOWN] * max(0, HAND_SIZE - len(cards))
            self.hands[seat] = cards
            self.known[seat] = complete and all(map(_KNOWN, cards))
        # identities with trump-relative notation resolved, and effective suits, from the
        # layout's memo (every card here has its text: parsed, or resolved from parsed text)
        trump = self.trump
        memo: dict[str, Any] = memo_for(trump)  # Any: compiled, the rows stay Python tuples (no unboxing)
        rows = [[memo.get(c.text) or resolved(c.text, trump) for c in hand] for hand in self.hands]
        self.ids = [[r[0].identity for r in hand] for hand in rows]
        self.suits = [[r[1] for r in hand] for hand in rows]
        if not self.build:
            return
        self._hand_rows = [tuple(h) for h in self.hands]
        self._hands_t = hands = tuple(self._hand_rows)
        known = self._known_t = tuple(self.known)
        for row in self.rows:  # field rows only: no card has been played yet
            assert isinstance(row, dict)
            row["hands"] = hands
            row["hands_known"] = known
        self._fixed = None

    def _first_leader(self) -> int:
        """Who leads the first trick (the dealer's left, or the loner's under ``LEFT_OF_LONER``)."""
        return self.table.first_leader(self.rules, self.dealer, self.maker, self.alone, self.sit_out)

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

    def summary(self) -> DealSummary:
        """The deal's outcome in the ``inspect --json`` contract's shape."""
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
                "points": team_values(self.points) if self.points is not None else None,
                "score_after": team_values(self.score),
                "complete": self.points is not None,
                "first_step": self.first_step,
                "last_step": self.first_step + self.count - 1,
            },
        )



def team_values(values: Sequence[int]) -> tuple[int, ...]:
    """Per-team values for the contract: at least two entries (one per team at four players)."""
    v = tuple(values)
    return v if len(v) >= 2 else v + (0,) * (2 - len(v))


def state_pair(values: Sequence[int]) -> tuple[int, int]:
    """The first two teams' values (what a state shows)."""
    n = len(values)
    return (values[0] if n > 0 else 0, values[1] if n > 1 else 0)
