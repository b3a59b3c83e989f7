"""Page-cache hints for snapshot files: what searches read stays cached, what they do not gives way.

A compact index's generation is mostly files that searches read little or not at all (the float32 rows,
14 GiB at 10M rows, are read only by the next checkpoint and by look-ups by id) beside the IVF lists that
every query scans (3.7 GiB). Writing a generation passes all of it through the page cache, and pages
written once are evicted oldest first, whatever searches need (benchmarks/scale_10m.md: the page cache
right after a checkpoint). These hints are advisory and cost nothing where unsupported (macOS has no
posix_fadvise; tmpfs ignores it).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import mmap
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["cached_fraction", "forget", "forget_mapped", "prefetch", "read_randomly"]

_PAGE = mmap.PAGESIZE


def forget(path: Path) -> None:
    """Drop a file's clean pages from the page cache (call after fsync: dirty pages are not dropped)."""
    _advise(path, "POSIX_FADV_DONTNEED")


def forget_mapped(array: np.ndarray, path: Path) -> None:
    """`forget` for a file this process has memory-mapped as `array` (fsynced): the kernel keeps pages a
    mapping holds, so they are let go from the mapping first (read again from the file if touched)."""
    handle = getattr(array, "_mmap", None)  # numpy.memmap keeps its mmap.mmap here
    if isinstance(handle, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError):
            handle.madvise(mmap.MADV_DONTNEED)
    forget(path)


def prefetch(path: Path) -> None:
    """Start reading a file into the page cache in the background (the call does not wait for it)."""
    _advise(path, "POSIX_FADV_WILLNEED")


def _advise(path: Path, advice: str) -> None:
    if not hasattr(os, "posix_fadvise"):
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):  # a file system without the hint: only speed is at stake
            os.posix_fadvise(fd, 0, 0, getattr(os, advice))
    finally:
        os.close(fd)


def read_randomly(array: np.ndarray) -> np.ndarray:
    """Advise the kernel that a memory-mapped array is read a row here and a row there; returns it.

    A page fault on a mapped file reads ahead about 128 KiB by default: refining 100 candidates scattered
    over 7 GiB of float16 rows would read 32 pages for each row wanted, evicting what other queries need.
    """
    handle = getattr(array, "_mmap", None)  # numpy.memmap keeps its mmap.mmap here
    if isinstance(handle, mmap.mmap) and hasattr(mmap, "MADV_RANDOM"):
        with contextlib.suppress(OSError):  # a kernel without the advice: only speed is at stake
            handle.madvise(mmap.MADV_RANDOM)
    return array


@functools.cache
def _mincore() -> Any:
    try:
        function = ctypes.CDLL(None, use_errno=True).mincore
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function


def cached_fraction(path: Path) -> float | None:
    """The share of a file's pages now in the page cache (0 to 1); None where it cannot be asked."""
    size = path.stat().st_size
    function = _mincore()
    if function is None or size == 0:
        return None if function is None else 1.0
    pages = (size + _PAGE - 1) // _PAGE
    vector = np.zeros(pages, np.uint8)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ) as view:
        mapped = np.frombuffer(view, np.uint8)  # only for the mapping's address: no page is touched
        status = function(mapped.ctypes.data, size, vector.ctypes.data)
        del mapped  # the buffer must be released before the mapping closes
    return None if status != 0 else float(np.count_nonzero(vector & 1)) / pages
