"""Random batch order: a seeded permutation, different at each epoch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from training.shuffling.base import BatchOrder, Encoder, check_pairs, epoch_rng

__all__ = ["RandomOrder"]


class RandomOrder(BatchOrder):
    """Uniformly random order, reproducible from (seed, epoch) and different at each epoch."""

    name = "random"
    needs_encoder = False

    def order(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        batch_size: int,
        epoch: int,
        seed: int,
        encode: Encoder | None = None,
    ) -> np.ndarray:
        """Return a random permutation of the pairs drawn from (seed, epoch)."""
        n = check_pairs(firsts, seconds, batch_size)
        return epoch_rng(seed, epoch).permutation(n).astype(np.int64)
