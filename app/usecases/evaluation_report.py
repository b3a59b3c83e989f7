"""What an evaluation job computes: rank the labelled queries with the serving model (and a re-ranking
stage, when one applies), score them like trec_eval."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db.repositories.corpora import CorpusRepository, DocumentRepository
from app.search.candidates import live_candidates
from app.search.ranked import RankedItem
from app.search.ranking_setting import RerankRequest
from app.serving.state import ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import candidate_scores, fused_run
from evaluation.metrics import DEFAULT_CUTOFFS, RankingReport, evaluate_ranking, order_scores, rank_documents
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
    rerank: RerankRequest | None = None  # None: a corpus's own stage, if any

    @classmethod
    def from_request(cls, request: Mapping[str, Any]) -> EvaluationSpec:
        """Rebuild the spec from the JSON stored with the evaluation."""
        qrels: dict[str, dict[str, int]] = {}
        for row in request["qrels"]:
            qrels.setdefault(row["query_id"], {})[row["document_id"]] = int(row["relevance"])
        documents = request.get("documents")
        asked = request.get("rerank")
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
            rerank=RerankRequest(
                bool(asked.get("enabled", True)), asked.get("model"), asked.get("k"), asked.get("weight")
            )
            if asked is not None
            else None,
        )


@dataclass(frozen=True)
class Reranking:
    """An evaluation's re-ranking stage: how many of each query's best it reads, and the call that
    re-orders them (app/usecases/reranking.py, as a rank call does)."""

    depth: int
    rerank: Callable[[str, list[RankedItem]], list[RankedItem]]


def _corpus_run(state: ServingState, sessions: sessionmaker[Session], spec: EvaluationSpec) -> Run:
    # Rank with the live index, so the numbers are those of what the service actually returns.
    assert spec.corpus is not None
    opened = state.store.get(spec.corpus)
    query_ids = list(spec.qrels)
    vectors = state.encoder.encode_bulk([spec.queries[q] for q in query_ids], label="evaluation queries")
    with sessions() as session:
        documents = _documents(session, spec.corpus)
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


def _documents(session: Session, corpus_name: str) -> DocumentRepository:
    """The documents of the evaluated corpus (a RuntimeError if it was deleted meanwhile)."""
    corpus = CorpusRepository(session).get(corpus_name)
    if corpus is None:
        raise RuntimeError(f"corpus {corpus_name!r} was deleted during the evaluation")
    return DocumentRepository(session, corpus)


def _texts(sessions: sessionmaker[Session], spec: EvaluationSpec, ids: Sequence[str]) -> Mapping[str, str]:
    """The texts of documents a run names: the inline ones, or the corpus's (read once)."""
    if spec.documents is not None:
        return spec.documents
    assert spec.corpus is not None
    with sessions() as session:
        return _documents(session, spec.corpus).texts(list(dict.fromkeys(ids)))


def reranked_run(run: Run, spec: EvaluationSpec, sessions: sessionmaker[Session], stage: Reranking) -> Run:
    """Each query's results with their best `stage.depth` re-ordered (only those texts are read);
    rank-derived scores, so trec_eval reads exactly this order."""
    orders = {query_id: rank_documents(scores) for query_id, scores in run.items()}
    texts = _texts(sessions, spec, [d for order in orders.values() for d in order[: stage.depth]])
    reranked: Run = {}
    for query_id, order in orders.items():
        # Below the depth a text is never read: the first stage's order stands there.
        items = [RankedItem(d, texts.get(d, ""), run[query_id][d], r) for r, d in enumerate(order, start=1)]
        ranked = stage.rerank(spec.queries[query_id], items)
        reranked[query_id] = order_scores([str(item.id) for item in ranked])
    return reranked


def compute_report(
    state: ServingState,
    sessions: sessionmaker[Session],
    spec: EvaluationSpec,
    stage: Reranking | None = None,
) -> RankingReport:
    """Rank every judged query (against the corpus index or the inline documents), re-rank the top of
    each when a stage applies, and score the run."""
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
    if stage is not None:
        run = reranked_run(run, spec, sessions, stage)
    return evaluate_ranking(
        spec.qrels, run, relevance_level=spec.relevance_level, cutoffs=spec.cutoffs, metrics=spec.metrics
    )


def unknown_qrels_documents(
    qrels: Mapping[str, Mapping[str, int]], known: Sequence[str] | set[str]
) -> list[str]:
    """Document ids the qrels name that are not among the known ones, in first-seen order."""
    known_set = set(known)
    return list(dict.fromkeys(d for judged in qrels.values() for d in judged if d not in known_set))
