"""Model-agnostic evaluation: any `encode(texts) -> embeddings` function, ranked by cosine similarity.

`encode` takes a list of texts and returns one row per text (float, shape [n, dim]). Every distinct text
is encoded once per call here, and rows are L2-normalized again, so scores are cosines even when the
caller forgets to normalize. Progress bars, batching and devices belong to `encode` (for a
sentence-transformers model: `model.encode(texts, show_progress_bar=True, normalize_embeddings=True)`).

* retrieval: each query is scored against the whole corpus (exact inner product, numpy matmul in chunks
  of queries; Faiss brute force on the GPU for large evaluations when a GPU build is present) and keeps
  its `top_k` best documents (plus any tied with the k-th, so the cut never depends on input order).
* rerank: each query is scored only against its own judged candidates in the qrels (`top_k` unused);
  candidates with no text in the corpus cannot be scored and are left out of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from evaluation.datasets import BeirDataset, LabeledPair
from evaluation.metrics import RankingReport, evaluate_ranking
from evaluation.pairs import best_f1_threshold, correlations, pair_metrics_at
from indexes.gpu import use_gpu
from indexes.knn import knn_search

Encoder = Callable[[Sequence[str]], np.ndarray]
Run = dict[str, dict[str, float]]

_QUERY_CHUNK = 256  # queries scored per matmul: bounds memory at chunk x corpus floats
_TIE_MARGIN = 32  # extra hits fetched on the GPU so that ties with the k-th are seen (checked below)


def encode_unique(encode: Encoder, texts: Sequence[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Encode each distinct text once; return (normalized rows, {text: row index})."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return np.zeros((0, 0), dtype=np.float32), {}
    embeddings = np.asarray(encode(unique), dtype=np.float32)
    if embeddings.ndim != 2 or embeddings.shape[0] != len(unique):
        raise ValueError(f"encode returned shape {embeddings.shape} for {len(unique)} texts")
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    embeddings = embeddings / np.maximum(norms, 1e-12)  # a zero vector stays zero instead of NaN
    return embeddings, {text: row for row, text in enumerate(unique)}


def _top_k_with_ties(scores: np.ndarray, top_k: int) -> np.ndarray:
    """Indices of the top_k scores, extended by every score tied with the k-th."""
    if top_k >= len(scores):
        return np.arange(len(scores))
    kth_best = np.partition(scores, len(scores) - top_k)[len(scores) - top_k]
    return np.flatnonzero(scores >= kth_best)


def _retrieval_run(encode: Encoder, dataset: BeirDataset, top_k: int) -> Run:
    """Score every query against the whole corpus and keep its top documents."""
    doc_ids = list(dataset.corpus)
    query_ids = list(dataset.queries)
    if not doc_ids:
        return {query_id: {} for query_id in query_ids}
    doc_matrix, doc_rows = encode_unique(encode, [dataset.corpus[doc_id] for doc_id in doc_ids])
    query_matrix, query_rows = encode_unique(encode, [dataset.queries[query_id] for query_id in query_ids])
    # Documents sharing a text share a row; expand to one row per document id once.
    corpus_matrix = doc_matrix[[doc_rows[dataset.corpus[doc_id]] for doc_id in doc_ids]]
    queries = query_matrix[[query_rows[dataset.queries[query_id]] for query_id in query_ids]]
    fetch = top_k + _TIE_MARGIN
    if fetch < len(doc_ids) and use_gpu(float(len(queries)) * corpus_matrix.size):
        hits = _gpu_top_k(queries, corpus_matrix, top_k, fetch)
    else:
        hits = _cpu_top_k(queries, corpus_matrix, top_k)
    return {
        query_id: {doc_ids[index]: float(score) for index, score in zip(ids, scores, strict=True)}
        for query_id, (ids, scores) in zip(query_ids, hits, strict=True)
    }


def _cpu_top_k(queries: np.ndarray, corpus: np.ndarray, top_k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(ids, scores) of each query's top_k documents and their ties, by matmul in chunks of queries."""
    hits = []
    for start in range(0, len(queries), _QUERY_CHUNK):
        for scores in queries[start : start + _QUERY_CHUNK] @ corpus.T:
            keep = _top_k_with_ties(scores, top_k)
            hits.append((keep, scores[keep]))
    return hits


