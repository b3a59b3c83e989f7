"""What an evaluation job computes: rank the labelled queries with the serving model, score them like
trec_eval."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.repository import CorpusRepository, DocumentRepository
from app.search.candidates import live_candidates
from app.serving.state import ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import candidate_scores, fused_run
from evaluation.metrics import DEFAULT_CUTOFFS, RankingReport, evaluate_ranking
from evaluation.model_eval import rank_beir
from indexes.fusion import DEFAULT_ALPHA, RankingSetting

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
    ranking: RankingSetting = RankingSetting("dense")

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
            ranking=RankingSetting(
                str(request.get("ranking", "dense")),
                float(request.get("alpha", DEFAULT_ALPHA)),
                str(request.get("fusion", "linear")),
            ),
        )


def _corpus_run(state: ServingState, sessions: sessionmaker[Session], spec: EvaluationSpec) -> Run:
    # Rank with the live index, so the numbers are those of what the service actually returns.
    assert spec.corpus is not None
    opened = state.store.get(spec.corpus)
    query_ids = list(spec.qrels)
    vectors = state.encoder.encode_bulk([spec.queries[q] for q in query_ids], label="evaluation queries")
    with sessions() as session:
        corpus = CorpusRepository(session).get(spec.corpus)
        if corpus is None:
            raise RuntimeError(f"corpus {spec.corpus!r} was deleted during the evaluation")
        documents = DocumentRepository(session, corpus)
        if spec.mode == "retrieval":
            hits = opened.search(vectors, spec.top_k)
            external = documents.by_ids([d for row in hits for d, _ in row])
            return {
                query_id: {external[d][0]: score for d, score in row if d in external}
                for query_id, row in zip(query_ids, hits, strict=True)
            }
        database_ids = documents.ids_of([d for judged in spec.qrels.values() for d in judged])
    run: Run = {}
    for query_id, vector in zip(query_ids, vectors, strict=True):
        candidates = [d for d in spec.qrels[query_id] if d in database_ids]
        matrix = state.store.vectors_of(opened, [database_ids[d] for d in candidates])
        scores = matrix @ vector if candidates else np.zeros(0)
        run[query_id] = {d: float(s) for d, s in zip(candidates, scores, strict=True)}
    return run


def compute_report(
    state: ServingState, sessions: sessionmaker[Session], spec: EvaluationSpec
) -> RankingReport:
    """Rank every judged query (against the corpus index or the inline documents) and score the run."""
    if spec.ranking.mode != "dense":  # BM25 alone or fused, as `rank` would answer
        queries = {q: spec.queries[q] for q in spec.qrels}
        if spec.documents is not None:
            dataset = BeirDataset(corpus=spec.documents, queries=queries, qrels=spec.qrels)
            candidates = candidate_scores(state.encoder.encode_bulk, dataset, spec.mode)
        else:
            assert spec.corpus is not None
            dataset = BeirDataset(corpus={}, queries=queries, qrels=spec.qrels)
            candidates = live_candidates(state, sessions, spec.corpus, dataset, spec.mode)
        run = fused_run(candidates, spec.ranking, spec.top_k)
    elif spec.documents is not None:
        dataset = BeirDataset(corpus=spec.documents, queries=spec.queries, qrels=spec.qrels)
        run = rank_beir(state.encoder.encode_bulk, dataset, spec.mode, top_k=spec.top_k)
    else:
        run = _corpus_run(state, sessions, spec)
    return evaluate_ranking(
        spec.qrels, run, relevance_level=spec.relevance_level, cutoffs=spec.cutoffs, metrics=spec.metrics
    )


def unknown_qrels_documents(
    qrels: Mapping[str, Mapping[str, int]], known: Sequence[str] | set[str]
) -> list[str]:
    """Document ids the qrels name that are not among the known ones, in first-seen order."""
    known_set = set(known)
    return list(dict.fromkeys(d for judged in qrels.values() for d in judged if d not in known_set))
