"""The win-probability priors counted ahead (engine/priors.py) are the counts of today's
engine: scripts/gen_priors writes them, this counts them again; ``fit_prior`` takes them
for those rulesets and counts any other."""

from __future__ import annotations

from engine.ruleset import Ruleset
from engine.winprob import Prior, count_prior, fit_prior, ruleset_key
from tests.support import script_module


def test_the_priors_counted_ahead_are_todays_counts() -> None:
    """Counted again on the generator's games, every ruleset of the file gives the file's
    numbers (a change to the generator, the replay or the scoring makes it stale: run
    ``.venv/bin/python scripts/gen_priors``)."""
    script = script_module("gen_priors")
    assert script.text() == script.TARGET.read_text(encoding="utf-8"), "engine/priors.py is stale: run .venv/bin/python scripts/gen_priors"


def test_fit_prior_takes_the_counts_ahead_and_counts_any_other_ruleset() -> None:
    from engine import priors

    assert set(priors.COUNTS) >= {"{}"}
    for key, counted in priors.COUNTS.items():
        rules = Ruleset.model_validate_json(key)
        assert ruleset_key(rules) == key
        prior = fit_prior(rules)
        deals, by_dealer, (made, alone) = counted
        assert prior.deals == deals and [k for k, _ in prior.dealer] == [k for k, _ in by_dealer]
        assert abs(sum(p for _, p in prior.dealer) - 1) < 1e-9 and abs(sum(p for _, p in prior.contract[0]) - 1) < 1e-9
    # a ruleset not counted ahead is counted here, the same way (a few games: the same code)
    other = Ruleset(joker=True)
    assert ruleset_key(other) not in priors.COUNTS
    few = fit_prior(other, games=4)
    deals, by_dealer, _ = count_prior(other, 4)
    assert isinstance(few, Prior) and few.deals == deals > 0 and [k for k, _ in few.dealer] == [k for k, _ in by_dealer]
    # fewer games than the file's: counted, not taken from the file
    assert fit_prior(Ruleset(), games=3).deals == count_prior(Ruleset(), 3)[0] < priors.COUNTS["{}"][0]
