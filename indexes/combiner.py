"""Combine concurrent searches of one index into one batched search (leader/follower, no extra thread).

The first caller becomes the leader: it runs one matrix product for every query queued meanwhile and
hands out the results, then repeats until the queue is empty. A lone query runs at once (no waiting
for company); under load, 32 concurrent queries read the corpus matrix once instead of 32 times.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Hits = list[tuple[int, float]]
SearchFunction = Callable[[np.ndarray, int], list[Hits]]


@dataclass
class _Query:
    vector: np.ndarray
    k: int
    done: threading.Event = field(default_factory=threading.Event)
    hits: Hits | None = None
    error: BaseException | None = None


class SearchCombiner:
    """Batched search for concurrent callers of one index."""

    def __init__(self, search: SearchFunction, max_batch: int = 64) -> None:
        self._search = search
        self._max_batch = max_batch
        self._lock = threading.Lock()
        self._queue: list[_Query] = []
        self._leading = False

    def search(self, vector: np.ndarray, k: int) -> Hits:
        """Top-k (id, score) for one query vector, batched with whatever else is waiting."""
        query = _Query(np.asarray(vector, dtype=np.float32).reshape(-1), k)
        with self._lock:
            self._queue.append(query)
            lead = not self._leading
            self._leading = self._leading or lead
        if lead:
            self._lead()
        query.done.wait()
        if query.error is not None:
            raise query.error
        assert query.hits is not None
        return query.hits

    def _lead(self) -> None:
        while True:
            with self._lock:
                batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
                if not batch:
                    self._leading = False
                    return
            try:
                depth = max(q.k for q in batch)
                results = self._search(np.vstack([q.vector for q in batch]), depth)
                for query, hits in zip(batch, results, strict=True):
                    query.hits = hits[: query.k]
            except BaseException as error:  # noqa: BLE001 - every waiting caller gets the error
                for query in batch:
                    query.error = error
            for query in batch:
                query.done.set()
