"""What a checkpoint seals: captured under the index's lock in an instant, its rows written out after it.

The rows of a new snapshot are the old base's (all, or the live ones when compacting) followed by the live
delta rows. Only the delta and the base's alive marks change under writes, so they alone are copied while
the lock is held; the base rows are memory-mapped from their generation and never written to, so they are
streamed to the new generation's file afterwards, while writes go on. They are written once, straight into
that file (not into a scratch copy first: 14 GiB at 10M rows, written twice, pushed the IVF lists that
searches scan out of the page cache; benchmarks/scale_10m.md).
"""

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexes.durable import fsync_file
from indexes.npy_append import NpyAppender

__all__ = ["SealedRows", "row_chunks", "write_vectors"]

_CHUNK_ROWS = 65_536  # base rows copied at a time: 96 MiB of 384-d float32, never the whole matrix


@dataclass(frozen=True)
class SealedRows:
    """A new snapshot's rows, ids and alive marks up to `hwm`, without copying the base's rows."""

    base_vectors: np.ndarray  # the old base's rows (memory-mapped from its generation: read-only)
    base_ids: np.ndarray
    keep: np.ndarray | None  # which base rows the snapshot keeps (a copy); None: every one
    delta_vectors: np.ndarray  # the live delta rows (a copy), appended after the kept base rows
    delta_ids: np.ndarray
    alive: np.ndarray
    hwm: int

    @property
    def appended(self) -> int:
        """Rows appended after the old base's (the delta's live rows)."""
        return len(self.delta_ids)

    @property
    def unchanged(self) -> bool:
        """True when the rows are the old base's exactly: none left out, none appended."""
        return self.keep is None and not self.appended

    def ids(self) -> np.ndarray:
        """The snapshot's ids, in row order."""
        base_ids = np.asarray(self.base_ids) if self.keep is None else np.asarray(self.base_ids)[self.keep]
        return np.concatenate([base_ids, self.delta_ids]).astype(np.int64, copy=False)

    def vector_chunks(self) -> Iterator[np.ndarray]:
        """The snapshot's rows in order, a bounded chunk at a time."""
        yield from row_chunks(self.base_vectors, self.keep)
        yield self.delta_vectors

    def refine_chunks(self, previous: np.ndarray | None) -> Iterator[np.ndarray] | None:
        """The rows in float16 from `previous` (the old base's float16 rows, converted from these very
        float32 rows) and the delta's converted, a chunk at a time; None without `previous`.

        Copying them reads half the bytes that converting the float32 rows again would, and lets those
        leave the page cache before: the copy of 14 GiB of rows at 10M kept them there meanwhile."""
        if previous is None or len(previous) != len(self.base_vectors):
            return None
        return itertools.chain(row_chunks(previous, self.keep), [self.delta_vectors.astype(np.float16)])


def row_chunks(rows: np.ndarray, keep: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """`rows` (all, or those `keep` marks), a bounded chunk at a time (never a second matrix in memory)."""
    for start in range(0, len(rows), _CHUNK_ROWS):
        block = np.asarray(rows[start : start + _CHUNK_ROWS])
        yield block if keep is None else block[keep[start : start + _CHUNK_ROWS]]


def write_vectors(path: Path, rows: SealedRows, link_from: Path | None = None) -> np.ndarray:
    """The rows as a float32 .npy file at `path`, fsynced, and mapped read-only.

    With `link_from` (the old generation's file) and rows unchanged, the file is hard-linked, not written.
    Plain writes, not stores into a writable mapping: on a full disk a write raises ENOSPC, where a store
    into a mapped page kills the process with SIGBUS.
    """
    if not (rows.unchanged and link_from is not None and _linked(link_from, path)):
        with NpyAppender(path, np.float32, rows.base_vectors.shape[1:]) as out:
            for chunk in rows.vector_chunks():
                out.append(chunk)
    fsync_file(path)
    return np.load(path, mmap_mode="r")


def _linked(source: Path, path: Path) -> bool:
    """Hard-link `source` as `path`; False where the file system cannot (the caller writes it)."""
    try:
        os.link(source, path)
    except OSError as error:
        if error.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.ENOENT):
            raise
        return False
    return True
