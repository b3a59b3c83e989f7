"""Lexical and hybrid ranking of one corpus: BM25 and dense candidates fused (docs/concepts/ranking.md).

Each side contributes its own top `max(k, 100)`; the union is scored on both sides (the dense cosine
from the stored vectors, BM25 from the lexical index) and fused by `indexes.fusion`. Nothing scans the
whole corpus. `dense` mode never comes here (the plain vector search is the dense ranking).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from app.stores.port import CorpusVectors, VectorStore
from indexes.fusion import FusedHit, RankingSetting, fuse

CANDIDATES = 100  # each side's share of the candidates: its top max(k, CANDIDATES)
_FILTERED_POOL = 10  # a filter keeps fewer lexical hits: look this many times deeper before filtering


def _complete(
    store: VectorStore,
    opened: CorpusVectors,
    query: str,
    vector: np.ndarray,
    candidates: Sequence[int],
    dense: dict[int, float],
    lexical: dict[int, float],
    language: str | None = None,
) -> tuple[dict[int, float], dict[int, float]]:
    """Both scores of every candidate; a candidate deleted meanwhile (no vector) is left out."""
    missing = [doc_id for doc_id in candidates if doc_id not in dense]
    # (`search_corpus` hands over every candidate's BM25 already: no second pass over the postings.)
    if missing:
        present, vectors = store.present_vectors(opened, missing)
        dense.update(zip(present, (np.asarray(vectors) @ vector).tolist(), strict=True))
    dense = {doc_id: dense[doc_id] for doc_id in candidates if doc_id in dense}
    unscored = [d for d in dense if d not in lexical]
    if unscored:
        lexical.update(opened.lexical.scores(query, unscored, language))
    return dense, lexical


def search_corpus(
    store: VectorStore,
    opened: CorpusVectors,
    query: str,
    vector: np.ndarray,
    k: int,
    how: RankingSetting,
    dense_hits: Sequence[tuple[int, float]],
    allowed: Collection[int] | None = None,
    language: str | None = None,
) -> list[FusedHit]:
    """The k best documents for a query: `dense_hits` are the vector search's top max(k, CANDIDATES)
    (already filtered), `allowed` the ids a filter admits (None: every document), `language` the one the
    query is analysed in (None: the corpus's)."""
    pool = max(k, CANDIDATES)
    # One BM25 pass: every document sharing a term with the query, so the dense candidates' scores too.
    found = opened.lexical.match(query, language)
    lexical_hits = found.best(pool if allowed is None else pool * _FILTERED_POOL)
    if allowed is not None:
        lexical_hits = [(d, s) for d, s in lexical_hits if d in allowed][:pool]
    dense = dict(dense_hits) if how.mode == "hybrid" else {}
    lexical = dict(lexical_hits)
    candidates = list(dict.fromkeys([*dense, *lexical]))
    lexical.update(found.of(d for d in candidates if d not in lexical))
    dense, lexical = _complete(store, opened, query, vector, candidates, dense, lexical, language)
    return fuse(dense, lexical, how, k)


def rerank(
    store: VectorStore,
    opened: CorpusVectors,
    query: str,
    vector: np.ndarray,
    candidates: Sequence[int],
    k: int,
    how: RankingSetting,
    language: str | None = None,
) -> list[FusedHit]:
    """The k best of the given candidates (a thread's answers), scored on both sides."""
    dense, lexical = _complete(store, opened, query, vector, candidates, {}, {}, language)
    return fuse(dense, lexical, how, k)
