"""Win probability: the chance that each team wins the game from a step.

The method, in four facts (docs/analysis.md, "Win probability", says the same):

1. **This deal** is a distribution over its points.  Once trump is made and the hands are known,
   it is the double-dummy points of the deal (:mod:`engine.solve`) with weight
   ``w = 0.6 + 0.4 * cards played / cards in the deal``, and the *prior* of deals with the same
   contract (makers' side, alone or not) with weight ``1 - w``: real players are not
   double-dummy, the more so early in the deal.  Before trump is made the policy is: the player
   to act takes the best call of the bidding table when it scores for its team (weight 1/2,
   the prior of the deal the other 1/2); otherwise the prior.  Without hands (a clean output),
   the prior alone.
2. **The prior** is the distribution of one deal's points, seen from the dealer's side and from
   the makers' side, counted on games the project's generator (:mod:`engine.generate`) plays under
   the same ruleset (seeds from one million up, apart from the seeds the calibration uses; a
   36-card deck, which EGN cannot write, is counted as 24 cards).
3. **The deals to come** are independent draws from that prior, the deal rotating clockwise:
   an exact recursion over (score, dealer's team) to the target (or over the deals left for a
   fixed number of deals); deals that score nothing (throw-ins, fast breaks) are solved as a
   2x2 linear system instead of looping.
4. Four-trick tokens are not modelled (they move a point in many deals).

Pure: the prior is counted on seeded games, never read from a file; the counts of the rulesets
most games use are kept in :mod:`engine.priors` (Python constants written by
``scripts/gen_priors``, counted again and compared by tests/analysis/test_priors.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .priors import COUNTS, GAMES, SEED, Counts, PriorCounts
from .ruleset import Ruleset
from .state import team_of

__all__ = ["Outcomes", "Counts", "PriorCounts", "Prior", "ruleset_key", "count_prior", "fit_prior", "ScoreModel", "deal_weight", "mix"]

#: a distribution of one deal's points: ((points of side A, points of side B), probability)
Outcomes = tuple[tuple[tuple[int, int], float], ...]

#: seeds of the games the prior is counted on (the calibration uses seeds below this)
PRIOR_SEED = 1_000_000
#: how many games the prior is counted on
PRIOR_GAMES = 150


@dataclass(frozen=True)
class Prior:
    """One deal's points, from the dealer's side (``dealer``: (dealer's team, the other)) and
    given the contract (``contract[alone]``: (makers, defenders))."""

    dealer: Outcomes
    contract: tuple[Outcomes, Outcomes]
    deals: int


def ruleset_key(rules: Ruleset) -> str:
    """The ruleset as :mod:`engine.priors` names it: its JSON without defaults, keys sorted
    (``"{}"``: the default rules)."""
    return json.dumps(rules.model_dump(mode="json", exclude_defaults=True), sort_keys=True)


def count_prior(rules: Ruleset, games: int = PRIOR_GAMES) -> PriorCounts:
    """Count deal outcomes on ``games`` generated games under ``rules`` (0.26 s for 150 on the
    test machine, with the compiled engine)."""
    from .generate import generate_game
    from .load import game_from_json

    by_dealer: dict[tuple[int, int], int] = {}
    by_contract: tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]] = ({}, {})
    ruleset = rules.model_dump(mode="json", exclude_defaults=True)
    if rules.min_rank not in (7, 8, 9):
        ruleset.pop("min_rank", None)  # EGN notation has no 6: such decks are counted as 24 cards
    deals = 0
    for seed in range(PRIOR_SEED, PRIOR_SEED + games):
        try:
            # the generated document read by the engine and replayed for its deals' results
            # alone (summary_only: the full replay's counts, for a quarter less CPU)
            tl = game_from_json(generate_game(seed, ruleset=ruleset or None), source="prior", summary_only=True).timeline
        except ValueError:
            continue  # a ruleset the generator cannot deal for: the game adds nothing
        for d in tl.deals:
            if d.points is None:
                continue
            deals += 1
            team = team_of(d.dealer)
            key = (d.points[team], d.points[1 - team])
            by_dealer[key] = by_dealer.get(key, 0) + 1
            if d.maker is not None:
                m = team_of(d.maker)
                ck = (d.points[m], d.points[1 - m])
                by_contract[1 if d.alone else 0][ck] = by_contract[1 if d.alone else 0].get(ck, 0) + 1
    return deals, tuple(sorted(by_dealer.items())), (tuple(sorted(by_contract[0].items())), tuple(sorted(by_contract[1].items())))


def _normalise(counts: Counts) -> Outcomes:
    total = sum(n for _, n in counts)
    if total == 0:
        return (((0, 0), 1.0),)
    return tuple((k, n / total) for k, n in counts)


@lru_cache(maxsize=16)
def fit_prior(rules: Ruleset, *, games: int = PRIOR_GAMES) -> Prior:
    """The prior of ``rules``, counted on ``games`` generated games; for the rulesets
    :mod:`engine.priors` holds (the default rules: most games), those counts, written ahead
    (the same numbers: counting took 0.26-0.64 s of CPU in every process that analyses)."""
    counted = COUNTS.get(ruleset_key(rules)) if (games, PRIOR_SEED) == (GAMES, SEED) else None
    deals, by_dealer, (made, alone) = counted if counted is not None else count_prior(rules, games)
    return Prior(_normalise(by_dealer), (_normalise(made), _normalise(alone)), deals)


def deal_weight(cards_played: int, cards_in_deal: int) -> float:
    """Weight of the double-dummy value against the prior (fact 1 above)."""
    return 0.6 + 0.4 * (cards_played / cards_in_deal if cards_in_deal else 0.0)


def mix(certain: tuple[int, int], weight: float, rest: Outcomes) -> Outcomes:
    """``certain`` with probability ``weight``, ``rest`` with ``1 - weight``."""
    out: dict[tuple[int, int], float] = {certain: weight}
    for k, p in rest:
        out[k] = out.get(k, 0.0) + (1 - weight) * p
    return tuple(sorted(out.items()))


class ScoreModel:
    """P(team 0 wins) from a score, the next dealer's team and the deals played (fact 3)."""

    def __init__(self, rules: Ruleset, prior: Prior) -> None:
        self.rules = rules
        self.prior = prior
        self._memo: dict[tuple[int, int, int, int], float] = {}

    def _over(self, a: int, b: int, left: int) -> float | None:
        target = self.rules.target
        if target is not None:
            if a >= target and a > b:
                return 1.0
            if b >= target and b > a:
                return 0.0
            if a >= target and a == b:
                return 0.5
            return None
        if left <= 0:
            return 1.0 if a > b else 0.0 if b > a else 0.5
        return None

    def future(self, score: Sequence[int], dealer_team: int, deals_played: int = 0) -> float:
        """P(team 0 wins) when the next deal is dealt by ``dealer_team``'s side."""
        left = self.rules.num_deals - deals_played if self.rules.target is None else 0
        return self._w(int(score[0]), int(score[1]), dealer_team, left)

    def _w(self, a: int, b: int, d: int, left: int) -> float:
        over = self._over(a, b, left)
        if over is not None:
            return over
        key = (a, b, d, left)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        fixed = self.rules.target is None
        if fixed:
            value = 0.0
            for (mine, theirs), p in self.prior.dealer:
                x, y = (a + mine, b + theirs) if d == 0 else (a + theirs, b + mine)
                value += p * self._w(x, y, 1 - d, left - 1)
            self._memo[key] = value
            return value
        # a scoreless deal passes the deal on at the same score: solve the pair (d, 1-d) at once
        rest = [0.0, 0.0]
        stay = [0.0, 0.0]
        for side in (0, 1):
            for (mine, theirs), p in self.prior.dealer:
                if mine == 0 and theirs == 0:
                    stay[side] += p
                    continue
                x, y = (a + mine, b + theirs) if side == 0 else (a + theirs, b + mine)
                rest[side] += p * self._w(x, y, 1 - side, 0)
        # W0 = rest0 + stay0 * W1 ; W1 = rest1 + stay1 * W0
        det = 1 - stay[0] * stay[1]
        w0 = (rest[0] + stay[0] * rest[1]) / det if det > 1e-12 else 0.5
        w1 = rest[1] + stay[1] * w0
        self._memo[(a, b, 0, left)] = w0
        self._memo[(a, b, 1, left)] = w1
        return w0 if d == 0 else w1

    def with_deal(self, score: Sequence[int], dealer: int, outcomes: Outcomes, *, side: int, deals_played: int) -> float:
        """P(team 0 wins) when this deal's points follow ``outcomes`` seen from team ``side``
        (first entry: that team's points), then the deals to come."""
        a, b = int(score[0]), int(score[1])
        total = 0.0
        for (mine, theirs), p in outcomes:
            x, y = (a + mine, b + theirs) if side == 0 else (a + theirs, b + mine)
            total += p * self.after(x, y, dealer, deals_played + 1)
        return total

    def after(self, a: int, b: int, dealer: int, deals_played: int) -> float:
        """P(team 0 wins) at score (a, b) once the deal dealt by ``dealer`` is over."""
        left = self.rules.num_deals - deals_played if self.rules.target is None else 0
        over = self._over(a, b, left)
        if over is not None:
            return over
        return self._w(a, b, team_of(dealer + 1), left)
