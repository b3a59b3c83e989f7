"""The live corpus as the first stage reads it (indexes/first_stage.py): the serving store's vector index
(or an exact search among the documents a filter admits), its stored vectors and its BM25 index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.search.filtered import filtered_search
from app.stores.port import CorpusVectors, VectorStore
from indexes.first_stage import Hits
from indexes.lexical import LexicalIndex


class LiveCorpus:
    """One opened corpus of a vector store, for `gather` and `given` (indexes/first_stage.py)."""

    def __init__(self, store: VectorStore, opened: CorpusVectors) -> None:
        self.store = store
        self.opened = opened

    @property
    def lexical(self) -> LexicalIndex:
        """The corpus's BM25 index."""
        return self.opened.lexical

    def dense_hits(self, vectors: np.ndarray, n: int, allowed: np.ndarray | None) -> list[Hits]:
        """Top n (id, cosine) per query from the vector index, or among `allowed` (filtered_search)."""
        if allowed is not None:
            return filtered_search(self.store, self.opened, vectors, n, allowed.tolist())
        if len(vectors) == 1:  # concurrent single queries may be answered together (search_one)
            return [self.opened.search_one(vectors[0], n)]
        return self.opened.search(vectors, n)

    def cosines(self, vector: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """The cosine of each document with a stored vector (one deleted meanwhile is left out)."""
        if not ids:
            return {}
        present, vectors = self.store.present_vectors(self.opened, ids)
        return dict(zip(present, (np.asarray(vectors) @ vector).tolist(), strict=True))
