"""A process's index of an inbox's cluster centroids: the nearest joinable cluster of an item in one
matrix product over the centroids (never a rescan of items), kept current from the clusters changed
since its mark (`InboxCluster.seq`), so every process clusters alike from the one database."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.db.inbox_models import InboxCluster

JOINABLE_STATUSES = ("open", "needs_check", "answered")  # a dismissed cluster takes no new items


def unit(vector: np.ndarray) -> np.ndarray:
    """The vector scaled to length 1 (a zero vector stays zero)."""
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def to_bytes(vector: np.ndarray) -> bytes:
    """A vector as the database stores it (float32 bytes)."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(blob: bytes | None) -> np.ndarray | None:
    """A stored vector, or None."""
    return None if blob is None else np.frombuffer(blob, dtype=np.float32).copy()


def match_key(match: dict[str, object] | None) -> str | None:
    """`corpus/id` of a cluster's match, None without one."""
    return f"{match['corpus']}/{match['id']}" if match else None


def lead_key(
    decision: str | None,
    match: dict[str, Any] | None,
    candidates: Sequence[dict[str, Any]],
    floor: float,
) -> str | None:
    """`corpus/id` of the check a text or cluster is about, as far as the matches know: its auto-match,
    else its most probable candidate when that reaches `floor`; None otherwise."""
    if decision == "match" and match:
        return match_key(match)
    best = max(candidates, key=lambda c: c.get("probability") or 0.0, default=None)
    if best is None or (best.get("probability") or 0.0) < floor:
        return None
    return f"{best['corpus']}/{best['id']}"


@dataclass
class CentroidIndex:
    """Unit centroids of an inbox's clusters for one model, with which of them may take items."""

    model: str
    floor: float = 1.0  # the probability from which a leading candidate joins items (lead_key)
    mark: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)
    ids: list[int] = field(default_factory=list)
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    joinable: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    row_of: dict[int, int] = field(default_factory=dict)
    matched: dict[str, int] = field(default_factory=dict)  # lead key -> the first joinable cluster
    key_of: dict[int, str] = field(default_factory=dict)  # cluster -> its lead key

    def apply(self, clusters: Iterable[InboxCluster]) -> None:
        """Take clusters' current centroids, statuses and matches (new ones appended in id order)."""
        for cluster in sorted(clusters, key=lambda c: c.id):
            vector = from_bytes(cluster.vector_sum)
            usable = vector is not None and cluster.model == self.model and cluster.size > 0
            self.put(
                cluster.id,
                unit(vector) if usable and vector is not None else None,
                usable and cluster.status in JOINABLE_STATUSES,
                lead_key(cluster.decision, cluster.match, cluster.candidates, self.floor),
            )
            self.mark = max(self.mark, int(cluster.seq))

    def put(self, cluster_id: int, centroid: np.ndarray | None, joinable: bool, key: str | None) -> None:
        """Set one cluster's row (added when new)."""
        row = self.row_of.get(cluster_id)
        if row is None:
            if centroid is None and not self.ids and self.matrix.shape[1] == 0:
                return  # nothing to index yet: the dimension is unknown
            row = self._append(cluster_id, centroid)
        if centroid is not None:
            self.matrix[row] = centroid
        else:
            self.matrix[row] = 0.0
        self.joinable[row] = joinable and centroid is not None
        stale = self.key_of.pop(cluster_id, None)
        if stale is not None and self.matched.get(stale) == cluster_id and (stale != key or not joinable):
            del self.matched[stale]
        if key is not None and joinable:
            self.key_of[cluster_id] = key
            current = self.matched.get(key)
            if current is None or cluster_id < current:
                self.matched[key] = cluster_id

    def _append(self, cluster_id: int, centroid: np.ndarray | None) -> int:
        size = len(self.ids)
        dimension = self.matrix.shape[1] or (len(centroid) if centroid is not None else 0)
        if size == self.matrix.shape[0] or self.matrix.shape[1] != dimension:
            grown = np.zeros((max(64, 2 * size), dimension), dtype=np.float32)
            if self.matrix.shape[1] == dimension:
                grown[:size] = self.matrix[:size]
            self.matrix = grown
            joinable = np.zeros(grown.shape[0], dtype=bool)
            joinable[:size] = self.joinable[:size]
            self.joinable = joinable
        self.ids.append(cluster_id)
        self.row_of[cluster_id] = size
        return size

    def nearest(self, vector: np.ndarray) -> tuple[int | None, float]:
        """The joinable cluster closest to a unit vector and its cosine (the lowest id on a tie)."""
        size = len(self.ids)
        if size == 0:
            return None, -1.0
        scores = self.matrix[:size] @ vector.astype(np.float32)
        scores = np.where(self.joinable[:size], scores, -np.inf)
        row = int(np.argmax(scores))
        best = float(scores[row])
        return (self.ids[row], best) if np.isfinite(best) else (None, -1.0)

    def near(self, vectors: np.ndarray, floor: float, only: set[int] | None = None) -> dict[int, float]:
        """Clusters (of `only`, when given) within `floor` of any of the vectors, with their best cosine."""
        size = len(self.ids)
        if size == 0 or len(vectors) == 0:
            return {}
        scores = (self.matrix[:size] @ vectors.astype(np.float32).T).max(axis=1)
        found = {}
        for row in np.flatnonzero(scores >= floor):
            cluster_id = self.ids[int(row)]
            if only is None or cluster_id in only:
                found[cluster_id] = float(scores[row])
        return found


class CentroidIndexes:
    """This process's centroid indexes by inbox (its id, creation time and the model)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, str, str, float], CentroidIndex] = {}
        self._guard = threading.Lock()

    def get(self, inbox_id: int, created: str, model: str, floor: float) -> CentroidIndex:
        """The inbox's index for the model (empty when new: it syncs from mark 0)."""
        with self._guard:
            return self._by_key.setdefault((inbox_id, created, model, floor), CentroidIndex(model, floor))

    def forget(self, inbox_id: int, created: str, model: str, floor: float) -> None:
        """Drop an index that may be ahead of the database (its transaction rolled back)."""
        with self._guard:
            self._by_key.pop((inbox_id, created, model, floor), None)


INDEXES = CentroidIndexes()  # one per process, shared by its intake and its re-match loop
