"""Two rankings of the same query over one candidate pool: two settings, or the serving model and another.

A query's pool is what `rank` gathers for a hybrid ranking: the serving model's top CANDIDATES by cosine
and BM25's top CANDIDATES, each scored on both sides. Every setting ranks that pool exactly as `rank`
would rank the corpus (for k up to CANDIDATES), so comparing two settings costs one search. Another
model re-scores the pool's cosines with its own vectors: what it would return once activated, except a
document that neither the serving model nor BM25 puts in its top CANDIDATES.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from app.search.hybrid import CANDIDATES, search_corpus
from app.stores.port import CorpusVectors, VectorStore
from indexes.fusion import FusedHit, RankingSetting, fuse

_BOTH_SIDES = RankingSetting("hybrid", 0.5)  # any hybrid setting: the pool is the union of both sides


@dataclass(frozen=True)
class Pool:
    """One query's candidates (database ids) with their cosine and BM25 scores."""

    ids: list[int]
    dense: list[float]
    lexical: list[float]


def gather_pools(
    store: VectorStore, opened: CorpusVectors, queries: Sequence[str], vectors: np.ndarray
) -> list[Pool]:
    """Each query's pool from the live indexes; the dense side of every query in one search."""
    if not queries:
        return []
    dense_hits = (
        opened.search(vectors, CANDIDATES)
        if len(queries) > 1
        else [opened.search_one(vectors[0], CANDIDATES)]
    )
    pools = []
    for query, vector, hits in zip(queries, vectors, dense_hits, strict=True):
        found = search_corpus(store, opened, query, vector, 2 * CANDIDATES, _BOTH_SIDES, hits)
        pools.append(Pool([h.doc_id for h in found], [h.dense for h in found], [h.lexical for h in found]))
    return pools


def rank_pool(pool: Pool, how: RankingSetting, k: int) -> list[FusedHit]:
    """The k best of the pool under one setting, scored as `rank` scores them (dense: the cosine;
    lexical: BM25, and only documents sharing a term with the query)."""
    hits = fuse(dict(zip(pool.ids, pool.dense, strict=True)), dict(zip(pool.ids, pool.lexical, strict=True)),
                how, len(pool.ids))  # fmt: skip
    if how.mode == "lexical":
        hits = [hit for hit in hits if hit.lexical > 0]
    elif how.mode == "dense":
        hits = [replace(hit, score=hit.dense) for hit in hits]
    return hits[:k]
