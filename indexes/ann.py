"""Approximate search structures over a snapshot's rows (Faiss HNSW and IVF), and their measured recall.

An ANN index covers the rows of a sealed snapshot, its Faiss ids being row numbers; rows deleted since
are excluded at search time with an `IDSelectorBitmap`, so no over-fetching guesswork is needed.
A compressed IVF (sq8, pq, pq4) may be refined: its top `refine` candidates are re-scored exactly from a
float16 copy of the rows that stays on disk (memory-mapped: the page cache holds the pages a search
reads, not the process), and the best k of them are kept. An IVF may come in two parts, its lists and
a tail of rows appended since (`indexes/ivf_parts.py`), searched as one.
"""

from __future__ import annotations

from typing import Any

import faiss
import numpy as np

from indexes.ivf_parts import PROBES_IN_PARALLEL, StackedIVF, is_fast_scan, search_parts
from indexes.spec import IndexSpec

_TRAIN_SAMPLE_PER_LIST = 64
Structure = faiss.Index | StackedIVF  # what a search runs on


def build_ann(spec: IndexSpec, structure: str, vectors: np.ndarray, seed: int = 0) -> faiss.Index | None:
    """A new ANN index over `vectors` (row i gets id i); None for flat (exact search needs none)."""
    dimension = vectors.shape[1]
    if structure == "flat":
        return None
    if structure == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, spec.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = spec.ef_construction
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return index
    lists = spec.lists(len(vectors))
    quantizer = faiss.IndexFlatIP(dimension)
    ivf: faiss.Index
    if spec.compression == "sq8":
        ivf = faiss.IndexIVFScalarQuantizer(
            quantizer, dimension, lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
    elif spec.compression in ("pq", "pq4"):
        # pq_m is code bytes: a byte per 8-bit sub-quantizer, half a byte per 4-bit one. Sub-quantizers
        # must divide the dimension: the largest divisor at most the count asked for.
        # pq4 is Faiss's fast scan: codes in blocks of 32 vectors, scored with in-register 16-entry
        # lookups (SIMD).
        bits, kind = (8, faiss.IndexIVFPQ) if spec.compression == "pq" else (4, faiss.IndexIVFPQFastScan)
        wanted = spec.pq_m * 8 // bits
        parts = max(p for p in range(1, wanted + 1) if dimension % p == 0)
        ivf = kind(quantizer, dimension, lists, parts, bits, faiss.METRIC_INNER_PRODUCT)
    else:
        ivf = faiss.IndexIVFFlat(quantizer, dimension, lists, faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(seed)
    sample_size = min(len(vectors), max(lists * _TRAIN_SAMPLE_PER_LIST, spec.training_points(len(vectors))))
    sample = vectors[np.sort(rng.choice(len(vectors), sample_size, replace=False))]
    ivf.train(np.ascontiguousarray(sample, dtype=np.float32))
    ivf.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return ivf


def split_probes(index: faiss.Index) -> faiss.Index:
    """`index`, set so that an IVF search spreads one query's lists over all cores (same results)."""
    # Measured at 10M sq8 rows (benchmarks/scale_10m.md): single-query p50 1.6-2.1x lower on 2 cores,
    # 8-client throughput the same; `/rank` sends one query at a time, so latency is what this buys.
    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        ivf.parallel_mode = PROBES_IN_PARALLEL
    return index


def extend_ann(index: faiss.Index, vectors: np.ndarray) -> None:
    """Append rows (ids continue after the last row); both HNSW and IVF support adding."""
    if len(vectors):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))


def search_params(index: Structure, spec: IndexSpec, k: int, alive: np.ndarray | None) -> Any:
    """Per-query parameters: beam width or probes for k, and a selector that skips deleted rows."""
    params: Any
    if isinstance(index, faiss.IndexHNSW):
        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # missing from the stubs
        params.efSearch = max(spec.ef_search, k)
    else:
        params = faiss.SearchParametersIVF()
        params.nprobe = spec.nprobe
    if alive is not None and not alive.all():
        bits = np.packbits(alive, bitorder="little")
        params.sel = faiss.IDSelectorBitmap(len(alive), faiss.swig_ptr(bits))
        params.keep = (bits, params.sel)  # the selector points into `bits`: both live as long as params
    return params


