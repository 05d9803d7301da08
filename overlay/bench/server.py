"""What the service benchmarks share: a real server in a subprocess, and percentiles.

The server runs as ``euchre-overlay serve`` in its own process (so that its CPU and memory
are its own, and it can be killed), on a free port and a data folder of the caller's.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["pct", "start_server"]


def pct(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


async def start_server(
    data: str, token: str, *, extra: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = 60.0
) -> tuple[Any, str]:
    """``euchre-overlay serve`` on ``data`` with ``token``; returns the process and its base
    URL once it listens.  Its output is drained in the background (a full pipe would stall it).

    Raises:
        RuntimeError: the server exited before it listened.
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", data, "--token", token, "--no-demo", *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(os.environ, **(env or {})),
    )
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout)).decode()
        if not line:
            raise RuntimeError("the server exited before it listened")
        m = re.search(r"serving on (http://\S+)", line)
        if m:
            base = m.group(1)
            break

    async def drain() -> None:
        assert proc.stdout is not None
        while await proc.stdout.readline():
            pass

    asyncio.ensure_future(drain())
    return proc, base
