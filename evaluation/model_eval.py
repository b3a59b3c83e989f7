"""Model-agnostic evaluation: any `encode(texts) -> embeddings` function, ranked by cosine similarity.

`encode` takes a list of texts and returns one row per text (float, shape [n, dim]). Every distinct text
is encoded once per call here, and rows are L2-normalized again, so scores are cosines even when the
caller forgets to normalize. Progress bars, batching and devices belong to `encode` (for a
sentence-transformers model: `model.encode(texts, show_progress_bar=True, normalize_embeddings=True)`).

* retrieval: each query is scored against the whole corpus (exact inner product, numpy matmul in chunks
  of queries) and keeps its `top_k` best documents (plus any tied with the k-th, so the cut never
  depends on input order).
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

Encoder = Callable[[Sequence[str]], np.ndarray]
Run = dict[str, dict[str, float]]

_QUERY_CHUNK = 256  # queries scored per matmul: bounds memory at chunk x corpus floats


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
    run: Run = {}
    for start in range(0, len(query_ids), _QUERY_CHUNK):
        chunk_ids = query_ids[start : start + _QUERY_CHUNK]
        chunk = query_matrix[[query_rows[dataset.queries[query_id]] for query_id in chunk_ids]]
        chunk_scores = chunk @ corpus_matrix.T
        for query_id, scores in zip(chunk_ids, chunk_scores, strict=True):
            keep = _top_k_with_ties(scores, top_k)
            run[query_id] = {doc_ids[index]: float(scores[index]) for index in keep}
    return run


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
