"""Worker processes that end when the process that started them ends, however it ended.

A worker of a :mod:`multiprocessing` pool waits on a queue whose write end it holds itself
(the queue was handed to it whole), so it never sees end-of-file when its parent dies.  A
service killed with SIGKILL (the cluster's failover, an out-of-memory kill, ``kill -9`` of a
hung process) used to leave its analysis worker behind for good, holding its memory and the
dead service's stdout pipe (a supervisor reading it never got end-of-file; a test waiting
for the service's exit hung on it).  A render killed so left its drawing processes, their
fork server and their shared memory behind.

:func:`exit_with_parent` is the analysis pool's initializer and the first thing a render's
drawing process does (:mod:`overlay.video.parallel`).  It waits in a daemon thread on the
parent's sentinel, which :mod:`multiprocessing` gives every child it starts (spawn,
forkserver): readable once the parent is gone, whatever way it went.  No polling, nothing to
configure.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading

__all__ = ["exit_with_parent", "EXIT_CODE"]

#: the worker's exit status when it ends because its parent did
EXIT_CODE = 70


def _wait_then_exit(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(EXIT_CODE)  # the parent is gone: nothing to flush to, no one to answer


def exit_with_parent() -> None:
    """In a process started by :mod:`multiprocessing`: end it as soon as its parent ends (a
    no-op in a process that has no such parent)."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return
    threading.Thread(target=_wait_then_exit, args=(parent.sentinel,), name="exit-with-parent", daemon=True).start()
