"""``render`` on every core: worker processes draw the frames, this one encodes them in order.

A frame is a pure function of its time (:mod:`renderer.frames`: a frame's pixels never depend
on what was drawn before), so any process may draw any frame.  The frames are cut into short
runs (:data:`RUN` frames); each worker takes the next run, draws its frames with a
:class:`renderer.frames.FrameSource` of its own (made from the game's
:class:`overlay.video.batch.GameSpec`, as a Ray task makes it) and leaves the pixels, already
in the encoder's layout (:class:`overlay.video.writer.Pixels`), in a slot of shared memory;
this process takes them in frame order and hands them to the one :class:`VideoWriter`, whose
encoder thread runs beside.  So drawing runs on every core and encoding beside it, and the
file is the one a single process writes, byte for byte (one encoder, the same frames).

**Held frames are skipped.**  A frame that shows what the frame before it shows (a held step:
:meth:`renderer.frames.FrameSource.key` is equal) is neither drawn nor sent: the worker says
"held" and the writer repeats the previous picture (for qtrle and ProRes without encoding it
again, :attr:`overlay.video.writer.Codec.repeat`).

**No deadlock.**  Each worker owns :data:`SLOTS` slots and fills them in frame order; this
process frees a slot as soon as it has copied the frame.  The lowest frame not yet received
belongs to the run some worker is drawing, and that worker's slots hold none of the frames
this process already has (all later runs' frames are greater), so it can always go on.

With the analysis drawn, each worker analyses the steps its runs touch (the solver's work is
shared between them by steps, partly done twice where a step spans runs of both).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import TYPE_CHECKING, Any

import numpy as np

from .batch import GameInput, GameSpec

if TYPE_CHECKING:
    from .job import Job
    from .writer import VideoWriter

__all__ = ["RUN", "SLOTS", "HELD", "RenderWorkerError", "ParallelFrames", "auto_workers", "job_frames", "write_item"]

#: frames per run handed to a worker (short: the workers stay on neighbouring frames)
RUN = 8
#: shared-memory slots per worker
SLOTS = 3
#: the marker of a held frame (the writer repeats the previous picture)
HELD = "held"
#: a render shorter than this many frames is drawn in this process (starting workers costs more)
MIN_FRAMES = 240

_PIXELS, _EMPTY, _HELD, _ERROR = "pixels", "empty", "held", "error"


class RenderWorkerError(RuntimeError):
    """A drawing process failed: which worker, at which frame, and its error."""


def auto_workers(frames: int) -> int:
    """How many drawing processes a render of ``frames`` frames gets by default: one per
    usable core when there are at least two and the render is long enough to pay for
    starting them, else none (drawn in this process)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores if cores >= 2 and frames >= MIN_FRAMES else 0


@dataclass(frozen=True)
class _Layout:
    shm: str
    shape: tuple[int, int, int]
    slots: int


