"""Comparing search results from two indexes that hold the same rows in different storage orders."""

from __future__ import annotations

import numpy as np


def assert_same_hits(got: list[list[tuple[int, float]]], want: list[list[tuple[int, float]]]) -> None:
    """Same ids in the same order, and cosines equal but for float rounding (matrix products over rows
    stored in another order may differ in the last bits)."""
    assert [[d for d, _ in row] for row in got] == [[d for d, _ in row] for row in want]
    for got_row, want_row in zip(got, want, strict=True):
        np.testing.assert_allclose([s for _, s in got_row], [s for _, s in want_row], atol=1e-5)
