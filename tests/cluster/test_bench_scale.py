"""``euchre-overlay bench scale`` itself: every process count does the same work.

An action costs more the further into the game it lands, so a throughput run must post the
same actions whatever the number of processes, or the faster configuration is handed the
dearer actions (a run of fixed length did that and understated the two-process gain).
Real parts: the bench's own ``redis-server`` and ``serve --redis`` subprocesses.
"""

from __future__ import annotations

import argparse

import pytest

from overlay.bench import scale
from overlay.bench.rediserver import redis_binary

pytestmark = pytest.mark.slow  # started first: see tests/conftest.py


def _args(**over: object) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    scale.add_arguments(p)
    args = p.parse_args(["--no-ray"])
    for key, value in over.items():
        setattr(args, key, value)
    return args


def test_one_and_two_processes_post_the_same_actions() -> None:
    if redis_binary() is None:
        pytest.skip("bench scale needs redis-server (Debian package redis-server; scripts/bootstrap installs it)")
    out = scale.run(_args(channels=4, actions=25, processes="1,2"))
    assert out["actions_per_channel"] == 25
    for n in (1, 2):
        assert out[f"p{n}_actions"] == 4 * 25, out
        assert out[f"p{n}_errors"] == 0 and out[f"p{n}_actions_not_seen"] == 0, out
        # the rate is the actions over the run's length (as printed: seconds to 1 ms, the rate
        # to 0.1, which a slow run on a loaded machine shows: 12.9 for 100 / 7.763)
        seconds = out[f"p{n}_seconds"]
        assert out[f"p{n}_actions_per_s"] == pytest.approx(100 / seconds, rel=0.0006 / seconds + 0.001, abs=0.05)
    assert out["speedup_1_to_2"] == round(out["p2_actions_per_s"] / out["p1_actions_per_s"], 2)
    assert 0 < out["failover_s"] < 3.0


def test_actions_beyond_the_bench_game_are_refused() -> None:
    with pytest.raises(SystemExit, match="--actions must be 1 to 242"):
        scale.run(_args(actions=243))