def ann_search(
    index: Structure,
    spec: IndexSpec,
    queries: np.ndarray,
    k: int,
    alive: np.ndarray | None,
    refine_from: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) of the top k live rows per query; rows are -1 where fewer exist.

    With `refine_from` (the rows' float16 copy) the top `spec.refine` candidates are re-scored exactly.
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    depth = k if refine_from is None else max(k, min(spec.refine, index.ntotal))
    params = search_params(index, spec, depth, alive)
    ivf = None if isinstance(index, StackedIVF) else faiss.try_extract_index_ivf(index)
    alone = len(queries) == 1 and ivf is not None and ivf.parallel_mode == PROBES_IN_PARALLEL
    if alone and ivf is not None and is_fast_scan(ivf):
        scores, rows = search_parts((ivf,), queries, depth, params)  # one query's lists on two threads
    else:
        scores, rows = index.search(queries, depth, params=params)
    if refine_from is None:
        return scores, rows
    exact = rescore(refine_from, queries, rows)
    best = np.argsort(-exact, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(exact, best, axis=1), np.take_along_axis(rows, best, axis=1)


def rescore(stored: np.ndarray, queries: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Inner products of each query with its candidate rows as stored in float16 (-inf where rows is -1)."""
    # Cast through float16 whatever `stored` is, so that a checkpoint measuring recall on its float32
    # rows scores exactly what searches over the written float16 file will.
    picked = np.asarray(stored[np.maximum(rows, 0).ravel()], dtype=np.float16).astype(np.float32)
    scores = np.einsum("qd,qcd->qc", queries, picked.reshape(*rows.shape, -1))
    return np.where(rows >= 0, scores, -np.inf).astype(np.float32)


def recall_at_k(
    index: Structure,
    spec: IndexSpec,
    vectors: np.ndarray,
    alive: np.ndarray | None = None,
    k: int = 10,
    sample: int = 200,
    seed: int = 0,
    refine_from: np.ndarray | None = None,
) -> float:
    """Recall@k of the ANN index (refined from `refine_from` if given) against exact search over the
    live rows, for perturbed stored vectors."""
    live = np.flatnonzero(alive) if alive is not None else np.arange(len(vectors))
    if len(live) <= k:
        return 1.0
    rng = np.random.default_rng(seed)
    picks = rng.choice(live, min(sample, len(live)), replace=False)
    noise = rng.normal(0, 0.05, (len(picks), vectors.shape[1]))
    queries = np.asarray(vectors[picks], dtype=np.float32) + noise
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    exact = exact_top_k(queries, vectors, k, alive)
    _, found = ann_search(index, spec, queries, k, alive, refine_from)
    hits = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(exact, found, strict=True))
    return hits / (k * len(picks))


# A chunk's scores: 64 MiB of float32 whatever the number of queries (the partial sort's indices twice
# that). At 262,144 rows x 200 queries, with the live rows copied out, a checkpoint's recall measure held
# 1.5 GiB of private memory at its peak beside the serving index; 0.25 GiB now
# (benchmarks/exact_top_k_memory.md).
SCORES_PER_CHUNK = 1 << 24


def exact_top_k(
    queries: np.ndarray, vectors: np.ndarray, k: int, alive: np.ndarray | None = None, chunk: int = 65_536
) -> np.ndarray:
    """Row numbers of each query's exact top k by inner product among the live rows (-1 pads).

    A chunk of rows at a time: copying the live rows of a 10M snapshot to search them at once took
    14 GB beside the serving index (the OOM killer ended that checkpoint). Each chunk is one matrix
    product (BLAS) over the mapped rows, dead rows' scores set to -inf rather than the live rows copied,
    and a partial sort: Faiss 1.15's `knn` takes its BLAS path only from 128,000 queries up
    (`distance_compute_blas_threshold`), and the checkpoint's 200 recall queries spent 9 s per chunk in
    its scalar loop (0.5 s as a product; benchmarks/index/exact_top_k.md).
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    chunk = max(1, min(chunk, SCORES_PER_CHUNK // max(1, len(queries))))
    best_scores = np.full((len(queries), k), -np.inf, np.float32)
    best_rows = np.full((len(queries), k), -1, np.int64)
    for start in range(0, len(vectors), chunk):
        block = np.asarray(vectors[start : start + chunk], dtype=np.float32)  # float32 rows: not copied
        kept = None if alive is None else alive[start : start + len(block)]
        if kept is not None and not kept.any():
            continue
        scores = queries @ block.T
        if kept is not None:
            scores[:, ~kept] = -np.inf
        if len(block) > k:  # the chunk's k best per query, unordered; the merge below orders them
            found = np.argpartition(scores, len(block) - k, axis=1)[:, len(block) - k :]
            scores = np.take_along_axis(scores, found, 1)
        else:
            found = np.broadcast_to(np.arange(len(block)), scores.shape)
        merged_scores = np.concatenate([best_scores, scores], axis=1)
        merged_rows = np.concatenate([best_rows, start + found], axis=1)
        order = np.argsort(-merged_scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(merged_scores, order, 1)
        best_rows = np.take_along_axis(merged_rows, order, 1)
    best_rows[best_scores == -np.inf] = -1  # dead rows are no hit: pad as when fewer rows live than k
    return best_rows
