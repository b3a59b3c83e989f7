"""Lexical and hybrid runs of a BEIR dataset, scored like the service ranks (indexes.fusion, BM25).

`candidate_scores` encodes once and scores every query's candidates on both sides; `fused_run` turns
them into a run for one ranking setting, so trying many settings (a calibration grid) costs one
encoding. Retrieval candidates are the union of each side's top `pool` over the whole corpus, as in
the service; re-ranking candidates are the query's judged documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluation.datasets import BeirDataset
from evaluation.metrics import RankingReport, evaluate_ranking, order_scores
from evaluation.model_eval import Encoder, Run, encode_unique
from indexes.fusion import RankingSetting, fuse
from indexes.lexical import LexicalIndex

__all__ = [
    "Candidates",
    "RankingSetting",
    "candidate_scores",
    "fused_run",
    "per_query_values",
    "score_settings",
    "setting_grid",
]

_QUERY_CHUNK = 256


def setting_grid(
    alphas: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
) -> list[RankingSetting]:
    """Dense, lexical, linear hybrid at each alpha, and reciprocal-rank fusion."""
    hybrids = [RankingSetting("hybrid", a) for a in alphas]
    return [
        RankingSetting("dense"),
        RankingSetting("lexical"),
        *hybrids,
        RankingSetting("hybrid", 0.0, "rrf"),
    ]


@dataclass(frozen=True)
class Candidates:
    """Per query: candidate document ids with their cosine and BM25 scores."""

    ids: dict[str, list[str]]
    dense: dict[str, np.ndarray]
    lexical: dict[str, np.ndarray]


def candidate_scores(
    encode: Encoder, dataset: BeirDataset, mode: Literal["retrieval", "rerank"], pool: int = 100
) -> Candidates:
    """Both scores of each query's candidates (see the module docstring for which candidates)."""
    doc_ids = list(dataset.corpus)
    lexical = LexicalIndex()
    lexical.apply([(row, dataset.corpus[doc_id]) for row, doc_id in enumerate(doc_ids)])
    doc_matrix, doc_rows = encode_unique(encode, [dataset.corpus[d] for d in doc_ids])
    corpus = doc_matrix[[doc_rows[dataset.corpus[d]] for d in doc_ids]]
    query_ids = list(dataset.queries)
    query_matrix, query_rows = encode_unique(encode, [dataset.queries[q] for q in query_ids])
    row_of = {doc_id: row for row, doc_id in enumerate(doc_ids)}
    result = Candidates({}, {}, {})
    for start in range(0, len(query_ids), _QUERY_CHUNK):
        chunk = query_ids[start : start + _QUERY_CHUNK]
        vectors = query_matrix[[query_rows[dataset.queries[q]] for q in chunk]]
        scores = vectors @ corpus.T if mode == "retrieval" else None
        for position, query_id in enumerate(chunk):
            text = dataset.queries[query_id]
            if scores is not None:
                row_scores = scores[position]
                count = min(pool, len(doc_ids))
                top = np.argpartition(-row_scores, count - 1)[:count] if count else np.zeros(0, np.int64)
                rows = list(dict.fromkeys([*map(int, top), *(r for r, _ in lexical.search(text, pool))]))
                dense = row_scores[rows]
            else:
                judged = [d for d in dataset.qrels.get(query_id, {}) if d in row_of]
                rows = [row_of[d] for d in judged]
                dense = corpus[rows] @ vectors[position] if rows else np.zeros(0)
            bm25 = lexical.scores(text, rows)
            result.ids[query_id] = [doc_ids[r] for r in rows]
            result.dense[query_id] = np.asarray(dense, dtype=np.float64)
            result.lexical[query_id] = np.array([bm25[r] for r in rows], dtype=np.float64)
    return result


def fused_run(candidates: Candidates, setting: RankingSetting, top_k: int = 100) -> Run:
    """The run {query: {doc: score}} of one setting: its top_k candidates with a strictly falling score.

    Scores are replaced by rank-derived values so that trec_eval-style ordering (by score, ties by
    document id) keeps exactly the fused order, ties included.
    """
    run: Run = {}
    for query_id, ids in candidates.ids.items():
        dense = dict(enumerate(candidates.dense[query_id].tolist()))
        lexical = dict(enumerate(candidates.lexical[query_id].tolist()))
        hits = fuse(dense, lexical, setting, top_k)
        run[query_id] = order_scores([ids[hit.doc_id] for hit in hits])
    return run


def score_settings(
    candidates: Candidates, qrels: Mapping[str, Mapping[str, int]], metrics: Sequence[str]
) -> dict[str, RankingReport]:
    """Every setting of `setting_grid()` scored on the same candidates: label -> report."""
    return {
        setting.label: evaluate_ranking(qrels, fused_run(candidates, setting), metrics=list(metrics))
        for setting in setting_grid()
    }


def per_query_values(reports: Mapping[str, RankingReport], metric: str) -> dict[str, dict[str, float]]:
    """label -> query -> `metric`, the input of cross-validated selection."""
    return {label: {q: v[metric] for q, v in report.per_query.items()} for label, report in reports.items()}
