"""Re-ranking a first-stage ranking: a second scorer re-orders its top k, the rest keep their places.

The cross-encoder stage (training/reranker.py) is too slow for a whole corpus, so it scores only the
first stage's top k; everything below k stays where the first stage put it, under every re-ranked
candidate. Ties in the second scorer keep the first stage's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["DEFAULT_RERANK_K", "MAX_RERANK_K", "rerank_top_k"]

DEFAULT_RERANK_K = 20  # the forward tables' better depth (benchmarks/forward.md: top 20 beat top 50)
MAX_RERANK_K = 100  # the service's ceiling: 100 pairs are one forward pass of ~1 s on 2 CPU cores

T = TypeVar("T")


def rerank_top_k(ranked: Sequence[T], scores: Sequence[float], k: int) -> list[T]:
    """`ranked` with its first `k` items re-ordered by `scores` (one per re-ranked item, best first)."""
    head = list(ranked[:k])
    if len(scores) != len(head):
        raise ValueError(f"{len(scores)} re-ranker scores for the top {len(head)} candidates")
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + list(ranked[k:])
