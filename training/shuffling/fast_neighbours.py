"""Fast shuffling by nearest neighbours (Algorithm 2 where a text's "words" are its top-k neighbours)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from indexes.knn import knn_search
from training.shuffling.base import Encoder, check_group_size, check_side, encode_unique
from training.shuffling.fast import FastOrder, Shingle, random_shingles

__all__ = ["FastNeighboursOrder"]


class FastNeighboursOrder(FastOrder):
    """Group pairs whose first (or second) texts draw a common one among their nearest neighbours."""

    name = "fast_neighbours"
    needs_encoder = True

    def __init__(
        self,
        n_neighbors: int = 5,
        shingle_size: int = 1,
        group_size: int | None = 8,
        by: str = "first",
    ) -> None:
        # The paper only says "for some small value of k"; 5 neighbours (the text itself included)
        # with one-word shingles links a text to those it shares a neighbour with.
        for label, value in (("n_neighbors", n_neighbors), ("shingle_size", shingle_size)):
            if isinstance(value, bool) or value < 1:
                raise ValueError(f"{label} must be >= 1, got {value!r}")
        self.n_neighbors = n_neighbors
        self.shingle_size = shingle_size
        self.group_size = check_group_size(group_size)
        self.by = check_side(by)

    def shingles(
        self, texts: Sequence[str], rng: np.random.Generator, encode: Encoder | None = None
    ) -> list[Shingle]:
        """Steps 1-2 of Algorithm 2: a random subset of t of each text's top-k neighbour ids."""
        if not texts:
            return []
        unique_emb, text_ids = encode_unique(texts, encode, self.name)
        # "The words are the positions of the top-k nearest neighbors in the input sequence". We use
        # positions among the distinct texts, so identical texts are one word rather than several
        # tied ones, and we keep the text itself: it is its own nearest neighbour, and a text
        # drawing itself still meets every text that has it among its neighbours.
        _, neighbours = knn_search(unique_emb, unique_emb, self.n_neighbors)
        # Subsets are drawn per example, not per distinct text: duplicates draw independently.
        return random_shingles(neighbours[text_ids].tolist(), self.shingle_size, rng)
