"""``render --ray [ADDRESS]``: a batch of games rendered as Ray tasks, one per game or per
piece of a long game, joined on the driver into the files a single-process ``render`` writes.

The driver loads every game (a refused one is reported under its name and the rest go on),
cuts each into :class:`overlay.video.batch.Segment` s and submits one task per segment with Ray's
``max_retries`` (worker deaths and exceptions alike are retried).  A small actor,
:class:`Tally`, counts each task's attempts, the frames encoded by its current attempt (the
progress bar) and the error of each failed attempt (the report).  A game is written once all
its segments are in; a game with a segment that failed every attempt is reported and not
written.  Encoded segments come back through Ray's object store, so the workers need no shared
disk with the driver.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .batch import GameSpec, Segment, SegmentOutput, join, plan_segments, render_segment, steps_of

__all__ = ["Attempt", "TaskReport", "BatchReport", "Work", "start_ray", "render_batch", "print_report"]

#: the function a task runs: (spec, segment, on_progress) -> encoded segment
Work = Callable[..., SegmentOutput]


@dataclass(frozen=True)
class Attempt:
    """One failed attempt of a task: its number (from 1) and what went wrong."""

    number: int
    error: str


@dataclass(frozen=True)
class TaskReport:
    """A task that needed more than one attempt, or never succeeded."""

    game: str
    segment: str  # "deals 1-3"
    attempts: int
    failures: tuple[Attempt, ...]
    ok: bool


@dataclass
class BatchReport:
    """What a batch wrote, what was retried and what failed (by game name)."""

    written: list[Path] = field(default_factory=list)
    retried: list[TaskReport] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    frames: int = 0
    seconds: float = 0.0


def start_ray(address: str | None, *, num_cpus: int | None = None, temp_dir: str | None = None) -> bool:
    """Connect to the cluster at ``address``, or start a local one; False if already connected.

    Usage statistics are off (no network here, and nothing to report), the dashboard is not
    started, and workers' output is not echoed over the progress bar.
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"log_to_driver": False, "logging_level": "warning"}
    if address:
        ray.init(address=address, **options)
    else:
        ray.init(num_cpus=num_cpus, _temp_dir=temp_dir, include_dashboard=False, **options)
    return True


class Tally:
    """Per task: attempts begun, frames encoded by the current attempt, errors of failed ones.

    Runs as a Ray actor (``num_cpus=0``); tasks call it, the driver reads :meth:`snapshot`.
    """

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.errors: dict[str, list[tuple[int, str]]] = {}

    def begin(self, key: str) -> int:
        n = self.attempts.get(key, 0) + 1
        self.attempts[key] = n
        self.done[key] = 0
        return n

    def add(self, key: str, frames: int) -> None:
        self.done[key] = self.done.get(key, 0) + frames

    def fail(self, key: str, attempt: int, error: str) -> None:
        self.errors.setdefault(key, []).append((attempt, error))

    def snapshot(self) -> tuple[int, dict[str, int], dict[str, list[tuple[int, str]]]]:
        return sum(self.done.values()), dict(self.attempts), {k: list(v) for k, v in self.errors.items()}


def _task(work: Work, spec: GameSpec, segment: Segment, key: str, tally: Any) -> SegmentOutput:
    """The body of one Ray task: count the attempt, render, report a failure and re-raise
    (so Ray retries it)."""
    import ray

    attempt = ray.get(tally.begin.remote(key))
    try:
        return work(spec, segment, on_progress=lambda n: tally.add.remote(key, n))
    except BaseException as exc:
        ray.get(tally.fail.remote(key, attempt, f"{type(exc).__name__}: {exc}"))
        raise


