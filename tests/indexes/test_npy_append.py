"""An .npy file appended a piece at a time loads, mapped, as the concatenation of its pieces."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexes.npy_append import NpyAppender

PIECES = st.lists(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=50), max_size=8)


@settings(max_examples=60, deadline=None)
@given(PIECES, st.sampled_from([np.int32, np.int64]))
def test_appended_pieces_load_as_their_concatenation(pieces: list[list[int]], dtype: type) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.npy"
        with NpyAppender(path, dtype) as out:
            for piece in pieces:
                out.append(np.asarray(piece, np.int64))
        loaded = np.load(path, mmap_mode="r")
        expected = np.asarray([x for piece in pieces for x in piece], dtype)
        assert loaded.dtype == np.dtype(dtype) and loaded.shape == expected.shape
        assert np.array_equal(loaded, expected)
        assert np.array_equal(np.load(path), expected)  # read whole, not only mapped


def test_a_file_whose_writer_died_before_closing_does_not_load(tmp_path: Path) -> None:
    """Its header is only written at the end: before that the file is not an array (not an empty one)."""
    path = tmp_path / "rows.npy"
    out = NpyAppender(path, np.int32)
    out.append(np.arange(1000))
    out._handle.close()  # what a killed process leaves: the data, no header
    with pytest.raises(ValueError):
        np.load(path, mmap_mode="r")


def test_rows_of_a_matrix_load_as_the_matrix(tmp_path: Path) -> None:
    """Pieces of rows (a 2-d array a chunk at a time, converted to the file's dtype) load as the whole."""
    matrix = np.random.default_rng(0).standard_normal((1000, 7)).astype(np.float32)
    path = tmp_path / "rows.npy"
    with NpyAppender(path, np.float16, (7,)) as out:
        for start in range(0, 1000, 300):
            out.append(matrix[start : start + 300])
    loaded = np.load(path, mmap_mode="r")
    assert loaded.dtype == np.float16 and loaded.shape == (1000, 7)
    assert np.array_equal(loaded, matrix.astype(np.float16))
    with pytest.raises(ValueError), NpyAppender(tmp_path / "other.npy", np.float16, (7,)) as other:
        other.append(matrix[:, :3])  # rows of another width
