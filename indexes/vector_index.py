"""One corpus's vectors for one model: a sealed, memory-mapped base plus an in-memory delta.

Documents are addressed by their database id (int64). The base comes from a snapshot: one contiguous
float32 matrix, its ids, and optionally an ANN structure over its rows, all memory-mapped read-only so
workers on one host share the page cache. Changes since the snapshot live in the delta (appended rows;
a replaced or deleted base row is only marked dead). Every change carries the change-log sequence number
that caused it, so a checkpoint can seal the state up to a high-water mark and keep what came after.

Exact search is a plain matrix product (for one query it costs what reading the matrix costs, with no
thread-pool start-up); ANN search skips dead rows with a bitmap selector. Searches share a lock; writes
take it alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from indexes.ann import Structure, ann_search
from indexes.combiner import Hits, SearchCombiner
from indexes.sealed import SealedRows
from indexes.spec import IndexSpec
from pairank.locks import SharedExclusiveLock

_INITIAL_CAPACITY = 64


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Return float32, C-contiguous, L2-normalized rows (zero rows stay zero)."""
    matrix = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.maximum(norms, 1e-12))


@dataclass
class Base:
    """The sealed part: rows of a snapshot (vectors and ids may be memory-mapped) and which are alive."""

    vectors: np.ndarray
    ids: np.ndarray
    alive: np.ndarray
    sorted_ids: np.ndarray
    order: np.ndarray
    ann: Structure | None = None
    structure: str = "flat"
    source: Path | None = None  # the snapshot generation these rows were mapped from
    refine: np.ndarray | None = None  # float16 copy of `vectors` (memory-mapped) when the spec refines

    @classmethod
    def empty(cls, dimension: int) -> Base:
        """A base with no rows."""
        no_ids = np.zeros(0, dtype=np.int64)
        return cls(np.zeros((0, dimension), np.float32), no_ids, np.zeros(0, bool), no_ids, no_ids)

    def rows_of(self, doc_id: int) -> np.ndarray:
        """Every base row holding this id (alive or not)."""
        left = np.searchsorted(self.sorted_ids, doc_id, side="left")
        right = np.searchsorted(self.sorted_ids, doc_id, side="right")
        return np.asarray(self.order[left:right])


@dataclass
class Delta:
    """Rows added since the snapshot, with the sequence number of the change that wrote each."""

    dimension: int
    vectors: np.ndarray = field(init=False)
    ids: np.ndarray = field(init=False)
    seqs: np.ndarray = field(init=False)
    alive: np.ndarray = field(init=False)
    size: int = 0
    row_of: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.vectors = np.zeros((_INITIAL_CAPACITY, self.dimension), np.float32)
        self.ids = np.zeros(_INITIAL_CAPACITY, np.int64)
        self.seqs = np.zeros(_INITIAL_CAPACITY, np.int64)
        self.alive = np.zeros(_INITIAL_CAPACITY, bool)

    def append(self, doc_id: int, vector: np.ndarray, seq: int) -> None:
        """Add a row (growing the arrays geometrically, so appends cost O(1) amortized)."""
        if self.size == len(self.ids):
            capacity = 2 * len(self.ids)
            self.vectors = np.resize(self.vectors, (capacity, self.dimension))
            self.ids, self.seqs, self.alive = (
                np.resize(a, capacity) for a in (self.ids, self.seqs, self.alive)
            )
            self.alive[self.size :] = False
        row = self.size
        self.vectors[row], self.ids[row], self.seqs[row], self.alive[row] = vector, doc_id, seq, True
        self.row_of[doc_id] = row
        self.size += 1