def render_batch(
    specs: Sequence[GameSpec],
    outputs: Sequence[Path],
    *,
    split_frames: int,
    retries: int = 2,
    work: Work = render_segment,
    bar: Any = None,
) -> BatchReport:
    """Render ``specs[i]`` into ``outputs[i]`` on the connected Ray cluster.

    ``split_frames``: cut a game longer than this at deal starts (0: never).  ``retries``:
    Ray's ``max_retries`` for each task.  ``bar``: a tqdm-like bar updated with frames
    encoded.  ``work`` is the task body (tests pass one that fails on purpose).

    Returns the report; a game whose task failed every attempt is in ``report.failed`` and its
    output is not written, every other game is.
    """
    import ray

    t0 = time.perf_counter()
    report = BatchReport()
    tally: Any = ray.remote(num_cpus=0)(Tally).remote()
    remote = ray.remote(_task).options(num_cpus=1, max_retries=retries, retry_exceptions=True)
    pending: dict[Any, tuple[int, Segment, str]] = {}
    parts: dict[int, list[SegmentOutput]] = {}
    waiting: dict[int, int] = {}
    labels: dict[str, tuple[str, str]] = {}
    succeeded: set[str] = set()
    for i, spec in enumerate(specs):
        try:
            segments = plan_segments(spec, steps_of(spec), split_frames=split_frames)
        except Exception as exc:  # noqa: BLE001 - reported under the game's name
            report.failed[spec.name] = f"{type(exc).__name__}: {exc}"
            continue
        ref = ray.put(spec)
        waiting[i] = len(segments)
        parts[i] = []
        for seg in segments:
            key = f"{i}:{seg.first}"
            labels[key] = (spec.name, seg.label)
            pending[remote.remote(work, ref, seg, key, tally)] = (i, seg, key)
    shown = 0
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.25)
            if bar is not None:
                done = ray.get(tally.snapshot.remote())[0]
                if done > shown:
                    bar.update(done - shown)
                    shown = done
            for ref in ready:
                i, seg, key = pending.pop(ref)
                spec = specs[i]
                try:
                    out = cast(SegmentOutput, ray.get(ref))
                except ray.exceptions.RayError as exc:
                    if spec.name not in report.failed:
                        report.failed[spec.name] = f"{seg.label}: {_reason(exc)}"
                    parts.pop(i, None)
                    continue
                succeeded.add(key)
                if i not in parts:
                    continue  # another segment of the game failed
                parts[i].append(out)
                report.frames += seg.end - seg.first
                if len(parts[i]) == waiting[i]:
                    try:
                        join(spec, parts.pop(i), outputs[i])
                    except Exception as exc:  # noqa: BLE001 - reported under the game's name
                        report.failed[spec.name] = f"writing {outputs[i]}: {exc}"
                    else:
                        report.written.append(outputs[i])
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        ray.kill(tally)
        raise
    if bar is not None and report.frames > shown:
        bar.update(report.frames - shown)  # progress messages still on their way
    _, attempts, errors = ray.get(tally.snapshot.remote())
    for key, n in sorted(attempts.items()):
        failures = tuple(Attempt(a, e) for a, e in errors.get(key, []))
        if n > 1 or failures:
            game, label = labels[key]
            report.retried.append(TaskReport(game, label, n, failures, key in succeeded))
    ray.kill(tally)
    report.seconds = time.perf_counter() - t0
    return report


def _reason(exc: BaseException) -> str:
    """One line for a Ray error: the task's own exception, or how the worker was lost."""
    import ray

    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = exc.cause
        if cause is not None:
            return f"{type(cause).__name__}: {cause}"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def print_report(report: BatchReport, *, file: Any = None) -> None:
    """The report on stderr: retried tasks, failed games, and what was written."""
    out = file or sys.stderr
    for t in report.retried:
        lost = t.attempts - len(t.failures) - (1 if t.ok else 0)
        how = "; ".join(f"attempt {a.number}: {a.error}" for a in t.failures)
        if lost > 0:
            how = (how + "; " if how else "") + f"{lost} attempt{'' if lost == 1 else 's'} lost with {'its' if lost == 1 else 'their'} worker"
        state = "succeeded" if t.ok else "FAILED"
        print(f"euchre-overlay: render --ray: {t.game} {t.segment}: {state} after {t.attempts} attempts ({how})", file=out)
    for game, reason in report.failed.items():
        print(f"euchre-overlay: render --ray: {game}: not written: {reason}", file=out)
    print(f"euchre-overlay: render --ray: {len(report.written)} written, {len(report.failed)} failed, {len(report.retried)} task{'' if len(report.retried) == 1 else 's'} retried", file=out)


def short_temp_dir() -> str:
    """A short folder for a local Ray session (its socket paths must fit in 107 bytes)."""
    return tempfile.mkdtemp(prefix="ray-")
