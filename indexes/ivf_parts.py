"""IVF parts searched as one: an IVF's lists and the tail of rows appended since (`StackedIVF`, written by
`indexes/ann_tail.py`), each query assigned to its lists once; and a lone query on fast-scan (pq4) lists
scanned in two halves on two threads, since Faiss's fast scan has no parallel mode."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import faiss
import numpy as np

# Faiss's IVF `parallel_mode` 1: one query's probed lists are shared out among the OpenMP threads (the
# default, 0, gives each thread whole queries, so a single query scans its lists on one core).
PROBES_IN_PARALLEL = 1


class StackedIVF:
    """IVF lists over rows 0..n-1, kept in an earlier generation's file, and the tail of rows n.. appended
    since (None when nothing was), searched as one index."""

    def __init__(self, base: faiss.Index, tail: faiss.Index | None, base_file: Path) -> None:
        self.base, self.tail, self.base_file = base, tail, base_file
        self._parts = tuple(faiss.extract_index_ivf(part) for part in (base, tail) if part is not None)

    @property
    def ntotal(self) -> int:
        """Rows in both parts."""
        return int(sum(part.ntotal for part in self._parts))

    def search(self, queries: np.ndarray, k: int, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows) of each query's best k over both parts: the lists probed once for both."""
        return search_parts(self._parts, queries, k, params)


def search_parts(
    parts: tuple[faiss.IndexIVF, ...], queries: np.ndarray, k: int, params: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) of each query's best k over IVF parts sharing one quantizer, each query assigned to
    its lists once. A single query on fast-scan (pq4) lists in `PROBES_IN_PARALLEL` mode scans its lists in
    halves on two threads: Faiss's fast scan has no parallel mode and would use one core."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    ivf = parts[0]
    probes = min(ivf.nlist, params.nprobe if params is not None else ivf.nprobe)
    coarse, lists = ivf.quantizer.search(queries, probes)
    # The parts read `nprobe` lists per query from `lists`: IndexIVF clamps it to nlist itself, but
    # fast scan (pq4) does not and read past the array (a crash) when a corpus's nprobe > nlist.
    params = params if params is not None else faiss.SearchParametersIVF()
    params.nprobe = probes
    spans = [slice(0, probes)]
    with _busy:
        split = len(queries) == 1 and probes > 1 and _busy.searches < _busy.spare
        # Exact only without residuals: fast scan scales a query's lookup tables by its probed lists'
        # distances when it encodes residuals (the store's inner-product pq4 does not).
        split = (
            split and ivf.parallel_mode == PROBES_IN_PARALLEL and is_fast_scan(ivf) and not ivf.by_residual
        )
        _busy.searches += 1
    if split:
        spans = [slice(0, probes // 2), slice(probes // 2, probes)]
    jobs = [(part, span) for part in parts for span in spans]

    def scan(job: tuple[faiss.IndexIVF, slice]) -> tuple[np.ndarray, np.ndarray]:
        part, span = job
        if span.stop - span.start == probes:
            return _search_assigned(part, queries, k, lists, coarse, params)
        some = faiss.SearchParametersIVF()
        some.nprobe, some.sel = span.stop - span.start, params.sel  # the same deleted rows skipped
        picked, distances = (np.ascontiguousarray(a[:, span]) for a in (lists, coarse))
        return _search_assigned(part, queries, k, picked, distances, some)

    try:
        if split:  # the caller scans one span; Faiss lets go of the GIL, so the others run beside it
            others = [_pool().submit(scan, job) for job in jobs[1:]]
            found = [scan(jobs[0]), *(future.result() for future in others)]
        else:
            found = [scan(job) for job in jobs]
    finally:
        with _busy:
            _busy.searches -= 1
    scores = np.concatenate([part_scores for part_scores, _ in found], axis=1)
    rows = np.concatenate([part_rows for _, part_rows in found], axis=1)
    worse = -scores if ivf.metric_type == faiss.METRIC_INNER_PRODUCT else scores
    # Ties as one Faiss IVF orders them (its heaps compare ids next: the larger first).
    best = np.lexsort((-rows, worse), axis=1)[:, :k]
    return np.take_along_axis(scores, best, axis=1), np.take_along_axis(rows, best, axis=1)


class _Busy:
    """Searches in flight, under a lock: a query is split only while cores are idle. Measured at 10M
    (benchmarks/scale_10m.md, pq4): always split, one query's p50 fell 1.34-1.38x but 8 clients'
    queries/s fell 8-9% (the threads' hand-offs); split only while no other search runs (2 cores), p50
    1.32-1.34x lower and 8 clients' queries/s x0.97 and x1.10 (noise)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.searches = 0
        self.spare = max(1, (os.cpu_count() or 1) // 2)  # searches that still leave a core for a half

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


_busy = _Busy()


def is_fast_scan(index: faiss.Index) -> bool:
    """True for a fast-scan (pq4) IVF, whose codes lie in blocks of 32 vectors (False for HNSW)."""
    ivf = faiss.try_extract_index_ivf(index)
    return ivf is not None and isinstance(faiss.downcast_index(ivf), faiss.IndexIVFFastScan)


_pools: dict[int, ThreadPoolExecutor] = {}


def _pool() -> ThreadPoolExecutor:
    """Threads for the spans of a split search (one per core; the caller scans a span itself)."""
    # One per process: a forked child inherits the parent's pool without its threads, and work handed
    # to it would wait forever.
    pid = os.getpid()
    with _busy:
        if pid not in _pools:
            _pools[pid] = ThreadPoolExecutor(max(1, os.cpu_count() or 1), thread_name_prefix="probe-span")
        return _pools[pid]


def _search_assigned(
    ivf: faiss.IndexIVF, queries: np.ndarray, k: int, lists: np.ndarray, coarse: np.ndarray, params: Any
) -> tuple[np.ndarray, np.ndarray]:
    """One part's best k in the lists given per query (the C++ call: the Python wrapper takes no params,
    and the params carry the deleted-rows selector)."""
    scores = np.empty((len(queries), k), np.float32)
    rows = np.empty((len(queries), k), np.int64)
    ptr = faiss.swig_ptr
    ivf.search_preassigned_c(  # type: ignore[attr-defined]  # missing from the stubs
        len(queries), ptr(queries), k, ptr(lists), ptr(coarse), ptr(scores), ptr(rows), False, params
    )
    return scores, rows
