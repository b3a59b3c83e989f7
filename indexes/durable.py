"""Durable writes: what a generation's writer flushes before a pointer may name it."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_dir", "fsync_file"]


def fsync_file(path: Path) -> None:
    """Flush a file's data to disk (where a full disk with delayed allocation first says so)."""
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """Flush a folder's entries (a rename or a new file in it) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
