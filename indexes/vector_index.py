"""A Faiss inner-product index over L2-normalized vectors, addressed by string document ids.

Documents get stable int64 ids inside Faiss (`IndexIDMap2`), so adds, updates and removals are
incremental. Index types that cannot remove (HNSW) keep removed ids as tombstones that searches
filter out; the index is rebuilt from the kept vectors once tombstones pile up.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import faiss
import numpy as np

METRIC = "inner_product"
_REBUILD_DEAD_FRACTION = 0.2


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Return float32, C-contiguous, L2-normalized rows (zero rows stay zero)."""
    matrix = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.maximum(norms, 1e-12))


class VectorIndex:
    """Thread-safe string-id vector index with exact stored vectors and a Faiss search structure."""

    def __init__(self, dimension: int, factory: str = "Flat") -> None:
        self.dimension = dimension
        self.factory = factory
        self._lock = threading.RLock()
        self._faiss = self._new_faiss()
        self._int_of: dict[str, int] = {}
        self._doc_of: dict[int, str] = {}
        self._hash_of: dict[str, str] = {}
        self._vector_of: dict[int, np.ndarray] = {}
        self._dead: set[int] = set()
        self._next_id = 0

    def _new_faiss(self) -> faiss.Index:
        inner = faiss.index_factory(self.dimension, self.factory, faiss.METRIC_INNER_PRODUCT)
        return faiss.IndexIDMap2(inner)

    def __len__(self) -> int:
        with self._lock:
            return len(self._int_of)

    def __contains__(self, doc_id: object) -> bool:
        with self._lock:
            return doc_id in self._int_of

    def hashes(self) -> dict[str, str]:
        """Document id -> text hash of every indexed document."""
        with self._lock:
            return dict(self._hash_of)

    def doc_ids(self) -> list[str]:
        """Indexed document ids in insertion order."""
        with self._lock:
            return [self._doc_of[i] for i in sorted(self._doc_of)]

    def upsert(self, doc_ids: Sequence[str], text_hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Add documents, replacing the vectors of ids already present."""
        if not len(doc_ids) == len(text_hashes) == len(vectors):
            raise ValueError("doc_ids, text_hashes and vectors must have the same length")
        if len(doc_ids) == 0:
            return
        matrix = normalize_rows(vectors)
        if matrix.shape[1] != self.dimension:
            raise ValueError(f"vectors have dimension {matrix.shape[1]}, index has {self.dimension}")
        with self._lock:
            self._remove_locked([d for d in doc_ids if d in self._int_of])
            if not self._faiss.is_trained:
                self._train_locked(matrix)
            new_ids = np.arange(self._next_id, self._next_id + len(doc_ids), dtype=np.int64)
            self._next_id += len(doc_ids)
            self._faiss.add_with_ids(matrix, new_ids)
            for int_id, doc_id, digest, row in zip(
                new_ids.tolist(), doc_ids, text_hashes, matrix, strict=True
            ):
                self._int_of[doc_id] = int_id
                self._doc_of[int_id] = doc_id
                self._hash_of[doc_id] = digest
                self._vector_of[int_id] = row

    def _train_locked(self, matrix: np.ndarray) -> None:
        # Trained factories (IVF, PQ) learn from the first batch plus what is already stored.
        stored = self._stored_matrix_locked()
        sample = np.vstack([stored, matrix]) if len(stored) else matrix
        self._faiss.train(sample)

    def remove(self, doc_ids: Sequence[str]) -> int:
        """Remove documents by id; returns how many were present."""
        with self._lock:
            return self._remove_locked([d for d in doc_ids if d in self._int_of])

    def _remove_locked(self, doc_ids: Sequence[str]) -> int:
        if not doc_ids:
            return 0
        int_ids = [self._int_of.pop(d) for d in doc_ids]
        for doc_id, int_id in zip(doc_ids, int_ids, strict=True):
            del self._doc_of[int_id]
            del self._hash_of[doc_id]
            del self._vector_of[int_id]
        try:
            self._faiss.remove_ids(np.asarray(int_ids, dtype=np.int64))  # type: ignore[arg-type]  # numpy overload
        except RuntimeError:
            # HNSW and friends cannot remove: filter at search time, rebuild when too many are dead.
            self._dead.update(int_ids)
            if len(self._dead) > _REBUILD_DEAD_FRACTION * max(1, self._faiss.ntotal):
                self._rebuild_locked()
        return len(int_ids)

    def _stored_matrix_locked(self) -> np.ndarray:
        if not self._vector_of:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._vector_of[i] for i in sorted(self._vector_of)])

    def _rebuild_locked(self) -> None:
        self._faiss = self._new_faiss()
        self._dead.clear()
        if not self._vector_of:
            return
        int_ids = np.asarray(sorted(self._vector_of), dtype=np.int64)
        matrix = self._stored_matrix_locked()
        if not self._faiss.is_trained:
            self._faiss.train(matrix)
        self._faiss.add_with_ids(matrix, int_ids)

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Top-k (doc id, cosine) per query, best first."""
        matrix = normalize_rows(queries)
        with self._lock:
            live = len(self._int_of)
            if live == 0:
                return [[] for _ in range(len(matrix))]
            fetch = min(k + len(self._dead), self._faiss.ntotal)
            scores, ids = self._faiss.search(matrix, fetch)
            results: list[list[tuple[str, float]]] = []
            for score_row, id_row in zip(scores, ids, strict=True):
                hits = [
                    (self._doc_of[int(i)], float(s))
                    for s, i in zip(score_row, id_row, strict=True)
                    if i >= 0 and int(i) in self._doc_of
                ]
                results.append(hits[:k])
            return results

    def vectors(self, doc_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of the given documents (KeyError names the first missing id)."""
        with self._lock:
            missing = [d for d in doc_ids if d not in self._int_of]
            if missing:
                raise KeyError(missing[0])
            if not doc_ids:
                return np.zeros((0, self.dimension), dtype=np.float32)
            return np.vstack([self._vector_of[self._int_of[d]] for d in doc_ids])

    def snapshot(self) -> tuple[faiss.Index, list[int], list[str], list[str], np.ndarray, list[int], int]:
        """A consistent copy of the state for persistence (see indexes.bundle)."""
        with self._lock:
            int_ids = sorted(self._vector_of)
            return (
                faiss.clone_index(self._faiss),
                int_ids,
                [self._doc_of[i] for i in int_ids],
                [self._hash_of[self._doc_of[i]] for i in int_ids],
                self._stored_matrix_locked(),
                sorted(self._dead),
                self._next_id,
            )

    @classmethod
    def restore(
        cls,
        dimension: int,
        factory: str,
        faiss_index: faiss.Index,
        int_ids: Sequence[int],
        doc_ids: Sequence[str],
        text_hashes: Sequence[str],
        vectors: np.ndarray,
        dead: Sequence[int],
        next_id: int,
    ) -> VectorIndex:
        """Rebuild an index object from persisted parts, without re-encoding anything."""
        index = cls(dimension, factory)
        index._faiss = faiss_index
        for int_id, doc_id, digest, row in zip(int_ids, doc_ids, text_hashes, vectors, strict=True):
            index._int_of[doc_id] = int(int_id)
            index._doc_of[int(int_id)] = doc_id
            index._hash_of[doc_id] = digest
            index._vector_of[int(int_id)] = np.asarray(row, dtype=np.float32)
        index._dead = {int(i) for i in dead}
        index._next_id = int(next_id)
        if faiss_index.ntotal != len(index._vector_of) + len(index._dead):
            raise ValueError("faiss index size does not match the stored ids")
        return index