def _worker(index: int, spec: GameSpec, layout: _Layout, runs: Any, free: Any, results: Any) -> None:
    """A drawing process: runs of frames -> pixels in its slots (or held / empty)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    frame = -1
    shm = shared_memory.SharedMemory(name=layout.shm)
    try:
        from .batch import load, steps_of
        from .job import frame_source
        from .writer import CODECS, Pixels

        game = load(spec)
        images = spec.images
        src = frame_source(
            steps_of(spec, game),
            spec.schedule,
            view=spec.view,
            theme=spec.theme,
            timing=spec.timing,
            title=spec.title,
            size=spec.size,
            match=spec.match,
            images=(lambda ids: {i: images[i] for i in ids if i in images}) if images else None,
            timeline=game.timeline,
            rules=game.document.metadata.ruleset,
            analysis=spec.analysis,
        )
        pixels = Pixels(CODECS[spec.codec], spec.size, spec.background)
        per = int(np.prod(layout.shape))
        base = index * layout.slots
        views = [np.ndarray(layout.shape, np.uint8, buffer=shm.buf, offset=(base + j) * per) for j in range(layout.slots)]
        sched, fps = spec.schedule, spec.fps
        while (run := runs.get()) is not None:
            first, end = run
            # the frame before the run: held only within one step (another step's key differs
            # anyway, and working it out may cost that step's scene and analysis)
            before: Any = ()
            if first > 0 and sched.locate(sched.time_of(first - 1, fps))[0] == sched.locate(sched.time_of(first, fps))[0]:
                before = src.key(sched.time_of(first - 1, fps))
            for frame in range(first, end):
                key = src.key(sched.time_of(frame, fps))
                if key == before:
                    results.put((frame, _HELD, index, -1))
                elif key is None:
                    results.put((frame, _EMPTY, index, -1))
                else:
                    slot = free.get()
                    pixels(src.image(sched.time_of(frame, fps)), views[slot])
                    results.put((frame, _PIXELS, index, slot))
                before = key
        del views
    except BaseException:  # noqa: BLE001 - reported to the parent, which raises it
        results.put((frame, _ERROR, index, traceback.format_exc(limit=8)))
    finally:
        shm.close()


class ParallelFrames:
    """The frames of ``spec`` in order, drawn by ``workers`` processes; a context manager.

    Iterating gives, per frame, the pixels in the codec's layout (valid until the next item:
    copy them), :data:`HELD`, or ``None`` (nothing on screen).

    Raises (while iterating):
        RenderWorkerError: a worker failed or died (its frame and error named).
    """

    def __init__(self, spec: GameSpec, *, workers: int, total: int | None = None) -> None:
        self.spec = spec
        self.workers = max(1, workers)
        self.total = spec.frames if total is None else total
        self._procs: list[Any] = []
        self._shm: shared_memory.SharedMemory | None = None

    def __enter__(self) -> ParallelFrames:
        ctx = multiprocessing.get_context("spawn")  # no fork of this process's threads and sockets
        w, h = self.spec.size
        shape = (h, w, 4)
        self._shm = shared_memory.SharedMemory(create=True, size=self.workers * SLOTS * w * h * 4)
        layout = _Layout(self._shm.name, shape, SLOTS)
        self._runs: Any = ctx.Queue()
        self._results: Any = ctx.Queue()
        self._free: list[Any] = [ctx.Queue() for _ in range(self.workers)]
        for q in self._free:
            for j in range(SLOTS):
                q.put(j)
        for first in range(0, self.total, RUN):
            self._runs.put((first, min(first + RUN, self.total)))
        for _ in range(self.workers):
            self._runs.put(None)
        self._views = [np.ndarray(shape, np.uint8, buffer=self._shm.buf, offset=j * w * h * 4) for j in range(self.workers * SLOTS)]
        try:
            for i in range(self.workers):
                p = ctx.Process(target=_worker, args=(i, self.spec, layout, self._runs, self._free[i], self._results), name=f"render-draw-{i}", daemon=True)
                p.start()
                self._procs.append(p)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers and free the shared memory (safe to call twice)."""
        for p in self._procs:
            if p.is_alive():
                p.terminate()
        for p in self._procs:
            p.join(timeout=10)
        self._procs = []
        if self._shm is not None:
            self._views = []
            try:
                self._shm.close()
            except BufferError:  # a view still exported: freed with the process
                pass
            self._shm.unlink()
            self._shm = None

    def __iter__(self) -> Iterator[Any]:
        pending: dict[int, tuple[str, int, Any]] = {}
        release: tuple[int, int] | None = None
        for frame in range(self.total):
            while frame not in pending:
                try:
                    got, kind, worker, value = self._results.get(timeout=1.0)
                except queue.Empty:
                    dead = [p for p in self._procs if not p.is_alive() and p.exitcode not in (0, None)]
                    if dead:
                        raise RenderWorkerError(f"render worker {dead[0].name} died (exit code {dead[0].exitcode}) before frame {frame}") from None
                    continue
                if kind == _ERROR:
                    raise RenderWorkerError(f"render worker {worker}: frame {got}: {value.strip().splitlines()[-1]}\n{value}")
                pending[got] = (kind, worker, value)
            kind, worker, slot = pending.pop(frame)
            if release is not None:
                self._free[release[0]].put(release[1])
                release = None
            if kind == _PIXELS:
                release = (worker, slot)
                yield self._views[worker * SLOTS + slot]
            elif kind == _HELD:
                yield HELD
            else:
                yield None
        if release is not None:
            self._free[release[0]].put(release[1])


@contextlib.contextmanager
def job_frames(job: Job, game: GameInput, *, workers: int, codec: str, background: str | None) -> Iterator[Iterator[Any]]:
    """Every frame of ``job`` in order, for :func:`write_item`: drawn by ``workers`` processes
    (pixels, :data:`HELD` or ``None``), or in this process with ``workers=0`` (skia images or
    ``None``; a held frame is the same image object again)."""
    total = job.schedule.frames(job.fps)
    if workers <= 0:
        src = job.frames()
        yield (src.image(job.schedule.time_of(n, job.fps)) for n in range(total))
        return
    from .batch import game_spec

    spec = game_spec(game, job, codec=codec, background=background)
    with ParallelFrames(spec, workers=workers, total=total) as drawn:
        yield iter(drawn)


def write_item(writer: VideoWriter, item: Any) -> None:
    """Append one item of :func:`job_frames` to ``writer``."""
    if item is HELD:
        writer.repeat()
    elif isinstance(item, np.ndarray):
        import av

        # copied out of the worker's slot into the frame the encoder takes (the slot goes back)
        writer.write_frame(av.VideoFrame.from_ndarray(item, format=writer.codec.layout))
    else:
        writer.write(item)
