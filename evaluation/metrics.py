"""Ranking metrics with trec_eval's conventions, in pure numpy (no torch), for the service and training.

Conventions (those of trec_eval 9/10 and pytrec_eval; `../shared/eval-vectors` pins them in tests):

* A query's documents are sorted by score, descending; equal scores are ordered by document id in
  DESCENDING string order (trec_eval's `strcmp(p2, p1)`), never by input order. A run's file order,
  or its dict insertion order, never matters.
* A judged document is relevant when its grade >= `relevance_level` (default 1) and the grade is not
  negative. Unjudged documents are non-relevant.
* Every query in the qrels is scored; the mean is over the qrels queries. A query whose judged
  documents are all non-relevant scores 0 in every metric. A qrels query with no results at all scores 0
  (trec_eval `-c`). Queries in the run but not in the qrels are ignored.

Metrics (`k` is any positive cutoff):

* `MRR`, `MRR@k`: reciprocal rank of the first relevant document (0 when none is in the list / top k).
* `MAP`, `MAP@k`: average precision, the sum of precision at each relevant rank (within the top k)
  divided by ALL relevant documents in the qrels, retrieved or not (trec_eval `map`, `map_cut`).
* `HasPositive@k`: 1 if a relevant document is in the top k (trec_eval `success_k`).
* `P@k`: relevant documents in the top k divided by k, also when the list is shorter than k (`P_k`).
* `Recall@k`: relevant documents in the top k divided by all relevant documents (`recall_k`).
* `nDCG@k`: trec_eval `ndcg_cut`: gain = the qrels grade (grades <= 0 give nothing), discount
  log2(rank + 1); the ideal list is every positive judged grade of the query, sorted. As in trec_eval
  the gains come from the grades themselves, so nDCG does not depend on `relevance_level`; it is 0 for
  a query whose judged grades are all <= 0.
* `SemEval-MAP@k` (reported as `SemEval-MAP@10`): the SemEval 2016/2017 CQA scorer's MAP: average
  precision over the top k divided by the relevant documents FOUND in the top k (0 when none are).
  Only the tie order differs from that scorer, which keeps ties in file order: here ties follow the
  trec_eval rule above so that every metric ranks the same list.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metric_names import METRIC_FAMILIES as METRIC_FAMILIES
from evaluation.metric_names import is_valid_metric as is_valid_metric
from evaluation.metric_names import parse_metric

DEFAULT_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10, 20, 50)


@dataclass(frozen=True)
class RankingReport:
    """Mean of each metric over the qrels queries, and every query's own values."""

    means: dict[str, float]
    per_query: dict[str, dict[str, float]]


def default_metric_names(cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> list[str]:
    """Every metric reported by default: MAP, MRR, each cutoff family at each cutoff, SemEval-MAP@10."""
    names = ["MAP", "MRR"]
    for family in ("MAP", "MRR", "HasPositive", "P", "nDCG", "Recall"):
        names += [f"{family}@{k}" for k in cutoffs]
    return [*names, "SemEval-MAP@10"]


def rank_documents(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval order: score descending, ties by document id descending."""
    # Sorting the (score, id) pairs in reverse gives both descending keys in one stable pass.
    return [doc_id for doc_id, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def order_scores(order: Sequence[str]) -> dict[str, float]:
    """One query's run from an order: rank-derived, strictly falling scores, so `rank_documents` (and
    trec_eval) read back exactly this order, ties included."""
    return {doc_id: float(len(order) - rank) for rank, doc_id in enumerate(order)}


def _query_values(
    judgments: Mapping[str, int],
    scores: Mapping[str, float],
    relevance_level: int,
    parsed: Sequence[tuple[str, str, int | None]],
) -> dict[str, float]:
    """All requested metrics for one query."""
    ranked = rank_documents(scores)
    grades = np.array([judgments.get(doc_id, 0) for doc_id in ranked], dtype=np.float64)
    judged = np.array([doc_id in judgments for doc_id in ranked], dtype=bool)
    is_relevant = judged & (grades >= relevance_level) & (grades >= 0)
    num_relevant = sum(1 for grade in judgments.values() if grade >= relevance_level and grade >= 0)
    positive_grades = np.sort(np.array([g for g in judgments.values() if g > 0], dtype=np.float64))[::-1]

    ranks = np.arange(1, len(ranked) + 1, dtype=np.float64)
    hits = np.cumsum(is_relevant)
    precision_at_hits = hits[is_relevant] / ranks[is_relevant]  # one entry per relevant rank, in order
    relevant_ranks = ranks[is_relevant]
    first_rank = float(relevant_ranks[0]) if len(relevant_ranks) else math.inf

    values: dict[str, float] = {}
    for name, family, k in parsed:
        limit = len(ranked) if k is None else min(k, len(ranked))
        hits_at = float(hits[limit - 1]) if limit > 0 else 0.0
        if family == "nDCG":
            values[name] = _ndcg(np.clip(grades[:limit], 0.0, None), positive_grades[: k or None])
        elif num_relevant == 0:
            values[name] = 0.0  # trec_eval: no relevant documents, nothing to find
        elif family == "MAP":
            values[name] = float(precision_at_hits[relevant_ranks <= limit].sum()) / num_relevant
        elif family == "MRR":
            values[name] = 1.0 / first_rank if first_rank <= limit else 0.0
        elif family == "HasPositive":
            values[name] = 1.0 if first_rank <= limit else 0.0
        elif family == "P":
            values[name] = hits_at / (k or 1)
        elif family == "Recall":
            values[name] = hits_at / num_relevant
        else:  # SemEval-MAP: divide by the relevant documents found in the top k, not by all of them
            found = precision_at_hits[relevant_ranks <= limit]
            values[name] = float(found.mean()) if len(found) else 0.0
    return values


def _ndcg(gains: np.ndarray, ideal_gains: np.ndarray) -> float:
    """DCG of `gains` over DCG of `ideal_gains` (both already cut at k), log2(rank + 1) discount."""
    ideal = float((ideal_gains / np.log2(np.arange(2, len(ideal_gains) + 2))).sum())
    if ideal <= 0.0:
        return 0.0
    return float((gains / np.log2(np.arange(2, len(gains) + 2))).sum()) / ideal


def _check_run(run: Mapping[str, Mapping[str, float]], query_ids: Iterable[str]) -> None:
    """Reject NaN scores, which have no place in a descending sort."""
    for query_id in query_ids:
        for doc_id, score in run.get(query_id, {}).items():
            if math.isnan(score):
                raise ValueError(f"run score for query {query_id!r}, document {doc_id!r} is NaN")


def evaluate_ranking(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    *,
    relevance_level: int = 1,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    metrics: Sequence[str] | None = None,
) -> RankingReport:
    """Score `run` ({query: {doc: score}}) against `qrels` ({query: {doc: grade}}) like trec_eval -c."""
    if not qrels:
        raise ValueError("qrels are empty: there is no query to evaluate")
    if any(k < 1 for k in cutoffs):
        raise ValueError(f"cutoffs must be positive integers, got {list(cutoffs)}")
    names = list(dict.fromkeys(metrics)) if metrics is not None else default_metric_names(cutoffs)
    parsed = [(name, *parse_metric(name)) for name in names]
    _check_run(run, qrels)

    per_query = {
        query_id: _query_values(judgments, run.get(query_id, {}), relevance_level, parsed)
        for query_id, judgments in qrels.items()
    }
    means = {name: float(np.mean([values[name] for values in per_query.values()])) for name in names}
    return RankingReport(means=means, per_query=per_query)
