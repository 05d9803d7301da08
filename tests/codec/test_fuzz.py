"""Robustness: any bytes or JSON text gives a document or one typed error, never a crash.

Hypothesis mutates the shared fixture files (bit flips, splices, truncation, inflated
lengths, JSON node replacement); a short sample runs in CI, ``euchre-overlay bench fuzz N``
runs as many as wanted.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import codec
from engine.errors import CodecError
from overlay.bench.fuzz import fuzz_one, fuzz_seeds, mutate, mutate_json
from tests.support import SHARED_EGN as SHARED, shared_egn as shared

SEEDS = fuzz_seeds(SHARED) if SHARED.is_dir() else []


def _run(data: bytes) -> None:
    start = time.perf_counter()
    assert fuzz_one(data) in ("accepted", "refused")
    assert time.perf_counter() - start < 2.0, "a single input must never take seconds"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(min_value=0), seed=st.integers(min_value=0, max_value=2**32), rounds=st.integers(1, 4))
def test_mutated_fixture_files(index: int, seed: int, rounds: int) -> None:
    shared()
    data = SEEDS[index % len(SEEDS)]
    rng = random.Random(seed)
    for _ in range(rounds):
        data = mutate(data, rng, SEEDS) if codec.is_binary(data) or rng.random() < 0.3 else mutate_json(data, rng)
    _run(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes(data: bytes) -> None:
    _run(data)
    _run(b"\x01" + data)
    _run(b"\x00" + data)
    _run(b"\x02" + data)


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20))
def test_arbitrary_json(value: object) -> None:
    import json

    _run(json.dumps(value).encode("utf-8", "surrogatepass"))


def test_bench_fuzz_sample_has_no_crash() -> None:
    """The same loop as ``bench fuzz`` over a fixed seed."""
    import argparse

    from overlay.bench.fuzz import run as bench_fuzz

    shared()
    figures = bench_fuzz(argparse.Namespace(n=300, seed=7, corpus=None))
    assert figures["crashed"] == 0, figures["crashes"]
    assert figures["accepted"] + figures["refused"] == 300
    assert figures["accepted"] > 0


@pytest.mark.parametrize("claimed", [2**28, 2**31 - 1])
def test_hostile_lengths_do_not_allocate(claimed: int) -> None:
    """A length prefix far beyond the data is refused without reading or allocating it."""
    varint = bytearray()
    n = claimed
    while n > 0x7F:
        varint.append((n & 0x7F) | 0x80)
        n >>= 7
    varint.append(n)
    with pytest.raises(CodecError, match="claims"):
        codec.decode_bytes(b"\x01\x22" + bytes(varint) + b"abc", source="hostile.egnb")