def _gpu_top_k(
    queries: np.ndarray, corpus: np.ndarray, top_k: int, fetch: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Like `_cpu_top_k`, from one Faiss search of `fetch` hits; ties reaching past them are rescored."""
    all_scores, all_ids = knn_search(corpus, queries, fetch)
    hits = []
    for query, scores, ids in zip(queries, all_scores, all_ids, strict=True):
        kth_best = scores[top_k - 1]
        if scores[-1] >= kth_best:  # the tie with the k-th may continue beyond the fetched hits
            hits.extend(_cpu_top_k(query[None, :], corpus, top_k))
            continue
        keep = scores >= kth_best
        hits.append((ids[keep], scores[keep]))
    return hits


def _rerank_run(encode: Encoder, dataset: BeirDataset) -> Run:
    """Score each query against its own judged candidates only."""
    candidates = {
        query_id: [doc_id for doc_id in dataset.qrels.get(query_id, {}) if doc_id in dataset.corpus]
        for query_id in dataset.queries
    }
    doc_texts = [dataset.corpus[doc_id] for doc_ids in candidates.values() for doc_id in doc_ids]
    doc_matrix, doc_rows = encode_unique(encode, doc_texts)
    query_matrix, query_rows = encode_unique(encode, list(dataset.queries.values()))
    run: Run = {}
    for query_id, doc_ids in candidates.items():
        if not doc_ids:
            run[query_id] = {}
            continue
        rows = doc_matrix[[doc_rows[dataset.corpus[doc_id]] for doc_id in doc_ids]]
        scores = rows @ query_matrix[query_rows[dataset.queries[query_id]]]
        run[query_id] = {doc_id: float(score) for doc_id, score in zip(doc_ids, scores, strict=True)}
    return run


def rank_beir(
    encode: Encoder, dataset: BeirDataset, mode: Literal["retrieval", "rerank"], top_k: int = 100
) -> Run:
    """A run {query: {doc: cosine}} for the dataset's queries, by retrieval or by re-ranking."""
    if mode == "retrieval":
        if top_k < 1:
            raise ValueError(f"top_k must be positive, got {top_k}")
        return _retrieval_run(encode, dataset, top_k)
    if mode == "rerank":
        return _rerank_run(encode, dataset)
    raise ValueError(f"unknown mode {mode!r}; use 'retrieval' or 'rerank'")


def evaluate_beir(
    encode: Encoder,
    dataset: BeirDataset,
    mode: Literal["retrieval", "rerank"],
    relevance_level: int = 1,
    *,
    top_k: int = 100,
    cutoffs: Sequence[int] = (1, 3, 5, 10, 20, 50),
    metrics: Sequence[str] | None = None,
) -> RankingReport:
    """Rank the dataset with `encode` and score the run against its qrels."""
    run = rank_beir(encode, dataset, mode, top_k=top_k)
    return evaluate_ranking(
        dataset.qrels, run, relevance_level=relevance_level, cutoffs=cutoffs, metrics=metrics
    )


def pair_scores(encode: Encoder, pairs: Sequence[LabeledPair]) -> np.ndarray:
    """Cosine similarity of each pair's two texts."""
    matrix, rows = encode_unique(encode, [text for pair in pairs for text in (pair.query, pair.document)])
    left = matrix[[rows[pair.query] for pair in pairs]]
    right = matrix[[rows[pair.document] for pair in pairs]]
    return np.einsum("ij,ij->i", left, right).astype(np.float64)


def evaluate_pairs(
    encode: Encoder,
    pairs: Sequence[LabeledPair],
    task: Literal["f1", "spearman"],
    *,
    threshold: float | None = None,
) -> dict[str, Any]:
    """Pair quality: `f1` (at `threshold`, or the F1-optimal one on these pairs) or `spearman`/`pearson`."""
    if not pairs:
        raise ValueError("no pairs to evaluate")
    scores = pair_scores(encode, pairs)
    labels = np.array([pair.label for pair in pairs], dtype=np.float64)
    if task == "spearman":
        return {"task": task, "num_pairs": len(pairs), **correlations(scores, labels)}
    if task == "f1":
        found = (
            best_f1_threshold(scores, labels)
            if threshold is None
            else pair_metrics_at(scores, labels, threshold)
        )
        return {
            "task": task,
            "num_pairs": len(pairs),
            "threshold": found.threshold,
            "precision": found.precision,
            "recall": found.recall,
            "f1": found.f1,
            "accuracy": found.accuracy,
        }
    raise ValueError(f"unknown pair task {task!r}; use 'f1' or 'spearman'")
