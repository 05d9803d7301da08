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
again, :attr:`overlay.video.writer.Codec.repeat`).  A frame drawn with the same pixels as the
one before (an animation at rest before its step's still point) is held too, as one process
holds it (:meth:`VideoWriter.write`): the worker compares it with its frame before, and this
process compares a run's first frame with the picture on screen.  Only the changed bands of a
frame are unpremultiplied again (:meth:`overlay.video.writer.Pixels.update`).

**No deadlock.**  Each worker owns :func:`slots_for` slots (at least 3) and fills them in
frame order; this process keeps at most two (the frame it hands out and the picture on screen
before it) and frees the others as soon as it has copied them.  The lowest frame not yet
received belongs to the run some worker is drawing, and that worker's slots hold none of the
frames this process has yet to take (all later runs' frames are greater), so it has a free
slot and can always go on.

Workers are forked from a fork server that has imported what they need (the server's start
is paid once per process); until the first is ready, this process draws the next runs itself.

With the analysis drawn, each worker analyses the steps its runs touch (the solver's work is
shared between them by steps, partly done twice where a step spans runs of both).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import TYPE_CHECKING, Any

import numpy as np

from ..service.lifeline import exit_with_parent
from .batch import GameInput, GameSpec

if TYPE_CHECKING:
    from .job import Job
    from .writer import VideoWriter

__all__ = ["RUN", "SLOTS", "HELD", "RenderWorkerError", "ParallelFrames", "auto_workers", "job_frames", "slots_for", "shm_room", "WorkerPlan", "plan_workers", "write_item"]

#: frames per run handed to a worker (short: the workers stay on neighbouring frames)
RUN = 8
#: shared-memory slots per worker: a whole run, so that every worker draws its run while this
#: process takes the run before it (with fewer, the next run's worker waits after a few frames)
SLOTS = RUN
#: at least this many slots a worker, whatever the memory
MIN_SLOTS = 3
#: the most shared memory the slots take (a 4K render gets fewer slots than a 1080p one)
SLOT_MEMORY = 256 * 2**20
#: where Python's shared memory is made (Linux)
SHM_DIR = "/dev/shm"
#: the share of :data:`SHM_DIR`'s free space the slots may take (Chromium, Ray and other
#: renders make their shared memory there too)
SHM_SHARE = 0.5
#: what a drawing process imports: the fork server imports it once, and each worker forked
#: from it starts in milliseconds instead of importing for most of a second
PRELOAD = ["overlay.video.batch", "overlay.video.job", "overlay.video.writer", "overlay.video.parallel"]
#: the marker of a held frame (the writer repeats the previous picture)
HELD = "held"
#: a render shorter than this many frames is drawn in this process (starting workers costs more)
MIN_FRAMES = 240

#: pixels; pixels whose frame before this worker did not draw (this process compares them
#: with the picture before); nothing on screen; the picture before again; a failure
_PIXELS, _FIRST, _EMPTY, _HELD, _ERROR = "pixels", "first", "empty", "held", "error"
#: a worker is ready to draw; a worker's runs are done (with its CPU seconds)
_READY, _DONE = "ready", "done"


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


def slots_for(workers: int, size: tuple[int, int], room: int | None = None) -> int:
    """Shared-memory slots per worker: :data:`SLOTS`, fewer when ``workers`` times that many
    frames of ``size`` would pass :data:`SLOT_MEMORY` or :data:`SHM_SHARE` of ``room`` (the
    free bytes of :data:`SHM_DIR`; never under :data:`MIN_SLOTS`: :func:`plan_workers` makes
    sure that many fit)."""
    frame = size[0] * size[1] * 4
    budget = SLOT_MEMORY if room is None else min(SLOT_MEMORY, int(room * SHM_SHARE))
    return max(MIN_SLOTS, min(SLOTS, budget // max(1, workers * frame)))


def shm_room() -> int | None:
    """The free bytes of :data:`SHM_DIR`, where the slots are made (None: unknown)."""
    try:
        st = os.statvfs(SHM_DIR)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


@dataclass(frozen=True)
class WorkerPlan:
    """How many drawing processes a render gets, and why fewer than asked (``note``)."""

    workers: int
    note: str | None = None


def plan_workers(workers: int, size: tuple[int, int], room: int | None) -> WorkerPlan:
    """``workers`` drawing processes for frames of ``size``, or as many as :data:`SHM_SHARE`
    of ``room`` (the free bytes of :data:`SHM_DIR`) holds with :data:`MIN_SLOTS` frames each,
    or none (drawn in this process).  A container's ``/dev/shm`` is 64 MB unless it is given
    more: slots past its end are a SIGBUS in the worker that first writes them (a 1080p render
    with two workers died so)."""
    if workers <= 0 or room is None:
        return WorkerPlan(max(0, workers))
    frame = size[0] * size[1] * 4
    fit = int(room * SHM_SHARE) // (MIN_SLOTS * frame)
    if fit >= workers:
        return WorkerPlan(workers)
    why = (
        f"{SHM_DIR} has {room // 2**20} MB free and each drawing process needs {MIN_SLOTS} frames of "
        f"{size[0]}x{size[1]} there ({MIN_SLOTS * frame / 2**20:.0f} MB); a container's is 64 MB unless "
        "docker run --shm-size=1g gives it more"
    )
    if fit <= 0:
        return WorkerPlan(0, f"drawing in this process: {why}")
    return WorkerPlan(fit, f"{fit} drawing process{'es' if fit > 1 else ''} instead of {workers}: {why}")


def _context() -> Any:
    """Drawing processes are forked from a fork server (a clean process: none of this one's
    threads and sockets) that has imported :data:`PRELOAD`."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


@dataclass(frozen=True)
class _Layout:
    shm: str
    shape: tuple[int, int, int]
    slots: int


class _Drawer:
    """Draws runs of frames as a worker does (in a worker, or in the parent while the workers
    start): held frames by key and by pixels, each drawn frame converted where it changed."""

    def __init__(self, src: Any, pixels: Any, schedule: Any, fps: Any) -> None:
        self.src, self.pixels, self.sched, self.fps = src, pixels, schedule, fps
        self.converted = -2  # the frame whose pixels ``pixels`` holds (its next update compares with them)
        self.frame = -1

    def run(self, first: int, end: int, emit: Any) -> None:
        """Frames ``first`` to ``end - 1``: ``emit(frame, kind, pixels)`` each (pixels of a
        buffer the next frame overwrites, or ``None``)."""
        src, sched, fps = self.src, self.sched, self.fps
        # the frame before the run: held only within one step (another step's key differs
        # anyway, and working it out may cost that step's scene and analysis)
        before: Any = ()
        if first > 0 and sched.locate(sched.time_of(first - 1, fps))[0] == sched.locate(sched.time_of(first, fps))[0]:
            before = src.key(sched.time_of(first - 1, fps))
        for frame in range(first, end):
            self.frame = frame
            key = src.key(sched.time_of(frame, fps))
            if key == before:
                emit(frame, _HELD, None)
                if self.converted == frame - 1:
                    self.converted = frame  # the same picture
            elif key is None:
                emit(frame, _EMPTY, None)
            else:
                # converted again only where it changed; the same pixels as the frame before
                # (an animation at rest before its step's still point) are held
                drawn = self.pixels.update(src.image(sched.time_of(frame, fps)))
                if self.pixels.same and self.converted == frame - 1:
                    emit(frame, _HELD, None)
                else:
                    emit(frame, _PIXELS if self.converted == frame - 1 else _FIRST, drawn)
                self.converted = frame
            before = key


def _drawer(spec: GameSpec) -> _Drawer:
    """A :class:`_Drawer` of ``spec``'s frames (the game loaded from its bytes)."""
    from .batch import spec_frames
    from .writer import CODECS, Pixels

    return _Drawer(spec_frames(spec), Pixels(CODECS[spec.codec], spec.size, spec.background), spec.schedule, spec.fps)


def _worker(index: int, spec: GameSpec, layout: _Layout, runs: Any, free: Any, results: Any) -> None:
    """A drawing process: runs of frames -> pixels in its slots (or held / empty); says when
    it is ready to draw, and its CPU seconds when the runs are done."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    exit_with_parent()  # a render killed with SIGKILL takes its drawing processes with it
    drawer: _Drawer | None = None
    shm = shared_memory.SharedMemory(name=layout.shm)
    try:
        drawer = _drawer(spec)
        per = int(np.prod(layout.shape))
        base = index * layout.slots
        views = [np.ndarray(layout.shape, np.uint8, buffer=shm.buf, offset=(base + j) * per) for j in range(layout.slots)]

        def emit(frame: int, kind: str, drawn: Any) -> None:
            if drawn is None:
                results.put((frame, kind, index, -1))
                return
            slot = free.get()
            np.copyto(views[slot], drawn)
            results.put((frame, kind, index, slot))

        results.put((-1, _READY, index, -1))
        while (run := runs.get()) is not None:
            drawer.run(run[0], run[1], emit)
        del views
        use = resource.getrusage(resource.RUSAGE_SELF)
        results.put((-1, _DONE, index, use.ru_utime + use.ru_stime))
    except BaseException:  # noqa: BLE001 - reported to the parent, which raises it
        results.put((drawer.frame if drawer else -1, _ERROR, index, traceback.format_exc(limit=8)))
    finally:
        shm.close()


def _death(code: int) -> str:
    """How a worker process ended, for the error: its exit code, or the signal that killed it
    (SIGBUS: its shared memory could not be backed, :data:`SHM_DIR` full)."""
    if code >= 0:
        return f"died (exit code {code})"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    if -code == signal.SIGBUS:
        room = shm_room()
        free = "" if room is None else f", {room // 2**20} MB free now"
        return f"died of {name}: the shared memory in {SHM_DIR} ran out{free} (docker run --shm-size=1g, or --workers 0)"
    return f"died of {name}"


class ParallelFrames:
    """The frames of ``spec`` in order, drawn by ``workers`` processes; a context manager.

    Iterating gives, per frame, the pixels in the codec's layout (valid until the next item:
    copy them), :data:`HELD`, or ``None`` (nothing on screen).  Until the first worker is
    ready, this process draws the next runs itself (starting workers takes about half a
    second); :attr:`worker_cpu` is the CPU seconds the workers spent, once iterated through.

    Raises (while iterating):
        RenderWorkerError: a worker failed or died (its frame and error named).
    """

    def __init__(self, spec: GameSpec, *, workers: int, total: int | None = None, here: bool = True) -> None:
        self.spec = spec
        self.workers = max(1, workers)
        self.total = spec.frames if total is None else total
        self.worker_cpu = 0.0
        self._local: _Drawer | None = None  # this process's drawer, made when it draws a run
        self._done = 0  # workers whose runs are done
        self._runs_here = here  # this process may draw runs while no worker is ready
        self._procs: list[Any] = []
        self._queues: list[Any] = []  # every queue made, for close()
        self._shm: shared_memory.SharedMemory | None = None

    def __enter__(self) -> ParallelFrames:
        ctx = _context()
        w, h = self.spec.size
        shape = (h, w, 4)
        self._slots = slots = slots_for(self.workers, self.spec.size, shm_room())
        self._shm = shared_memory.SharedMemory(create=True, size=self.workers * slots * w * h * 4)
        layout = _Layout(self._shm.name, shape, slots)
        self._runs: Any = ctx.Queue()
        self._results: Any = ctx.Queue()
        self._free: list[Any] = [ctx.Queue() for _ in range(self.workers)]
        self._queues = [self._runs, self._results, *self._free]
        for q in self._free:
            for j in range(slots):
                q.put(j)
        for first in range(0, self.total, RUN):
            self._runs.put((first, min(first + RUN, self.total)))
        for _ in range(self.workers):
            self._runs.put(None)
        self._views = [np.ndarray(shape, np.uint8, buffer=self._shm.buf, offset=j * w * h * 4) for j in range(self.workers * slots)]
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
        # The queues' feeder threads: nothing they still hold is wanted once the workers are
        # gone, and without this the process can hang at exit joining one (a Ctrl+C that lands
        # while a queue starts its thread leaves it without its closing sentinel: 1 render in
        # 6-15 interrupted hung for good, the studio's cancel of a render job among them)
        for q in self._queues:
            q.close()
            q.cancel_join_thread()
        self._queues = []
        if self._shm is not None:
            self._views = []
            try:
                self._shm.close()
            except BufferError:  # a view still exported: freed with the process
                pass
            self._shm.unlink()
            self._shm = None

    def _draw_here(self, pending: dict[int, tuple[str, int, Any]]) -> bool:
        """Draw the next run in this process (copies into ``pending``); False when none is left
        (or the game cannot be drawn here: the workers then say why).

        Raises:
            RenderWorkerError: a frame failed here (named as a worker names it).
        """
        if self._local is None:
            try:
                self._local = _drawer(self.spec)
            except Exception:  # noqa: BLE001 - the workers fail alike and report it
                self._runs_here = False
                return False
        try:
            run = self._runs.get_nowait()
        except queue.Empty:
            return False
        if run is None:  # every run taken: the marker is a worker's
            self._runs.put(None)
            return False
        try:
            self._local.run(run[0], run[1], lambda frame, kind, drawn: pending.__setitem__(frame, (kind, -1, None if drawn is None else drawn.copy())))
        except Exception as exc:
            raise RenderWorkerError(f"render (drawing here while the workers start): frame {self._local.frame}: {exc}") from exc
        return True

    def _receive(self, pending: dict[int, tuple[str, int, Any]], frame: int, ready: list[bool]) -> None:
        """Wait for one message of a worker (drawing here meanwhile, before any is ready)."""
        try:
            got, kind, worker, value = self._results.get(timeout=0.0 if not ready[0] else 1.0)
        except queue.Empty:
            if not ready[0] and self._runs_here and self._draw_here(pending):
                return
            if not ready[0]:
                ready[0] = True  # nothing left to draw here: wait for the workers
            dead = [p for p in self._procs if not p.is_alive() and p.exitcode not in (0, None)]
            if dead:
                raise RenderWorkerError(f"render worker {dead[0].name} {_death(dead[0].exitcode)} before frame {frame}") from None
            return
        if kind == _ERROR:
            raise RenderWorkerError(f"render worker {worker}: frame {got}: {value.strip().splitlines()[-1]}\n{value}")
        if kind == _READY:
            ready[0] = True
        elif kind == _DONE:
            self.worker_cpu += value
            self._done += 1
        else:
            pending[got] = (kind, worker, value)

    def __iter__(self) -> Iterator[Any]:
        pending: dict[int, tuple[str, int, Any]] = {}
        ready = [False]
        #: the picture on screen now and its slot (kept until the next one: a run's first frame
        #: is compared with it, as one process compares every frame with the one before)
        shown: tuple[Any, int, int] | None = None
        for frame in range(self.total):
            while frame not in pending:
                self._receive(pending, frame, ready)
            kind, worker, value = pending.pop(frame)
            if kind == _HELD:
                yield HELD
                continue
            if kind in (_PIXELS, _FIRST):
                view = value if worker < 0 else self._views[worker * self._slots + value]
                if kind == _FIRST and shown is not None and np.array_equal(view, shown[0]):
                    if worker >= 0:
                        self._free[worker].put(value)
                    yield HELD  # the same pixels as the frame before
                    continue
            if shown is not None and shown[1] >= 0:
                self._free[shown[1]].put(shown[2])
            shown = None
            if kind == _EMPTY:
                yield None
            else:
                shown = (view, worker, value)
                yield view
        if shown is not None and shown[1] >= 0:
            self._free[shown[1]].put(shown[2])
        deadline = time.monotonic() + 5.0
        while self._done < len(self._procs) and time.monotonic() < deadline:  # the workers' CPU
            self._receive(pending, self.total, [True])


@contextlib.contextmanager
def job_frames(job: Job, game: GameInput, *, workers: int, codec: str, background: str | None) -> Iterator[Iterable[Any]]:
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
        yield drawn


def write_item(writer: VideoWriter, item: Any) -> None:
    """Append one item of :func:`job_frames` to ``writer``."""
    if item is HELD:
        writer.repeat()
    elif isinstance(item, np.ndarray):
        writer.write_copy(item)  # out of the worker's slot (which goes back) into the encoder's frame
    else:
        writer.write(item)
