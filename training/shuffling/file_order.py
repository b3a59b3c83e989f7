"""No shuffling: the pairs are batched in file order at every epoch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from training.shuffling.base import BatchOrder, Encoder, check_pairs, epoch_rng

__all__ = ["FileOrder"]


class FileOrder(BatchOrder):
    """Keep the file order at every epoch (best for CQA-A in the paper: it is ordered by question)."""

    name = "none"
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
        """Return the identity permutation."""
        n = check_pairs(firsts, seconds, batch_size)
        epoch_rng(seed, epoch)  # validates seed/epoch like the other strategies, result unused
        return np.arange(n, dtype=np.int64)
