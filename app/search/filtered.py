"""Search restricted to documents whose metadata matches a filter: exactly the top k among them.

The matching ids come from the database, once per request. Up to `EXACT_LIMIT` of them are scored
directly (their stored vectors times the query: exact by construction). Above that, the index is
searched ever deeper (4k, 16k, ...) and its hits kept when they match, until k are found or the whole
corpus was searched;
with an exact (flat) index that is still exactly the top k, with an ANN index as good as its recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.corpus_lookup import require_corpus
from app.db.repositories.documents import DocumentRepository
from app.stores.port import CorpusVectors, VectorStore

EXACT_LIMIT = 50_000
Hits = list[tuple[int, float]]


def matching_ids(
    sessions: sessionmaker[Session], corpus_id: int, conditions: dict[str, Any], language: str | None = None
) -> list[int]:
    """Database ids of the corpus's documents that match the filter, and whose own language is `language`
    when given (ascending)."""
    with sessions() as session:
        corpus = require_corpus(session, corpus_id)
        return DocumentRepository(session, corpus).ids_matching(conditions, language=language)


def top_k(ids: Sequence[int], scores: np.ndarray, k: int) -> Hits:
    """The k best (id, score), best first, equal scores by id (as index searches order them)."""
    order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), int(ids[i])))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]


def filtered_search(
    store: VectorStore, opened: CorpusVectors, queries: np.ndarray, k: int, allowed: Sequence[int]
) -> list[Hits]:
    """Top k (id, cosine) per query among `allowed`: the documents matching the request's filter
    (`matching_ids`, read once per request)."""
    if len(allowed) <= EXACT_LIMIT:
        present, vectors = store.present_vectors(opened, allowed)
        scores = queries @ vectors.T if len(present) else np.zeros((len(queries), 0), np.float32)
        return [top_k(present, row, k) for row in scores]
    admitted = set(allowed)
    results: list[Hits] = []
    for query in queries:
        depth = max(4 * k, 100)
        while True:
            hits = opened.search(query[None], depth)[0]
            kept = [(doc_id, score) for doc_id, score in hits if doc_id in admitted]
            if len(kept) >= k or depth >= opened.size():
                results.append(kept[:k])
                break
            depth *= 4
    return results
