"""What a checkpoint seals: captured under the index's lock in an instant, its rows written out after it.

The rows of a new snapshot are the old base's (all, or the live ones when compacting) followed by the live
delta rows. Only the delta and the base's alive marks change under writes, so they alone are copied while
the lock is held; the base rows are memory-mapped from their generation and never written to, so they are
written out afterwards, while writes go on. When every base row is kept, the old generation's row files
are linked and only the delta's rows appended (`indexes/row_file.py`); otherwise the rows are written once,
straight into the new generation's files (not into a scratch copy first: 14 GiB at 10M rows, written
twice, pushed the IVF lists that searches scan out of the page cache; benchmarks/scale_10m.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexes.durable import fsync_file
from indexes.row_file import Undo, append_or_write, map_rows

__all__ = ["REFINE_FILE", "ROWS_FILE", "SealedRows", "row_chunks", "write_refine", "write_vectors"]

ROWS_FILE = "vectors.f32"  # a generation's float32 rows (raw: its manifest's `count` rows are its own)
REFINE_FILE = "vectors.f16"  # the same rows in float16, re-scored from by a refined compressed IVF

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

    def ids(self) -> np.ndarray:
        """The snapshot's ids, in row order."""
        base_ids = np.asarray(self.base_ids) if self.keep is None else np.asarray(self.base_ids)[self.keep]
        return np.concatenate([base_ids, self.delta_ids]).astype(np.int64, copy=False)

    def vector_chunks(self) -> Iterator[np.ndarray]:
        """The snapshot's rows in order, a bounded chunk at a time."""
        yield from row_chunks(self.base_vectors, self.keep)
        yield self.delta_vectors

    def dimension(self) -> int:
        """The rows' width."""
        return int(self.delta_vectors.shape[1])


def row_chunks(rows: np.ndarray, keep: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """`rows` (all, or those `keep` marks), a bounded chunk at a time (never a second matrix in memory)."""
    for start in range(0, len(rows), _CHUNK_ROWS):
        block = np.asarray(rows[start : start + _CHUNK_ROWS])
        yield block if keep is None else block[keep[start : start + _CHUNK_ROWS]]


def write_vectors(
    path: Path, rows: SealedRows, source: Path | None = None, undo: Undo | None = None
) -> np.ndarray:
    """The rows as a float32 row file at `path`, fsynced, and mapped read-only.

    With `source` (the old generation's folder) and every base row kept, its file is linked and only the
    delta's rows appended (`undo` gets the step that takes them back). Plain writes, not stores into a
    writable mapping: on a full disk a write raises ENOSPC, where a store into a mapped page kills the
    process with SIGBUS.
    """
    if source is not None and undo is None:
        raise ValueError("rows appended to a linked file need an undo list to take them back")
    link = _link(source, ROWS_FILE, rows.keep, len(rows.base_vectors))
    undo = [] if undo is None else undo
    count = append_or_write(
        path, np.float32, rows.dimension(), rows.vector_chunks, rows.delta_vectors, link, undo
    )
    fsync_file(path)
    return map_rows(path, np.float32, count, rows.dimension())


def write_refine(path: Path, rows: SealedRows, previous: np.ndarray, source: Path | None, undo: Undo) -> None:
    """The rows in float16 at `path` from `previous` (the old base's float16 rows, converted from these very
    float32 rows, one per base row) and the delta's converted.

    Linked and appended to as the float32 rows are; otherwise copied, which reads half the bytes that
    converting the float32 rows again would and lets those leave the page cache before."""
    delta = rows.delta_vectors.astype(np.float16)

    def every_row() -> Iterator[np.ndarray]:  # streamed a chunk at a time: 7 GiB of old rows at 10M
        return itertools.chain(row_chunks(previous, rows.keep), [delta])

    link = _link(source, REFINE_FILE, rows.keep, len(previous))
    append_or_write(path, np.float16, rows.dimension(), every_row, delta, link, undo)


def _link(source: Path | None, name: str, keep: np.ndarray | None, count: int) -> tuple[Path, int] | None:
    """The old generation's file to link and its row count, when the new rows start with all of them."""
    return None if source is None or keep is not None else (source / name, count)
