"""The first stage of every ranking: gather a query's candidates, then rank them under one setting.

Every list pairank serves, evaluates, calibrates or gates comes from here (docs/concepts/ranking.md):
`rank`, duplicates, compare, evaluations, calibrate-ranking and the retraining gate gather a pool with
`gather` (or take the caller's candidates with `given`) and order it with `rank_pool`, over the live
store (app/search/first_stage.py) or over vectors in memory (`MatrixCorpus`: the gate's candidate
model, inline evaluations, benchmarks). The same query at the same depth gets the same list everywhere.

Gathering: each side the ranking reads contributes its own top `max(depth, CANDIDATES)`: the dense
side from the vector index (or exactly among the documents a filter admits), the lexical side from BM25
(documents sharing a term with the query, restricted exactly to the admitted ones). The union is scored
on both sides, except a dense-only pool, which needs no BM25. Ranking: `dense` keeps the dense side's
documents in cosine order; `lexical` the lexical side's in BM25 order (the cosine breaks ties); `hybrid`
fuses the whole pool (indexes/fusion.py). Given candidates (a thread's answers, judged documents) are
all ranked, whatever they share with the query. Equal scores fall back to the smaller id.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from indexes.fusion import Hit, RankingSetting, fuse_linear, fuse_rrf
from indexes.lexical import LexicalIndex, Matches

__all__ = [
    "BOTH",
    "CANDIDATES",
    "DENSE",
    "LEXICAL",
    "Hit",
    "Hits",
    "MatrixCorpus",
    "Pool",
    "Searchable",
    "gather",
    "given",
    "rank_pool",
    "sides_of",
    "without",
]

CANDIDATES = 100  # each side's share of a pool: its top max(depth, CANDIDATES)
DENSE, LEXICAL = "dense", "lexical"
BOTH = frozenset({DENSE, LEXICAL})  # a pool every setting can rank (compare, calibration, evaluation grids)
Hits = list[tuple[int, float]]  # (document id, score), best first


@dataclass(frozen=True)
class Pool:
    """One query's candidates with their scores, and which side found each."""

    ids: list[int]
    dense: list[float]  # the cosine of each candidate
    lexical: list[float] | None  # its BM25 score; None for a pool gathered for dense ranking only
    dense_side: frozenset[int]  # the candidates the dense side found (all of them, when given)
    lexical_side: frozenset[int]


