"""Immutable values produced by the replay: steps, game states, the timeline.

A **step** is one visible event (deal start, each call, the discard, each card, trick
taken, deal scored, game over).  Each step carries a complete :class:`GameState`; states
are frozen and share nothing mutable, so any consumer (renderer, overlay, tests) may keep
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .cards import Card, Suit, card_name
from .errors import Problem
from .frozen import build

__all__ = [
    "StepKind",
    "UpCardState",
    "Call",
    "Action",
    "TrickState",
    "GameState",
    "DealSummary",
    "Branch",
    "Timeline",
    "team_of",
    "make_state",
    "build",
    "evolve_state",
]


class StepKind(str, Enum):
    DEAL_START = "deal_start"
    CALL = "call"
    DISCARD = "discard"
    CARD = "card"
    TRICK_TAKEN = "trick_taken"
    DEAL_SCORED = "deal_scored"
    GAME_OVER = "game_over"


class UpCardState(str, Enum):
    FACE_UP = "face_up"  # round 1
    TURNED_DOWN = "turned_down"  # round 2 / throw-in
    TAKEN = "taken"  # ordered up: the dealer picked it up


def team_of(seat: int) -> int:
    """Team 0 = seats 0 and 2, team 1 = seats 1 and 3 (for any even table: seat parity)."""
    return seat % 2


@dataclass(frozen=True)
class Call:
    seat: int
    call: str  # "Pass", "Order", "s", "h", "d", "c", "n", "x"
    index: int  # position in the bidding phase
    round: int  # 1 or 2


@dataclass(frozen=True)
class Action:
    """What happened at this step (for callouts and animation)."""

    kind: StepKind
    seat: int | None = None
    card: Card | None = None
    call: str | None = None
    index: int | None = None  # call index, or flat play index for cards


@dataclass(frozen=True)
class TrickState:
    """A trick: cards in table order with the seat of each, the led suit and the winner."""

    number: int  # 0-based within the deal
    leader: int
    seats: tuple[int, ...]
    cards: tuple[Card, ...]
    led: Suit | None = None
    winner: int | None = None  # set once the trick is complete
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "leader": self.leader,
            "seats": list(self.seats),
            "cards": [card_name(c) for c in self.cards],
            "winner": self.winner,
        }


@dataclass(frozen=True)
class GameState:
    """The whole visible state of the game at one step."""

    step: int  # index in the timeline
    kind: StepKind
    action: Action | None
    deal: int  # position of the deal in the file
    deal_number: int  # as written in the file
    num_players: int
    players: tuple[str, ...]
    dealer: int
    up_card: Card | None
    up_card_state: UpCardState
    calls: tuple[Call, ...] = ()
    trump: Suit | None = None
    no_trump: bool = False
    maker: int | None = None
    alone: bool = False
    alone_defender: int = -1
    sit_out: frozenset[int] = frozenset()
    discard: Card | None = None
    #: each seat's hand as known at this step; unknown cards are ``Xx``
    hands: tuple[tuple[Card, ...], ...] = ()
    #: per seat: True when the hand comes from ``playerCards`` or was back-calculated in full
    hands_known: tuple[bool, ...] = ()
    #: per seat: True when ``playerCards`` gives the whole hand as dealt (every card named);
    #: a known hand that is not recorded was rebuilt from the cards the seat played (empty: not said)
    hands_recorded: tuple[bool, ...] = ()
    trick: TrickState | None = None  # trick in progress (or just taken)
    tricks: tuple[TrickState, ...] = ()  # completed tricks of this deal
    tricks_per_seat: tuple[int, ...] = ()
    tricks_per_team: tuple[int, int] = (0, 0)
    score: tuple[int, int] = (0, 0)  # running game score
    deal_points: tuple[int, int] | None = None  # set once the deal is scored
    tokens: tuple[int, int] = (0, 0)  # four-trick tokens
    annotations: tuple[str, ...] = ()
    to_act: int | None = None  # whose turn (call or card)
    thrown_in: bool = False
    game_over: bool = False
    winner: int | None = None  # team, once the game is over
    problems: tuple[Problem, ...] = ()  # rule breaches detected at this step
    branch: str | None = None  # None on the main line, else "deal:line"
    #: the deck, as the rules deal it: its lowest rank (9: 24 cards) and whether it holds the
    #: joker (a tracker of the cards played shows the whole deck from the first card)
    lowest_rank: int = 9
    joker: bool = False

    @property
    def trump_code(self) -> str | None:
        """Suit letter, ``"n"`` for no-trump, ``None`` before trump is set or on a throw-in."""
        if self.no_trump:
            return "n"
        return self.trump.value if self.trump is not None else None

    @property
    def maker_team(self) -> int | None:
        return None if self.maker is None else team_of(self.maker)

    def to_json(self) -> dict[str, Any]:
        """A plain-JSON view of the state (for third-party graphics and the page)."""
        return {
            "step": self.step,
            "kind": self.kind.value,
            "action": None
            if self.action is None
            else {
                "kind": self.action.kind.value,
                "seat": self.action.seat,
                "card": card_name(self.action.card) if self.action.card else None,
                "call": self.action.call,
                "index": self.action.index,
            },
            "deal": self.deal,
            "dealNumber": self.deal_number,
            "players": list(self.players),
            "dealer": self.dealer,
            "upCard": card_name(self.up_card) if self.up_card else None,
            "upCardState": self.up_card_state.value,
            "calls": [{"seat": c.seat, "call": c.call, "round": c.round} for c in self.calls],
            "trump": self.trump_code,
            "maker": self.maker,
            "alone": self.alone,
            "aloneDefender": self.alone_defender,
            "sitOut": sorted(self.sit_out),
            "discard": card_name(self.discard) if self.discard else None,
            "hands": [[card_name(c) for c in h] for h in self.hands],
            "trick": self.trick.to_json() if self.trick else None,
            "tricks": [t.to_json() for t in self.tricks],
            "tricksPerSeat": list(self.tricks_per_seat),
            "tricksPerTeam": list(self.tricks_per_team),
            "score": list(self.score),
            "dealPoints": list(self.deal_points) if self.deal_points else None,
            "annotations": list(self.annotations),
            "toAct": self.to_act,
            "thrownIn": self.thrown_in,
            "gameOver": self.game_over,
            "winner": self.winner,
            "problems": [str(p) for p in self.problems],
        }




def make_state(fields: dict[str, Any]) -> GameState:
    """A :class:`GameState` from a mapping that holds every one of its fields (see :func:`build`)."""
    return build(GameState, fields)


def evolve_state(state: GameState, **changes: Any) -> GameState:
    """``dataclasses.replace`` for states, without re-running ``__init__`` (see :func:`make_state`).

    Raises:
        TypeError: a name that is not a field of :class:`GameState`.
    """
    unknown = changes.keys() - _STATE_FIELDS
    if unknown:
        raise TypeError(f"not GameState fields: {sorted(unknown)}")
    fields = dict(state.__dict__)
    fields.update(changes)
    return make_state(fields)


_STATE_FIELDS = frozenset(GameState.__dataclass_fields__)


@dataclass(frozen=True)
class DealSummary:
    """One deal's outcome, in the shape of the ``inspect --json`` contract."""

    deal: int
    deal_number: int
    dealer: int
    up_card: str | None
    trump: str | None
    maker: int | None
    alone: bool
    alone_defender: int
    sit_out: tuple[int, ...]
    tricks: tuple[TrickState, ...]
    tricks_per_team: tuple[int, ...]
    points: tuple[int, ...] | None  # per team (two teams at a 4-player table)
    score_after: tuple[int, ...]
    complete: bool
    first_step: int
    last_step: int

    def to_json(self) -> dict[str, Any]:
        return {
            "dealNumber": self.deal_number,
            "dealer": self.dealer,
            "upCard": self.up_card,
            "trump": self.trump,
            "maker": self.maker,
            "makerTeam": None if self.maker is None else team_of(self.maker),
            "alone": self.alone,
            "aloneDefender": self.alone_defender,
            "sitOut": list(self.sit_out),
            "tricks": [t.to_json() for t in self.tricks],
            "tricksPerTeam": list(self.tricks_per_team),
            "points": list(self.points) if self.points is not None else None,
            "scoreAfter": list(self.score_after),
        }


