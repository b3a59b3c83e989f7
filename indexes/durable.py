"""Durable writes: what a generation's writer flushes before a pointer may name it, and where it stages
the generation meanwhile (BM25 and vector snapshots alike)."""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["STAGING", "fsync_dir", "fsync_file", "staged_folder", "sweep_staging"]

STAGING = ".tmp-gen-"  # a generation being written: never loaded, swept by the next save's writer


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


@contextlib.contextmanager
def staged_folder(folder: Path) -> Iterator[Path]:
    """A new staging folder in `folder` for a generation's files: fsynced when the block ends, removed
    when it raises (a full disk leaves nothing behind)."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{STAGING}{uuid.uuid4().hex[:12]}"
    try:
        tmp.mkdir()
        yield tmp
        for child in tmp.iterdir():  # on disk before CURRENT can name it: a crash leaves the old one
            fsync_file(child)
        fsync_dir(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def sweep_staging(folder: Path) -> int:
    """Remove generations left half-written by a save that died (only its folder's writer may call it)."""
    removed = 0
    for child in folder.glob(f"{STAGING}*") if folder.is_dir() else ():
        shutil.rmtree(child, ignore_errors=True)
        removed += 1
    return removed
