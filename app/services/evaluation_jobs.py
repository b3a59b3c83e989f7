"""Compute an evaluation: rank the labeled queries with the serving model and score them like trec_eval."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from app.services.runtime import ServingState
from evaluation.datasets import BeirDataset
from evaluation.metrics import DEFAULT_CUTOFFS, RankingReport, evaluate_ranking
from evaluation.model_eval import rank_beir

Run = dict[str, dict[str, float]]


@dataclass(frozen=True)
class EvaluationSpec:
    """A validated evaluation request."""

    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    mode: Literal["retrieval", "rerank"]
    corpus: str | None
    documents: dict[str, str] | None
    relevance_level: int
    metrics: list[str] | None
    cutoffs: list[int]
    top_k: int

    @classmethod
    def from_request(cls, request: Mapping[str, Any]) -> EvaluationSpec:
        """Rebuild the spec from the JSON stored with the evaluation."""
        qrels: dict[str, dict[str, int]] = {}
        for row in request["qrels"]:
            qrels.setdefault(row["query_id"], {})[row["document_id"]] = int(row["relevance"])
        documents = request.get("documents")
        return cls(
            queries={q["id"]: q["text"] for q in request["queries"]},
            qrels=qrels,
            mode="rerank" if request["mode"] == "rerank" else "retrieval",
            corpus=request.get("corpus"),
            documents={d["id"]: d["text"] for d in documents} if documents else None,
            relevance_level=int(request.get("relevance_level", 1)),
            metrics=request.get("metrics"),
            cutoffs=list(request.get("cutoffs") or DEFAULT_CUTOFFS),
            top_k=int(request.get("top_k", 100)),
        )


def _corpus_run(state: ServingState, spec: EvaluationSpec) -> Run:
    # Rank with the live index, so the numbers are those of what the service actually returns.
    assert spec.corpus is not None
    index = state.indexes.get(spec.corpus)
    query_ids = list(spec.qrels)
    vectors = state.encoder.encode_bulk([spec.queries[q] for q in query_ids], label="evaluation queries")
    run: Run = {}
    if spec.mode == "retrieval":
        for query_id, hits in zip(query_ids, index.search(vectors, spec.top_k), strict=True):
            run[query_id] = dict(hits)
        return run
    for query_id, vector in zip(query_ids, vectors, strict=True):
        candidates = [d for d in spec.qrels[query_id] if d in index]
        scores = index.vectors(candidates) @ vector if candidates else np.zeros(0)
        run[query_id] = {d: float(s) for d, s in zip(candidates, scores, strict=True)}
    return run


def compute_report(state: ServingState, spec: EvaluationSpec) -> RankingReport:
    """Rank every judged query (against the corpus index or the inline documents) and score the run."""
    if spec.documents is not None:
        dataset = BeirDataset(corpus=spec.documents, queries=spec.queries, qrels=spec.qrels)
        run = rank_beir(state.encoder.encode_bulk, dataset, spec.mode, top_k=spec.top_k)
    else:
        run = _corpus_run(state, spec)
    return evaluate_ranking(
        spec.qrels, run, relevance_level=spec.relevance_level, cutoffs=spec.cutoffs, metrics=spec.metrics
    )


def unknown_qrels_documents(
    qrels: Mapping[str, Mapping[str, int]], known: Sequence[str] | set[str]
) -> list[str]:
    """Document ids the qrels name that are not among the known ones, in first-seen order."""
    known_set = set(known)
    return list(dict.fromkeys(d for judged in qrels.values() for d in judged if d not in known_set))
