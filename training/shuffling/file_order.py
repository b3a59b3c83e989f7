"""No shuffling: the pairs are batched in file order at every epoch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from training.shuffling.base import BatchOrder, Encoder

__all__ = ["FileOrder"]


class FileOrder(BatchOrder):
    """Keep the file order at every epoch (best for CQA-A in the paper: it is ordered by question)."""

    name = "none"
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
        """Return the identity permutation."""
        return np.arange(len(firsts), dtype=np.int64)
