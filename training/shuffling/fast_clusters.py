"""Fast shuffling by clusters (Algorithm 2 with the k-means cluster id as a one-word shingle)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from indexes.knn import kmeans_assign
from training.shuffling.base import Encoder, check_group_size, check_side, encode_unique
from training.shuffling.fast import FastOrder, Shingle

__all__ = ["FastClustersOrder"]


class FastClustersOrder(FastOrder):
    """Group pairs whose first (or second) texts fall in one k-means cluster of the current model."""

    name = "fast_clusters"
    needs_encoder = True

    def __init__(
        self,
        n_clusters: int = 300,
        group_size: int | None = 8,
        by: str = "first",
        niter: int = 20,
        nredo: int = 1,
    ) -> None:
        # 300 clusters is the paper's setting on CQA-A ("Fast shuffling by 300 clusters").
        for label, value in (("n_clusters", n_clusters), ("niter", niter), ("nredo", nredo)):
            if isinstance(value, bool) or value < 1:
                raise ValueError(f"{label} must be >= 1, got {value!r}")
        self.n_clusters = n_clusters
        self.group_size = check_group_size(group_size)
        self.by = check_side(by)
        self.niter = niter
        self.nredo = nredo

    def shingles(
        self, texts: Sequence[str], rng: np.random.Generator, encode: Encoder | None = None
    ) -> list[Shingle]:
        """Steps 1-2 of Algorithm 2: the k-means cluster of each text under the current model."""
        if not texts:
            return []
        unique_emb, text_ids = encode_unique(texts, encode, self.name)
        # "Each sentence is replaced by its cluster number. Thus, each individual shingle is of
        # size t = 1": there is no subset to draw. Distinct texts are clustered once each, so a
        # text repeated many times does not pull a centroid towards itself. The k-means seed comes
        # from the epoch's generator, so clusters are reproducible and re-drawn every epoch.
        clusters = kmeans_assign(
            unique_emb, self.n_clusters, seed=int(rng.integers(2**31)), niter=self.niter, nredo=self.nredo
        )
        return [(c,) for c in clusters[text_ids].tolist()]
