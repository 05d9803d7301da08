"""What the in-process benchmarks share: the median of many short calls, after one untimed
call (which pays imports, caches and first-use allocation, and is not what a running service
pays per call), and the process held to one core while they time."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator

__all__ = ["median_ms", "one_core"]


@contextlib.contextmanager
def one_core() -> Iterator[None]:
    """This process on one core (its lowest) while the block runs, and back on the cores it
    had after: a bench run in a process that goes on (``main(["bench", ...])`` from Python, a
    test worker) must not leave it, and the processes it starts later, on one core."""
    had: set[int] | None = None
    try:
        cores = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cores)})
        had = cores
    except (AttributeError, OSError):  # no affinity here (macOS) or not allowed
        pass
    try:
        yield
    finally:
        if had is not None:
            os.sched_setaffinity(0, had)


def median_ms(fn: Callable[[], object], reps: int) -> float:
    """Milliseconds of ``fn()``: the median of ``reps`` timed calls after one warm-up call."""
    fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(samples)
