"""Fusing a dense and a lexical ranking of the same candidates into one.

Linear fusion min-max normalises each side's scores over the candidates of one query and mixes them,
`(1 - alpha) * dense + alpha * lexical`, so alpha = 0 is dense only and 1 lexical only. A candidate
the lexical side did not match scores 0 there (BM25 is 0 without a shared term). Reciprocal-rank
fusion (RRF) ignores the scores: sum over the two rankings of 1 / (60 + rank), rank from 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from indexes.fusion_defaults import DEFAULT_ALPHA

__all__ = [
    "DEFAULT_ALPHA",
    "RRF_K",
    "Hit",
    "RankingSetting",
    "fuse_linear",
    "fuse_rrf",
    "minmax",
    "stage_order",
]

RRF_K = 60  # the constant of Cormack et al. (2009)


@dataclass(frozen=True)
class RankingSetting:
    """One way to rank: `dense`, `lexical`, or `hybrid` with a lexical weight and a fusion."""

    mode: str
    alpha: float = 0.0
    fusion: str = "linear"

    @property
    def label(self) -> str:
        """A short name for tables: dense, lexical, hybrid a=0.2, hybrid rrf."""
        if self.mode != "hybrid":
            return self.mode
        return "hybrid rrf" if self.fusion == "rrf" else f"hybrid a={self.alpha:g}"


@dataclass(frozen=True)
class Hit:
    """One ranked document: its id and score, and in lexical and hybrid modes the two component scores
    (raw, before normalisation)."""

    doc_id: int
    score: float
    dense: float | None = None  # the cosine (None in dense mode, where it is the score)
    lexical: float | None = None  # the BM25 score

    @property
    def cosine(self) -> float:
        """The document's cosine with the query, whatever the mode ranked by."""
        return self.dense if self.dense is not None else self.score


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] over the values; all-equal values (or none) become 0."""
    if values.size == 0:
        return values.astype(np.float64)
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12:
        return np.zeros(values.shape, dtype=np.float64)
    return (values - low) / (high - low)


def _ordered(ids: list[int], fused: np.ndarray, dense: np.ndarray, lexical: np.ndarray, k: int) -> list[Hit]:
    order = np.lexsort((np.asarray(ids), -dense, -fused))[:k]  # ties: the denser, then the smaller id
    return [Hit(ids[i], float(fused[i]), float(dense[i]), float(lexical[i])) for i in order]


def fuse_linear(dense: Mapping[int, float], lexical: Mapping[int, float], alpha: float, k: int) -> list[Hit]:
    """The k best candidates by normalised linear fusion; every candidate needs its dense score."""
    ids = list(dense)
    dense_scores = np.array([dense[i] for i in ids], dtype=np.float64)
    lexical_scores = np.array([lexical.get(i, 0.0) for i in ids], dtype=np.float64)
    fused = (1 - alpha) * minmax(dense_scores) + alpha * minmax(lexical_scores)
    return _ordered(ids, fused, dense_scores, lexical_scores, k)


def fuse_rrf(dense: Mapping[int, float], lexical: Mapping[int, float], k: int) -> list[Hit]:
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


def stage_order(first: Sequence[float], cross: Sequence[float] | np.ndarray, weight: float) -> list[float]:
    """What the re-ranked top k is ordered by: the cross-encoder's scores, or, with `weight` < 1, weight x
    its scores + (1 - weight) x the first stage's (each min-max scaled over the k)."""
    scores = np.asarray(cross, dtype=np.float64)
    if weight < 1.0:
        scores = weight * minmax(scores) + (1.0 - weight) * minmax(np.asarray(first, dtype=np.float64))
    return [float(v) for v in scores]