class VectorIndex:
    """Search and update one corpus's vectors; ids are database document ids."""

    def __init__(self, dimension: int, spec: IndexSpec | None = None, base: Base | None = None) -> None:
        self.dimension = dimension
        self.spec = spec or IndexSpec()
        self.base = base or Base.empty(dimension)
        self.delta = Delta(dimension)
        # Deletes since the snapshot of ids that were in the base: id -> seq (replayed onto a new base).
        self.deleted: dict[int, int] = {}
        self.hwm = 0
        self.dead_in_base = int(len(self.base.alive) - self.base.alive.sum())
        self._lock = SharedExclusiveLock()
        # Weakly: a bound method would make index <-> combiner a cycle, and an index replaced by a
        # checkpoint would keep its generation's files mapped (4 descriptors and its pages, per
        # checkpoint) until the cyclic collector happened to run: found by the soak benchmark.
        # So the combiner is reached only through `search_one`, whose frame holds the index while a
        # search runs: a checkpoint that swaps the index mid-search then cannot free it under the search.
        search = weakref.WeakMethod(self.search)
        self._combined = SearchCombiner(lambda vectors, k: search()(vectors, k))  # type: ignore[misc]

    def search_one(self, vector: np.ndarray, k: int) -> Hits:
        """Top k for one query; concurrent single queries share one matrix product (SearchCombiner)."""
        return self._combined.search(vector, k)

    def __len__(self) -> int:
        with self._lock.shared():
            return int(self.base.alive.sum()) + len(self.delta.row_of)

    def __contains__(self, doc_id: object) -> bool:
        with self._lock.shared():
            return isinstance(doc_id, int) and self._locate(doc_id) is not None

    def _locate(self, doc_id: int) -> tuple[str, int] | None:
        row = self.delta.row_of.get(doc_id)
        if row is not None:
            return "delta", row
        for base_row in self.base.rows_of(doc_id).tolist():
            if self.base.alive[base_row]:
                return "base", int(base_row)
        return None

    def _kill(self, doc_id: int) -> bool:
        place = self._locate(doc_id)
        if place is None:
            return False
        part, row = place
        if part == "delta":
            self.delta.alive[row] = False
            del self.delta.row_of[doc_id]
        else:
            self.base.alive[row] = False
            self.dead_in_base += 1
        return True

    def apply(
        self,
        upserts: Sequence[tuple[int, np.ndarray, int]] = (),
        deletes: Sequence[tuple[int, int]] = (),
        hwm: int | None = None,
    ) -> None:
        """Apply (id, vector, seq) upserts and (id, seq) deletes in seq order; then raise the mark."""
        operations: list[tuple[int, int, int, np.ndarray | None]]
        operations = [(seq, 0, doc_id, None) for doc_id, seq in deletes]
        operations += [(seq, 1, doc_id, vector) for doc_id, vector, seq in upserts]
        operations.sort(key=lambda op: (op[0], op[1]))  # a delete and an upsert at one seq: delete first
        with self._lock.exclusive():
            for seq, _, doc_id, vector in operations:
                if self._kill(doc_id):
                    # The version that existed before `seq` is gone: a snapshot taken earlier holds it,
                    # so rebasing onto that snapshot must drop it again.
                    self.deleted[doc_id] = max(seq, self.deleted.get(doc_id, 0))
                if vector is None:
                    continue
                row = normalize_rows(np.asarray(vector).reshape(1, -1))[0]
                if row.shape[0] != self.dimension:
                    raise ValueError(f"vector has dimension {row.shape[0]}, index has {self.dimension}")
                self.delta.append(doc_id, row, seq)
            if hwm is not None:
                self.hwm = max(self.hwm, hwm)

    def changes_after(self, seq: int) -> tuple[list[tuple[int, np.ndarray, int]], list[tuple[int, int]]]:
        """Live delta rows and base deletions written after `seq` (what a new snapshot at `seq` lacks)."""
        with self._lock.shared():
            delta = self.delta
            rows = [r for r in delta.row_of.values() if delta.seqs[r] > seq]
            upserts = [(int(delta.ids[r]), delta.vectors[r].copy(), int(delta.seqs[r])) for r in rows]
            deletes = [(doc_id, s) for doc_id, s in self.deleted.items() if s > seq]
            return upserts, deletes

    def sealed_rows(self, compact: bool) -> SealedRows:
        """What a new snapshot holds, with rows appended after the old base's (`SealedRows`).

        Compacted, it keeps live rows only; otherwise it keeps every base row (dead ones marked) and
        appends the live delta rows, so an ANN structure over the old base can be extended, not rebuilt.
        Only what writes change is copied here, under the lock; the base's rows are read after it.
        """
        with self._lock.shared():
            base, delta = self.base, self.delta
            rows = sorted(delta.row_of.values())
            keep = base.alive.copy() if compact and not base.alive.all() else None
            kept = len(base.alive) if keep is None else int(keep.sum())
            if compact:
                alive = np.ones(kept + len(rows), dtype=bool)
            else:
                alive = np.concatenate([base.alive, np.ones(len(rows), dtype=bool)])
            return SealedRows(
                base.vectors, base.ids, keep, np.asarray(delta.vectors[rows], np.float32),
                delta.ids[rows].astype(np.int64), alive, self.hwm,
            )  # fmt: skip

    def dead_fraction(self) -> float:
        """Share of base rows that are dead (superseded or deleted)."""
        with self._lock.shared():
            return self.dead_in_base / len(self.base.alive) if len(self.base.alive) else 0.0

    def vectors(self, doc_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of the given ids, in order (KeyError names the first missing id)."""
        present, vectors = self.present(doc_ids)
        if len(present) < len(doc_ids):
            missing = set(doc_ids).difference(present)
            raise KeyError(next(doc_id for doc_id in doc_ids if doc_id in missing))
        return vectors

    def present(self, doc_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """The ids with a live row and their vectors, in the given order (absent ids are left out).

        One vectorized lookup for all ids: hybrid ranking asks for a hundred candidates per query, and
        one binary search per id over the memory-mapped ids cost more than the search itself.
        """
        with self._lock.shared():
            ids = np.asarray(doc_ids, dtype=np.int64).reshape(-1)
            base_rows = self._live_base_rows(ids)
            delta_rows = np.fromiter((self.delta.row_of.get(int(i), -1) for i in ids), np.int64, len(ids))
            found = (delta_rows >= 0) | (base_rows >= 0)
            out = np.zeros((int(found.sum()), self.dimension), np.float32)
            in_delta = delta_rows[found] >= 0  # a delta row supersedes the base
            if in_delta.any():
                out[in_delta] = self.delta.vectors[delta_rows[found][in_delta]]
            if (~in_delta).any():
                out[~in_delta] = np.asarray(self.base.vectors)[base_rows[found][~in_delta]]
            return ids[found].tolist(), out

    def _live_base_rows(self, ids: np.ndarray) -> np.ndarray:
        """Per id, the base row holding it alive, or -1."""
        rows = np.full(len(ids), -1, np.int64)
        sorted_ids = np.asarray(self.base.sorted_ids)
        if not len(sorted_ids) or not len(ids):
            return rows
        order, alive = np.asarray(self.base.order), self.base.alive
        left = np.searchsorted(sorted_ids, ids, side="left")
        right = np.searchsorted(sorted_ids, ids, side="right")
        single = np.flatnonzero(right - left == 1)
        candidates = order[left[single]]
        rows[single] = np.where(alive[candidates], candidates, -1)
        for position in np.flatnonzero(right - left > 1):  # an id held by several rows: one is alive
            for row in order[left[position] : right[position]].tolist():
                if alive[row]:
                    rows[position] = row
                    break
        return rows

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """Top-k (id, cosine) per query, best first, over live rows only."""
        matrix = normalize_rows(queries)
        with self._lock.shared():
            scores, ids = self._base_hits(matrix, k)
            delta = self.delta
            if delta.row_of:
                rows = np.fromiter(delta.row_of.values(), np.int64, len(delta.row_of))
                delta_scores = delta.vectors[rows] @ matrix.T
                scores = np.concatenate([scores, delta_scores.T], axis=1)
                ids = np.concatenate(
                    [ids, np.broadcast_to(delta.ids[rows], (len(matrix), len(rows)))], axis=1
                )
        return [_top(score_row, id_row, k) for score_row, id_row in zip(scores, ids, strict=True)]

    def _base_hits(self, matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        base = self.base
        if not len(base.ids):
            return np.zeros((len(matrix), 0), np.float32), np.zeros((len(matrix), 0), np.int64)
        alive = base.alive if self.dead_in_base else None  # a mask only when some rows died
        if base.ann is not None:
            depth = min(k, len(base.ids))
            scores, rows = ann_search(base.ann, self.spec, matrix, depth, alive, base.refine)
            found = rows >= 0
            ids = np.where(found, base.ids[np.maximum(rows, 0)], -1)
            return np.where(found, scores, -np.inf).astype(np.float32), ids
        scores = (matrix @ np.asarray(base.vectors).T).astype(np.float32, copy=False)
        if alive is not None:
            scores[:, ~alive] = -np.inf
        # A few more than k, so that documents tied with the k-th reach _top, which breaks ties by id.
        keep = min(k + TIE_MARGIN, scores.shape[1])
        top = np.argpartition(-scores, keep - 1, axis=1)[:, :keep]
        return np.take_along_axis(scores, top, axis=1), base.ids[top]


TIE_DECIMALS = 6  # cosines equal to this many decimals are a tie
TIE_MARGIN = 16  # extra base candidates per query, for ties at the k-th place


def _top(scores: np.ndarray, ids: np.ndarray, k: int) -> list[tuple[int, float]]:
    valid = np.isfinite(scores) & (ids >= 0)
    scores, ids = scores[valid], ids[valid]
    keep = min(k, len(scores))
    if keep == 0:
        return []
    # Best first; equal scores by id so that results never depend on storage order. Equal means equal
    # to TIE_DECIMALS: the same vector stored in the base and in the delta (or in two rows of one
    # matrix product) can score a few ulps apart, and must not reorder results.
    rounded = np.round(scores.astype(np.float64), TIE_DECIMALS)
    kth = np.partition(-rounded, keep - 1)[keep - 1]
    tied_or_better = np.flatnonzero(-rounded <= kth)
    ordered = sorted(tied_or_better.tolist(), key=lambda i: (-float(rounded[i]), int(ids[i])))[:keep]
    return [(int(ids[i]), float(scores[i])) for i in ordered]
