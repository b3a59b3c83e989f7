"""Rankings of a BEIR dataset by every setting, scored like the service ranks (indexes/first_stage.py).

`candidate_scores` encodes once and gathers each query's pool (`Candidates`); `fused_run` ranks the
pools under one setting, so trying many settings (a calibration grid) costs one encoding. Retrieval
pools are those `rank` gathers for the same depth (each side's top max(depth, 100), both scored);
re-ranking pools are the query's judged documents, as `rank` ranks given candidates. The live store
(app/search/candidates.py) and vectors in memory (here) build the same `Candidates`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evaluation.datasets import BeirDataset
from evaluation.metrics import RankingReport, evaluate_ranking, order_scores
from evaluation.model_eval import Encoder, Run, encode_unique
from indexes.first_stage import BOTH, CANDIDATES, MatrixCorpus, Pool, gather, given, rank_pool
from indexes.fusion import RankingSetting

__all__ = [
    "Candidates",
    "RankingSetting",
    "Task",
    "candidate_scores",
    "fused_run",
    "per_query_values",
    "score_settings",
    "setting_grid",
]

Task = Literal["retrieval", "rerank"]


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
    """Per query id: its pool (indexes/first_stage.py); and the dataset id of every pooled document."""

    pools: dict[str, Pool]
    names: Mapping[int, str]


def candidate_scores(
    encode: Encoder, dataset: BeirDataset, mode: Task, depth: int = CANDIDATES, sides: Collection[str] = BOTH
) -> Candidates:
    """Each query's pool over the dataset's corpus held in memory (see the module docstring)."""
    doc_ids = list(dataset.corpus)
    texts = [dataset.corpus[d] for d in doc_ids]
    doc_matrix, doc_rows = encode_unique(encode, texts)
    corpus = MatrixCorpus(doc_matrix[[doc_rows[t] for t in texts]], texts)
    query_ids = list(dataset.queries)
    queries = [dataset.queries[q] for q in query_ids]
    query_matrix, query_rows = encode_unique(encode, queries)
    vectors = query_matrix[[query_rows[q] for q in queries]]
    if mode == "retrieval":
        pools = gather(corpus, queries, vectors, depth, sides)
    else:
        row_of = {doc_id: row for row, doc_id in enumerate(doc_ids)}
        pools = [
            given(corpus, text, vector, [row_of[d] for d in dataset.qrels.get(q, {}) if d in row_of], True)
            for q, text, vector in zip(query_ids, queries, vectors, strict=True)
        ]
    return Candidates(dict(zip(query_ids, pools, strict=True)), dict(enumerate(doc_ids)))


def fused_run(candidates: Candidates, setting: RankingSetting, top_k: int = CANDIDATES) -> Run:
    """The run {query: {doc: score}} of one setting: each pool's top_k, ranked as `rank` ranks it.

    Scores are rank-derived so that trec_eval-style ordering (by score, ties by document id) keeps
    exactly this order, ties included.
    """
    run: Run = {}
    names = candidates.names
    for query_id, pool in candidates.pools.items():
        hits = rank_pool(pool, setting, top_k)
        run[query_id] = order_scores([names[h.doc_id] for h in hits if h.doc_id in names])
    return run


def score_settings(
    candidates: Candidates,
    qrels: Mapping[str, Mapping[str, int]],
    metrics: Sequence[str],
    top_k: int = CANDIDATES,
) -> dict[str, RankingReport]:
    """Every setting of `setting_grid()` scored on the same candidates: label -> report."""
    return {
        setting.label: evaluate_ranking(qrels, fused_run(candidates, setting, top_k), metrics=list(metrics))
        for setting in setting_grid()
    }


def per_query_values(reports: Mapping[str, RankingReport], metric: str) -> dict[str, dict[str, float]]:
    """label -> query -> `metric`, the input of cross-validated selection."""
    return {label: {q: v[metric] for q, v in report.per_query.items()} for label, report in reports.items()}
