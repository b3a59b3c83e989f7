"""Random batch order: a seeded permutation, different at each epoch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from training.shuffling.base import BatchOrder, Encoder

__all__ = ["RandomOrder"]


class RandomOrder(BatchOrder):
    """Uniformly random order, reproducible from (seed, epoch) and different at each epoch."""

    name = "random"
    needs_encoder = False

    def permutation(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        batch_size: int,
        rng: np.random.Generator,
        encode: Encoder | None,
    ) -> np.ndarray:
        """Return a random permutation of the pairs drawn from (seed, epoch)."""
        return rng.permutation(len(firsts)).astype(np.int64)
