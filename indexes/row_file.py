"""Row files: a snapshot's vectors as raw rows (no header), shared between generations by hard links.

A generation names how many rows of its file are its own (`count` in its manifest), so a checkpoint that
only appends rows links the old generation's file and writes the new rows after the old ones: the bytes
an older generation maps are never touched, and at 10M rows a checkpoint writes the rows it adds instead
of 21 GiB of float32 and float16 rows (benchmarks/checkpoint_append.md). A file is appended to only
while its length is exactly the old generation's rows: another worker's later generation, or a
checkpoint that died mid-append, may have grown it, and then the rows are written to a new file.

Callers hold the snapshot folder's checkpoint lock (`app/stores/faiss_store.py`): between the length
check and the append, or an append and its undo, no other checkpoint may touch the files.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import IO

import numpy as np

__all__ = ["RowAppender", "Undo", "append_or_write", "hard_link", "map_rows", "run_undo", "write_new"]

Undo = list[Callable[[], None]]  # what to run if the generation being written is given up
log = logging.getLogger(__name__)


def map_rows(path: Path, dtype: type | np.dtype, count: int, dimension: int) -> np.ndarray:
    """The first `count` rows of a row file, mapped read-only (the file may hold more: later rows)."""
    if count == 0:
        if not path.is_file():
            raise FileNotFoundError(path)
        return np.zeros((0, dimension), dtype)  # an empty file cannot be mapped
    return np.memmap(path, dtype=dtype, mode="r", shape=(count, dimension))


class RowAppender:
    """Rows of one dtype and width written to a new file at `path`, or after the first `start` bytes of
    an existing one (never truncated: it may be shared)."""

    def __init__(self, path: Path, dtype: type | np.dtype, dimension: int, start: int | None = None) -> None:
        self.dtype = np.dtype(dtype)
        self.dimension = int(dimension)
        self.count = 0
        self._handle: IO[bytes] = open(path, "wb" if start is None else "r+b")  # noqa: SIM115 - __exit__
        try:
            self._handle.seek(start or 0)
        except BaseException:
            self._handle.close()
            raise

    def append(self, piece: np.ndarray) -> None:
        """Write `piece`'s rows (converted to the file's dtype) after what is there."""
        if piece.ndim != 2 or piece.shape[1] != self.dimension:
            raise ValueError(f"rows of shape {piece.shape} appended to a file of {self.dimension}-d rows")
        self._handle.write(np.ascontiguousarray(piece, self.dtype).tobytes())
        self.count += len(piece)

    def __enter__(self) -> RowAppender:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._handle.close()  # flushes: a full disk may raise here too


def append_or_write(
    path: Path,
    dtype: type | np.dtype,
    dimension: int,
    chunks: Callable[[], Iterable[np.ndarray]],
    appended: np.ndarray,
    link: tuple[Path, int] | None,
    undo: Undo,
) -> int:
    """Write a row file at `path`; returns its row count.

    With `link` (the old generation's file and its row count, every one of which the new file starts
    with), that file is hard-linked and `appended` written after its rows, if its length is still theirs;
    `undo` then gets the step that cuts the shared file back. Otherwise `chunks()` (every row, in order)
    is written to a new file."""
    row_bytes = np.dtype(dtype).itemsize * dimension
    if link is not None and hard_link(link[0], path):
        start = link[1] * row_bytes
        if path.stat().st_size == start:
            undo.append(lambda: _cut(path, link[0], start))
            with RowAppender(path, dtype, dimension, start=start) as out:
                out.append(appended)
            return link[1] + out.count
        path.unlink()  # grown by a later generation (or a died append): never written into
    return write_new(path, dtype, dimension, chunks())


def write_new(path: Path, dtype: type | np.dtype, dimension: int, chunks: Iterable[np.ndarray]) -> int:
    """Write `chunks` (rows, in order) as a new row file at `path`; returns its row count."""
    with RowAppender(path, dtype, dimension) as out:
        for chunk in chunks:
            out.append(chunk)
    return out.count


def run_undo(undo: Undo) -> None:
    """Run and forget the undo steps, latest first; one that fails is logged and the rest still run."""
    while undo:
        step = undo.pop()
        try:
            step()
        except OSError:
            # The rows stay appended: the next checkpoint finds the file longer and writes new files.
            log.warning("could not take back rows appended to a shared row file", exc_info=True)


def _cut(path: Path, source: Path, length: int) -> None:
    """Cut a shared row file back to `length` bytes (through whichever of its links still exists)."""
    for name in (path, source):
        with contextlib.suppress(FileNotFoundError):
            os.truncate(name, length)
            return


def hard_link(source: Path, path: Path) -> bool:
    """Hard-link `source` as `path`; False where the file system cannot (the caller writes it)."""
    try:
        os.link(source, path)
    except OSError as error:
        if error.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.ENOENT):
            raise
        return False
    return True
