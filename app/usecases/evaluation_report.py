"""What an evaluation job computes: rank the labelled queries with the serving model (and a re-ranking
stage, when one applies), score them like trec_eval."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.orm import Session, sessionmaker

from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentRepository
from app.search.candidates import live_candidates
from app.search.ranked import RankedItem
from app.search.ranking_setting import RankingRequest, RerankRequest, served_setting
from app.serving.state import ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import candidate_scores, fused_run
from evaluation.metrics import DEFAULT_CUTOFFS, RankingReport, evaluate_ranking, order_scores, rank_documents
from indexes.first_stage import sides_of
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
    ranking: RankingRequest = RankingRequest()  # unset fields: as `rank` resolves them for a corpus
    rerank: RerankRequest | None = None  # None: a corpus's own stage, if any
    conditions: dict[str, Any] | None = None  # a corpus evaluation's metadata filter
    open_world: dict[str, Any] | None = None  # {"share", "seed"}: score the match decisions open-world

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
            ranking=RankingRequest(request.get("ranking"), request.get("alpha"), request.get("fusion")),
            rerank=RerankRequest(
                bool(asked.get("enabled", True)), asked.get("model"), asked.get("k"), asked.get("weight")
            )
            if asked is not None
            else None,
            conditions=_conditions(request.get("filter")),
            open_world=request.get("open_world"),
        )

    def to_request(self) -> dict[str, Any]:
        """The JSON stored with the evaluation, which `from_request` reads back."""
        rerank = self.rerank
        return {
            "corpus": self.corpus,
            "documents": [{"id": d, "text": t} for d, t in self.documents.items()]
            if self.documents
            else None,
            "queries": [{"id": q, "text": t} for q, t in self.queries.items()],
            "qrels": [
                {"query_id": q, "document_id": d, "relevance": g}
                for q, judged in self.qrels.items()
                for d, g in judged.items()
            ],
            "mode": self.mode,
            "relevance_level": self.relevance_level,
            "metrics": self.metrics,
            "cutoffs": self.cutoffs,
            "top_k": self.top_k,
            "ranking": self.ranking.mode,
            "alpha": self.ranking.alpha,
            "fusion": self.ranking.fusion,
            "filter": self.conditions,
            "open_world": self.open_world,
            "rerank": {
                "enabled": rerank.enabled,
                "model": rerank.model,
                "k": rerank.k,
                "weight": rerank.weight,
            }
            if rerank is not None
            else None,
        }

    def setting(self, state: ServingState) -> RankingSetting:
        """The first stage's setting: as `rank` resolves it for the corpus, else (inline documents) the
        request's over dense."""
        if self.corpus is not None:
            return served_setting(state.store.get(self.corpus).settings, self.ranking, state.model_version)
        asked = self.ranking
        alpha = asked.alpha if asked.alpha is not None else DEFAULT_ALPHA
        return RankingSetting(asked.mode or "dense", alpha, asked.fusion or "linear")


def _conditions(stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A stored request's filter as the use cases take it: `{key: value}` or `{key: {"in": [...]}}`."""
    if not stored:
        return None
    conditions: dict[str, Any] = {}
    for key, value in stored.items():
        if not isinstance(value, Mapping):
            conditions[key] = value
        elif "in" in value or "in_" in value:
            conditions[key] = {"in": list(value.get("in", value.get("in_", [])))}
        else:  # a range: its bounds that were given
            conditions[key] = {bound: v for bound, v in value.items() if v is not None}
    return conditions


@dataclass(frozen=True)
class Reranking:
    """An evaluation's re-ranking stage: how many of each query's best it reads, and the call that
    re-orders them (app/usecases/reranking.py, as a rank call does)."""

    depth: int
    rerank: Callable[[str, list[RankedItem]], list[RankedItem]]


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
    setting: RankingSetting,
    stage: Reranking | None = None,
) -> RankingReport:
    """Rank every judged query by the one first stage under `setting` (`spec.setting`), against the
    live corpus as `rank` answers or the inline documents; re-rank the top of each when a stage
    applies, and score the run."""
    queries = {q: spec.queries[q] for q in spec.qrels}
    sides = sides_of(setting)
    if spec.documents is not None:
        dataset = BeirDataset(corpus=spec.documents, queries=queries, qrels=spec.qrels)
        candidates = candidate_scores(state.encoder.encode_bulk, dataset, spec.mode, spec.top_k, sides)
    else:
        assert spec.corpus is not None
        dataset = BeirDataset(corpus={}, queries=queries, qrels=spec.qrels)
        candidates = live_candidates(
            state, sessions, spec.corpus, dataset, spec.mode, spec.top_k, sides, spec.conditions
        )
    run = fused_run(candidates, setting, spec.top_k)
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
