"""Background work yields the cores and the disk to requests: the CPU and I/O priorities of one thread
(Linux's nice and I/O class are per thread, and the threads it starts, such as its OpenMP team, inherit
them).

A checkpoint of a large compact index is minutes of CPU (copying rows, adding them to the lists,
measuring recall, converting the float16 copy) in the serving process; at even priority it takes one of
two cores from the searches (benchmarks/scale_10m.md: searches during a checkpoint).
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import sys
import threading
from typing import Any

__all__ = ["idle_thread_io", "lower_thread_priority", "thread_io_class", "thread_nice"]

log = logging.getLogger(__name__)
_LOWEST = 19
# ioprio_set/ioprio_get (no wrapper in libc or os): syscall numbers per architecture, and the encoding.
_IOPRIO_CALLS = {"x86_64": (251, 252), "aarch64": (30, 31)}
_IOPRIO_WHO_PROCESS = 1  # with a thread id: that thread alone
_IOPRIO_CLASS_SHIFT = 13
IOPRIO_CLASS_IDLE = 3


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


def idle_thread_io() -> bool:
    """Put the calling thread's disk reads in the idle I/O class, served when no request's read waits
    (by the schedulers that order by class: mq-deadline, BFQ; with `none` it changes nothing). False
    where this system has no such call or refused it."""
    call = _ioprio_call(0)
    if call is None:
        return False
    value = IOPRIO_CLASS_IDLE << _IOPRIO_CLASS_SHIFT
    if call(_IOPRIO_WHO_PROCESS, threading.get_native_id(), value) != 0:
        log.warning("could not lower the I/O priority of thread %s: errno %d",
                    threading.current_thread().name, ctypes.get_errno())  # fmt: skip
        return False
    return True


def thread_io_class(native_id: int) -> int | None:
    """The I/O class of one of this process's threads (0 none set, 1 realtime, 2 best effort, 3 idle)."""
    call = _ioprio_call(1)
    value = None if call is None else call(_IOPRIO_WHO_PROCESS, native_id)
    return None if value is None or value < 0 else value >> _IOPRIO_CLASS_SHIFT


def _ioprio_call(which: int) -> Any:
    numbers = _IOPRIO_CALLS.get(platform.machine())
    if numbers is None or not sys.platform.startswith("linux"):
        return None
    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long
    return lambda *args: syscall(ctypes.c_long(numbers[which]), *(ctypes.c_long(a) for a in args))
