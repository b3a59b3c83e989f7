"""Fusing a dense and a lexical ranking of the same candidates into one.

Linear fusion min-max normalises each side's scores over the candidates of one query and mixes them,
`(1 - alpha) * dense + alpha * lexical`, so alpha = 0 is dense only and 1 lexical only. A candidate
the lexical side did not match scores 0 there (BM25 is 0 without a shared term). Reciprocal-rank
fusion (RRF) ignores the scores: sum over the two rankings of 1 / (60 + rank), rank from 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["RRF_K", "FusedHit", "fuse_linear", "fuse_rrf", "minmax"]

RRF_K = 60  # the constant of Cormack et al. (2009)


@dataclass(frozen=True)
class FusedHit:
    """One candidate: its id, fused score and the two component scores (raw, before normalisation)."""

    doc_id: int
    score: float
    dense: float
    lexical: float


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] over the values; all-equal values (or none) become 0."""
    if values.size == 0:
        return values.astype(np.float64)
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12:
        return np.zeros(values.shape, dtype=np.float64)
    return (values - low) / (high - low)


def _ordered(
    ids: list[int], fused: np.ndarray, dense: np.ndarray, lexical: np.ndarray, k: int
) -> list[FusedHit]:
    order = np.lexsort((np.asarray(ids), -dense, -fused))[:k]  # ties: the denser, then the smaller id
    return [FusedHit(ids[i], float(fused[i]), float(dense[i]), float(lexical[i])) for i in order]


def fuse_linear(
    dense: Mapping[int, float], lexical: Mapping[int, float], alpha: float, k: int
) -> list[FusedHit]:
    """The k best candidates by normalised linear fusion; every candidate needs its dense score."""
    ids = list(dense)
    dense_scores = np.array([dense[i] for i in ids], dtype=np.float64)
    lexical_scores = np.array([lexical.get(i, 0.0) for i in ids], dtype=np.float64)
    fused = (1 - alpha) * minmax(dense_scores) + alpha * minmax(lexical_scores)
    return _ordered(ids, fused, dense_scores, lexical_scores, k)


def fuse_rrf(dense: Mapping[int, float], lexical: Mapping[int, float], k: int) -> list[FusedHit]:
    """The k best candidates by reciprocal-rank fusion of the two score lists."""
    ids = list(dense)
    dense_scores = np.array([dense[i] for i in ids], dtype=np.float64)
    lexical_scores = np.array([lexical.get(i, 0.0) for i in ids], dtype=np.float64)
    fused = np.zeros(len(ids), dtype=np.float64)
    for scores, present in ((dense_scores, np.ones(len(ids), bool)), (lexical_scores, lexical_scores > 0)):
        order = np.lexsort((np.asarray(ids), -scores))
        ranks = np.empty(len(ids), dtype=np.float64)
        ranks[order] = np.arange(1, len(ids) + 1)
        fused += np.where(present, 1.0 / (RRF_K + ranks), 0.0)
    return _ordered(ids, fused, dense_scores, lexical_scores, k)
