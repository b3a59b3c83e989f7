"""An .npy file written a piece at a time: a save streams postings to disk instead of holding them."""

from __future__ import annotations

import io
from pathlib import Path
from types import TracebackType
from typing import IO

import numpy as np

__all__ = ["NpyAppender"]


def _header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The .npy header of an array; numpy pads it for any first dimension to the same size (growth room)."""
    buffer = io.BytesIO()
    fields = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, fields)
    return buffer.getvalue()


class NpyAppender:
    """Append pieces of one dtype (rows of shape `row`: () for a 1-d array) to `path`; on close the header
    is written with the final length, so `np.load(path, mmap_mode="r")` reads them as one array."""

    def __init__(self, path: Path, dtype: type | np.dtype, row: tuple[int, ...] = ()) -> None:
        self.dtype = np.dtype(dtype)
        self.row = tuple(int(n) for n in row)
        self.count = 0
        self._reserved = len(_header(self.dtype, (0, *self.row)))
        self._handle: IO[bytes] = open(path, "wb")  # noqa: SIM115 - closed by close()/__exit__
        self._handle.write(b"\0" * self._reserved)  # not a header: a file never closed fails to load

    def append(self, piece: np.ndarray) -> None:
        """Write `piece` (converted to the file's dtype) after what is there."""
        if tuple(piece.shape[1:]) != self.row:
            raise ValueError(f"rows of shape {tuple(piece.shape[1:])} appended to a file of rows {self.row}")
        self._handle.write(np.ascontiguousarray(piece, self.dtype).tobytes())
        self.count += len(piece)

    def close(self) -> None:
        """Write the final header and close the file."""
        try:
            header = _header(self.dtype, (self.count, *self.row))
            if len(header) != self._reserved:  # numpy's growth room makes this impossible below 10**21
                raise ValueError(f".npy header grew from {self._reserved} to {len(header)} bytes")
            self._handle.seek(0)
            self._handle.write(header)
        finally:
            self._handle.close()  # flushes: a full disk may raise here too

    def __enter__(self) -> NpyAppender:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        else:
            self._handle.close()
