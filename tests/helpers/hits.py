"""Comparing search results from two indexes that hold the same rows in different storage orders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def assert_same_hits(got: Sequence[Sequence[tuple[Any, float]]], want: Sequence[Sequence[tuple[Any, float]]],
                     atol: float = 1e-5) -> None:  # fmt: skip
    """Same ids in the same order, and cosines equal but for float rounding (matrix products over rows
    stored in another order may differ in the last bits; float16 rows in the fourth decimal)."""
    assert [[d for d, _ in row] for row in got] == [[d for d, _ in row] for row in want]
    for got_row, want_row in zip(got, want, strict=True):
        np.testing.assert_allclose([s for _, s in got_row], [s for _, s in want_row], atol=atol)
