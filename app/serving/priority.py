"""Background work yields the cores to requests: the CPU priority of one thread (Linux's nice is per
thread, and the threads it starts, such as its OpenMP team, inherit it).

A checkpoint of a large compact index is minutes of CPU (copying rows, adding them to the lists,
measuring recall, converting the float16 copy) in the serving process; at even priority it takes one of
two cores from the searches (benchmarks/scale_10m.md: searches during a checkpoint).
"""

from __future__ import annotations

import logging
import os
import sys
import threading

__all__ = ["lower_thread_priority", "thread_nice"]

log = logging.getLogger(__name__)
_LOWEST = 19


def lower_thread_priority(steps: int) -> int | None:
    """Lower the calling thread's CPU priority by `steps` nice levels; its nice value after, or None
    where this system has no per-thread priority (not Linux) or refused it."""
    if steps <= 0 or not sys.platform.startswith("linux"):
        return None  # elsewhere setpriority(PRIO_PROCESS, id) names a whole process, not a thread
    tid = threading.get_native_id()
    try:
        nice = min(_LOWEST, os.getpriority(os.PRIO_PROCESS, tid) + steps)
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError as error:
        log.warning("could not lower the priority of thread %s: %s", threading.current_thread().name, error)
        return None
    return nice


def thread_nice(native_id: int) -> int:
    """The nice value of one of this process's threads (Linux)."""
    return os.getpriority(os.PRIO_PROCESS, native_id)
