"""Handing freed memory back to the operating system (a leaf: imports nothing heavy)."""

from __future__ import annotations

import ctypes
import functools
from typing import Any


@functools.cache
def _malloc_trim() -> Any:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> None:
    """Return the heap pages of freed C allocations to the system (glibc keeps them otherwise: blocks
    below its mmap threshold, such as Faiss's IVF lists or numpy's small arrays, come from a heap that
    shrinks only from its top)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
