"""Rows and appends for the vector index tests: random 16-d unit rows, upserted after an index's mark."""

from __future__ import annotations

import numpy as np

from indexes.snapshot import ModelIdentity
from indexes.vector_index import VectorIndex, normalize_rows

MODEL = ModelIdentity("m", "m@1", "11" * 32, 16)


def rows_of(n: int, seed: int = 0) -> np.ndarray:
    """Random unit rows."""
    return normalize_rows(np.random.default_rng(seed).normal(size=(n, 16)).astype(np.float32))


def append(index: VectorIndex, ids: range, seed: int) -> None:
    """Upsert new rows with ids `ids`, after the index's mark."""
    rows = rows_of(len(ids), seed)
    index.apply([(doc, rows[i], index.hwm + 1 + i) for i, doc in enumerate(ids)], hwm=index.hwm + len(ids))