@dataclass(frozen=True)
class Branch:
    """An alternative line: its own steps, starting where it leaves the main line."""

    deal: int
    line: int
    branch_index: int  # actions (calls, then cards) before the deviation
    parent_step: int  # main-line step the branch starts from
    steps: tuple[GameState, ...]


@dataclass(frozen=True)
class Timeline:
    """The replay of a whole game.

    ``steps`` is a :class:`engine.steps.Steps` (built on first read) from a replay; any
    sequence of states works the same.
    """

    steps: Sequence[GameState]
    deals: tuple[DealSummary, ...]
    branches: tuple[Branch, ...] = ()
    problems: tuple[Problem, ...] = ()
    final_score: tuple[int, ...] = (0, 0)
    winner: int | None = None
    players: tuple[str, ...] = ()
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the deck the rules deal, as every state carries it (the pre-show, before any state, too)
    lowest_rank: int = 9
    joker: bool = False
    #: replay state after each deal, so a later replay of the same game with more actions
    #: (a live feed) can start at the first deal that changed; see ``engine.replay.replay``
    checkpoints: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.steps)

    def deal_start(self, deal: int) -> int:
        """Index of the first step of a deal."""
        return self.deals[deal].first_step

    def to_json(self) -> dict[str, Any]:
        """The ``inspect --json`` contract (docs/engine.md, "``inspect`` JSON")."""
        return {
            "deals": [d.to_json() for d in self.deals],
            "finalScore": list(self.final_score),
            "winner": self.winner,
            "problems": [str(p) for p in self.problems],
        }
