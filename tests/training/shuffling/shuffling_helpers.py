"""Shared test data for the batch orderers: table encoders and well-separated blobs of texts.

Imported by the test modules of this folder as `shuffling_helpers` (pytest puts the folder on sys.path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class TableEncoder:
    """A real encoder over a fixed text -> vector table that records what it was asked to encode."""

    table: Mapping[str, np.ndarray]
    calls: list[list[str]] = field(default_factory=list)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([np.asarray(self.table[t], dtype=np.float32) for t in texts])


@dataclass
class Blobs:
    """Pairs whose grouping texts form well-separated clusters of embeddings."""

    firsts: list[str]
    seconds: list[str]
    labels: np.ndarray  # blob of each pair
    encoder: TableEncoder


def make_blobs(sizes: Sequence[int], *, seed: int = 0, noise: float = 0.05, by: str = "first") -> Blobs:
    """Blob b holds sizes[b] distinct texts near the b-th basis vector; pairs are listed shuffled."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(labels)  # so that file order does not already group the blobs
    dim = len(sizes) + 2
    grouped = [f"blob{b}-text{i}" for i, b in enumerate(labels.tolist())]
    other = [f"other{i}" for i in range(len(labels))]
    vectors = np.eye(dim)[labels] + rng.normal(scale=noise, size=(len(labels), dim))
    table = dict(zip(grouped, vectors, strict=True))
    # the other side's texts get random vectors: grouping must ignore them
    table.update(zip(other, rng.normal(size=(len(labels), dim)), strict=True))
    firsts, seconds = (grouped, other) if by == "first" else (other, grouped)
    return Blobs(firsts, seconds, labels, TableEncoder(table))


def random_encoder(texts: Sequence[str], *, dim: int = 8, seed: int = 0) -> TableEncoder:
    """A table encoder with an independent random vector for each distinct text."""
    rng = np.random.default_rng(seed)
    unique = list(dict.fromkeys(texts))
    return TableEncoder(dict(zip(unique, rng.normal(size=(len(unique), dim)), strict=True)))


def slices(order: np.ndarray, size: int) -> list[np.ndarray]:
    """Consecutive slices of `size`, as the trainer cuts batches."""
    return [order[i : i + size] for i in range(0, len(order), size)]


def assert_permutation(order: np.ndarray, n: int) -> None:
    """The order is an int64 permutation of range(n)."""
    assert isinstance(order, np.ndarray) and order.dtype == np.int64 and order.shape == (n,)
    assert sorted(order.tolist()) == list(range(n))
