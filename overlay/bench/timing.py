"""The timer the in-process benchmarks share: the median of many short calls, after one
untimed call (which pays imports, caches and first-use allocation, and is not what a
running service pays per call)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

__all__ = ["median_ms"]


def median_ms(fn: Callable[[], object], reps: int) -> float:
    """Milliseconds of ``fn()``: the median of ``reps`` timed calls after one warm-up call."""
    fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(samples)
