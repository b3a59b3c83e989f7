"""Lexical and hybrid ranking of one corpus: BM25 and dense candidates fused (README, "Hybrid ranking").

Each side contributes its own top `max(k, 100)`; the union is scored on both sides (the dense cosine
from the stored vectors, BM25 from the lexical index) and fused by `indexes.fusion`. Nothing scans the
whole corpus. `dense` mode never comes here (the plain vector search is the dense ranking).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.services.vector_store import CorpusVectors, VectorStore
from indexes.fusion import FusedHit, RankingSetting, fuse

# The lexical weight of a `hybrid` request that names none and has no calibration: between the best
# mixes measured on claims (PFCC-S, 0.1) and questions (CQA-B, 0.3) in benchmarks/hybrid.md.
DEFAULT_ALPHA = 0.2
# How a new corpus ranks until a calibration says otherwise (its `default_ranking`), by kind. Claims:
# hybrid a=0.2, the best setting of the cross-validated PFCC-S table (benchmarks/hybrid.md: +5.75 points
# HasPositive@1 over dense for the base model, +2.5 more on the fine-tuned one). Answers (CQA-A: every
# amount of BM25 lowers MAP) and questions (CQA-B: +0.8 MAP, inside the fold spread) stay dense.
DEFAULT_RANKING_BY_KIND: dict[str, dict[str, Any]] = {
    "claim": {"mode": "hybrid", "alpha": DEFAULT_ALPHA, "fusion": "linear"},
}
CANDIDATES = 100  # each side's share of the candidates: its top max(k, CANDIDATES)
_FILTERED_POOL = 10  # a filter keeps fewer lexical hits: look this many times deeper before filtering


@dataclass(frozen=True)
class RankingRequest:
    """What a request asked for; None: the corpus's calibration for the serving model, else the default."""

    mode: str | None = None
    alpha: float | None = None
    fusion: str | None = None


def resolve_mode(
    requested: RankingRequest | None,
    calibrated: dict[str, Any] | None,
    model: str,
    default: dict[str, Any] | None = None,
) -> RankingSetting:
    """The request's choices, then the corpus's calibration (only if made with `model`), then the
    corpus's default ranking, then dense."""
    asked = requested or RankingRequest()
    saved = calibrated if calibrated and calibrated.get("model") == model else (default or {})
    return RankingSetting(
        mode=asked.mode or str(saved.get("mode") or "dense"),
        alpha=float(asked.alpha if asked.alpha is not None else saved.get("alpha", DEFAULT_ALPHA)),
        fusion=asked.fusion or str(saved.get("fusion") or "linear"),
    )


def _complete(
    indexes: VectorStore,
    opened: CorpusVectors,
    query: str,
    vector: np.ndarray,
    candidates: Sequence[int],
    dense: dict[int, float],
    lexical: dict[int, float],
) -> tuple[dict[int, float], dict[int, float]]:
    """Both scores of every candidate; a candidate deleted meanwhile (no vector) is left out."""
    missing = [doc_id for doc_id in candidates if doc_id not in dense]
    if missing:
        present, vectors = indexes.present_vectors(opened, missing)
        dense.update(zip(present, (np.asarray(vectors) @ vector).tolist(), strict=True))
    dense = {doc_id: dense[doc_id] for doc_id in candidates if doc_id in dense}
    lexical.update(opened.lexical.scores(query, [d for d in dense if d not in lexical]))
    return dense, lexical


def search_corpus(
    indexes: VectorStore,
    opened: CorpusVectors,
    query: str,
    vector: np.ndarray,
    k: int,
    how: RankingSetting,
    dense_hits: Sequence[tuple[int, float]],
    allowed: Collection[int] | None = None,
) -> list[FusedHit]:
    """The k best documents for a query: `dense_hits` are the vector search's top max(k, CANDIDATES)
    (already filtered), `allowed` the ids a filter admits (None: every document)."""
    pool = max(k, CANDIDATES)
    lexical_hits = opened.lexical.search(query, pool if allowed is None else pool * _FILTERED_POOL)
    if allowed is not None:
        lexical_hits = [(d, s) for d, s in lexical_hits if d in allowed][:pool]
    dense = dict(dense_hits) if how.mode == "hybrid" else {}
    lexical = dict(lexical_hits)
    candidates = list(dict.fromkeys([*dense, *lexical]))
    dense, lexical = _complete(indexes, opened, query, vector, candidates, dense, lexical)
    return fuse(dense, lexical, how, k)


def rerank(
    indexes: VectorStore,
    opened: CorpusVectors,
    query: str,
    vector: np.ndarray,
    candidates: Sequence[int],
    k: int,
    how: RankingSetting,
) -> list[FusedHit]:
    """The k best of the given candidates (a thread's answers), scored on both sides."""
    dense, lexical = _complete(indexes, opened, query, vector, candidates, {}, {})
    return fuse(dense, lexical, how, k)