class Searchable(Protocol):
    """A corpus as a first stage reads it: the vector index, the stored vectors and BM25."""

    @property
    def lexical(self) -> LexicalIndex:
        """The corpus's BM25 index."""

    def dense_hits(self, vectors: np.ndarray, n: int, allowed: np.ndarray | None) -> list[Hits]:
        """Top n (id, cosine) per query row, among `allowed` (sorted ids) when given."""

    def cosines(self, vector: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """The cosine of each document that still has a vector (a deleted one is left out)."""


def sides_of(setting: RankingSetting) -> frozenset[str]:
    """The sides a setting ranks by: dense, lexical, or both for hybrid."""
    return BOTH if setting.mode == "hybrid" else frozenset({setting.mode})


def _restricted(found: Matches, allowed: np.ndarray | None) -> Matches:
    if allowed is None:
        return found
    keep = np.isin(found.ids, allowed, assume_unique=True)
    return Matches(found.ids[keep], found.scores[keep])


def gather(
    corpus: Searchable,
    queries: Sequence[str],
    vectors: np.ndarray,
    depth: int,
    sides: Collection[str],
    allowed: Collection[int] | None = None,
    languages: Sequence[str | None] | None = None,
) -> list[Pool]:
    """Each query's pool for ranking `depth` deep by the given sides (module docstring); `allowed`:
    the ids a metadata filter admits (None: every document); `languages`: each query's, the one BM25
    analyses it in (None: the corpus's)."""
    n = max(depth, CANDIDATES)
    admitted = np.unique(np.fromiter(allowed, np.int64)) if allowed is not None else None
    dense_hits = corpus.dense_hits(vectors, n, admitted) if DENSE in sides else [[] for _ in queries]
    codes = languages if languages is not None else [None] * len(queries)
    pools = []
    for query, vector, hits, code in zip(queries, vectors, dense_hits, codes, strict=True):
        found = _restricted(corpus.lexical.match(query, code), admitted) if LEXICAL in sides else None
        lexical_hits = found.best(n) if found is not None else []
        pools.append(_scored(corpus, query, vector, hits, lexical_hits, found))
    return pools


def given(
    corpus: Searchable,
    query: str,
    vector: np.ndarray,
    ids: Sequence[int],
    lexical: bool,
    language: str | None = None,
) -> Pool:
    """A pool of the caller's candidates (each ranked, whatever it shares with the query); BM25 scored
    (the query analysed in `language`, None: the corpus's) when `lexical`. A candidate deleted meanwhile
    (no vector) is left out."""
    unique = list(dict.fromkeys(ids))
    cosines = corpus.cosines(vector, unique)
    kept = [doc_id for doc_id in unique if doc_id in cosines]
    bm25 = corpus.lexical.match(query, language).of(kept) if lexical else None
    everyone = frozenset(kept)
    return Pool(
        kept,
        [cosines[d] for d in kept],
        [bm25[d] for d in kept] if bm25 is not None else None,
        everyone,
        everyone,
    )


def _scored(
    corpus: Searchable,
    query: str,
    vector: np.ndarray,
    dense_hits: Hits,
    lexical_hits: Hits,
    found: Matches | None,
) -> Pool:
    """The union of both sides' hits, each scored on both (one BM25 pass serves every candidate)."""
    dense = dict(dense_hits)
    ids = list(dict.fromkeys([*dense, *(d for d, _ in lexical_hits)]))
    missing = [d for d in ids if d not in dense]
    if missing:
        dense.update(corpus.cosines(vector, missing))
    ids = [d for d in ids if d in dense]  # a lexical hit deleted meanwhile has no vector
    bm25 = found.of(ids) if found is not None else None
    return Pool(
        ids,
        [dense[d] for d in ids],
        [bm25[d] for d in ids] if bm25 is not None else None,
        frozenset(d for d, _ in dense_hits),
        frozenset(d for d, _ in lexical_hits),
    )


def without(pool: Pool, left_out: Collection[int]) -> Pool:
    """The pool as if `left_out` were not in the corpus (the open-world protocol's absent claim)."""
    if not left_out:
        return pool
    gone = set(left_out)
    keep = [i for i, d in enumerate(pool.ids) if d not in gone]
    return Pool(
        [pool.ids[i] for i in keep],
        [pool.dense[i] for i in keep],
        [pool.lexical[i] for i in keep] if pool.lexical is not None else None,
        pool.dense_side - gone,
        pool.lexical_side - gone,
    )


def rank_pool(pool: Pool, setting: RankingSetting, k: int) -> list[Hit]:
    """The k best of the pool under one setting, scored as `rank` answers: dense the cosine (no
    components), lexical the BM25 score, hybrid the fused score (both with their components)."""
    side = (
        pool.dense_side if setting.mode == DENSE else pool.lexical_side if setting.mode == LEXICAL else None
    )
    rows = [i for i, d in enumerate(pool.ids) if side is None or d in side]
    ids = np.array([pool.ids[i] for i in rows], dtype=np.int64)
    dense = np.array([pool.dense[i] for i in rows], dtype=np.float64)
    if setting.mode == DENSE:
        order = np.lexsort((ids, -dense))[:k]
        return [Hit(int(ids[i]), float(dense[i])) for i in order]
    if pool.lexical is None:
        raise ValueError(f"a {setting.mode} ranking needs a pool gathered with BM25 scores")
    lexical = np.array([pool.lexical[i] for i in rows], dtype=np.float64)
    if setting.mode == LEXICAL:
        order = np.lexsort((ids, -dense, -lexical))[:k]
        return [Hit(int(ids[i]), float(lexical[i]), float(dense[i]), float(lexical[i])) for i in order]
    keys = ids.tolist()
    both = (dict(zip(keys, dense.tolist(), strict=True)), dict(zip(keys, lexical.tolist(), strict=True)))
    return fuse_rrf(*both, k) if setting.fusion == "rrf" else fuse_linear(*both, setting.alpha, k)


class MatrixCorpus:
    """A corpus held in memory: its vectors as rows (the ids are row numbers), searched exactly, and its
    BM25 index; the first stage of a model that serves no index yet (the gate's candidate), of inline
    documents, and of the benchmarks."""

    _QUERY_CHUNK = 256  # query rows scored at once: a chunk's score matrix stays small

    def __init__(self, matrix: np.ndarray, texts: Sequence[str]) -> None:
        self.matrix = np.asarray(matrix, dtype=np.float32)
        self._lexical = LexicalIndex()
        self._lexical.apply(list(enumerate(texts)))

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index over the texts."""
        return self._lexical

    def dense_hits(self, vectors: np.ndarray, n: int, allowed: np.ndarray | None) -> list[Hits]:
        """Exact top n per query by cosine (ties: the smaller row)."""
        rows = allowed if allowed is not None else np.arange(len(self.matrix))
        matrix = self.matrix[rows]
        results: list[Hits] = []
        for start in range(0, len(vectors), self._QUERY_CHUNK):
            scores = np.asarray(vectors[start : start + self._QUERY_CHUNK], np.float32) @ matrix.T
            for row in scores:
                count = min(n, len(rows))
                top = np.argpartition(-row, count - 1)[:count] if count else np.zeros(0, np.int64)
                best = top[np.lexsort((rows[top], -row[top]))]
                results.append([(int(rows[i]), float(row[i])) for i in best])
        return results

    def cosines(self, vector: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """The cosine of each row."""
        chosen = np.asarray(ids, dtype=np.int64)
        scores = (self.matrix[chosen] @ np.asarray(vector, np.float32)).tolist() if len(chosen) else []
        return dict(zip(chosen.tolist(), scores, strict=True))
