"""Compare two rankings of a corpus: of one query side by side, and by metrics over its judged queries.

A side is a model (the serving one unless a registered version is named) and a ranking setting (the
request's, else the corpus's calibration for that model, else its default), exactly as `rank` resolves
them, and a re-ranking stage (the side's, else the corpus's) re-orders each side's top as `rank` does.
Both sides rank the same pool, gathered once on both sides by the one first stage
(indexes/first_stage.py), so each side's list is the one `rank` returns for it, filter included. Another
model re-scores the pool's cosines with its own vectors: what it would return once activated, except a
document that neither the serving model nor BM25 puts in its top CANDIDATES. The judged queries are the
corpus's stored pairs of stored documents, judged by the one rule (evaluation/judgements.py); a query
counts when it has a relevant document; unjudged documents are not relevant, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.core.errors import ConflictError, InvalidInputError, NotFoundError
from app.core.limits import check_text
from app.db.admin_models import TrainingPair
from app.db.repositories.documents import DocumentReader, found_documents
from app.db.repositories.pairs import PairRepository
from app.search.first_stage import LiveCorpus
from app.search.ranked import Ranking, ranked_documents
from app.search.ranking_setting import RankingRequest, RankingSetting, RerankSetting, served_setting
from app.serving.context import ServiceContext
from app.serving.encoder import Encoder
from app.serving.state import ServingState
from app.stores.port import CorpusVectors
from app.usecases.reranking import first_stage_depth, rerank_stage, reranked
from evaluation.judgements import relevance_grade
from evaluation.metrics import evaluate_ranking, order_scores, parse_metric
from indexes.first_stage import BOTH, CANDIDATES, Pool, gather, rank_pool
from pairank.models import BI_ENCODER

DEFAULT_METRICS = ("MRR", "HasPositive@1", "HasPositive@10", "MAP")


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a registered model version (None: the serving one) and a ranking."""

    model: str | None = None
    ranking: RankingRequest | None = None


@dataclass(frozen=True)
class SideMetrics:
    """One side over the judged queries: its model, setting, mean and per-query metrics."""

    model: str
    ranking: RankingSetting
    means: dict[str, float]
    per_query: list[dict[str, float]]
    rerank: RerankSetting | None = None  # the re-ranking stage the side ran, if any


@dataclass(frozen=True)
class MetricsComparison:
    """Both sides over the same judged queries (the most recently judged `limit` of them)."""

    metrics: list[str]
    queries: list[str]
    relevant: list[int]
    judged_queries: int
    left: SideMetrics
    right: SideMetrics


def judged_queries(pairs: Sequence[TrainingPair], external_ids: set[str]) -> dict[str, dict[str, int]]:
    """query text -> {document id: grade} for queries with a relevant stored document, the most recently
    judged first (by each query's latest judgement)."""
    latest: dict[str, Any] = {}
    grades: dict[str, dict[str, int]] = {}
    for pair in pairs:
        if pair.document_id is None or pair.document_id not in external_ids:
            continue
        grades.setdefault(pair.query, {})[pair.document_id] = relevance_grade(pair.label)
        when = pair.updated_at or pair.created_at
        latest[pair.query] = max(latest.get(pair.query, when), when)
    judged = {q: g for q, g in grades.items() if any(v > 0 for v in g.values())}
    return dict(sorted(judged.items(), key=lambda item: latest[item[0]], reverse=True))


class CompareService:
    """Side-by-side rankings and their metrics over the judged queries."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def _encoder(self, state: ServingState, side: Side, field: str) -> Encoder:
        """The serving encoder, or a registered version's (loaded for comparisons)."""
        if side.model is None or side.model == state.model_version:
            return state.encoder
        registry, version = self.service.serving.registry, side.model
        try:
            # Resolved through the registry: its stored files, fetched and verified on any machine.
            return self.service.serving.other_models.encoder(
                version, lambda: registry.spec(version, BI_ENCODER)
            )
        except (NotFoundError, ConflictError) as error:
            raise type(error)(f"{field}: {error.message}", field) from error

    def _setting(self, opened: CorpusVectors, side: Side, version: str) -> RankingSetting:
        return served_setting(opened.settings, side.ranking, version)

    def _pools(
        self,
        state: ServingState,
        opened: CorpusVectors,
        queries: Sequence[str],
        conditions: dict[str, Any] | None,
    ) -> list[Pool]:
        """Each query's pool on both sides, for any setting to rank CANDIDATES deep (one search)."""
        allowed = None
        if conditions:
            with self.service.sessions() as session:
                allowed = DocumentReader(session, opened.corpus_id).ids_matching(conditions)
        vectors = state.encoder.encode_bulk(list(queries), label="comparison")
        return gather(LiveCorpus(state.store, opened), queries, vectors, CANDIDATES, BOTH, allowed)

    def _stage(self, opened: CorpusVectors, side: Side, version: str, field: str) -> RerankSetting | None:
        """The side's re-ranking stage, resolved as `rank` resolves it with the side's model (the
        corpus's unless the side says)."""
        requested = side.ranking.rerank if side.ranking is not None else None
        return rerank_stage(self.service, requested, opened.settings, version, f"{field}.rerank.model")

    def _texts(
        self, opened: CorpusVectors, pools: Sequence[Pool], metadata: bool
    ) -> dict[int, tuple[str, str, dict[str, Any] | None]]:
        with self.service.sessions() as session:
            return found_documents(session, opened.corpus_id, [d for p in pools for d in p.ids], metadata)

    @staticmethod
    def _rescored(
        encoder: Encoder, queries: Sequence[str], pools: list[Pool], texts: dict[int, Any]
    ) -> list[Pool]:
        """The pools with this encoder's cosines (each document encoded once for all the queries)."""
        unique = list(dict.fromkeys(d for pool in pools for d in pool.ids if d in texts))
        row = {doc_id: i for i, doc_id in enumerate(unique)}
        documents = encoder.encode_bulk([texts[d][1] for d in unique], label="comparison") if unique else None
        vectors = encoder.encode_bulk(list(queries), label="comparison")
        rescored = []
        for pool, vector in zip(pools, vectors, strict=True):
            keep = [i for i, doc_id in enumerate(pool.ids) if doc_id in row]
            ids = [pool.ids[i] for i in keep]
            cosines = documents[[row[d] for d in ids]] @ vector if ids and documents is not None else []
            lexical = [pool.lexical[i] for i in keep] if pool.lexical is not None else None
            rescored.append(
                Pool(ids, [float(c) for c in cosines], lexical, pool.dense_side, pool.lexical_side)
            )
        return rescored

    def _side_pools(
        self, state: ServingState, side: Side, field: str, queries: Sequence[str], pools: list[Pool],
        texts: dict[int, Any],
    ) -> tuple[str, list[Pool]]:  # fmt: skip
        encoder = self._encoder(state, side, field)
        if encoder is state.encoder:
            return state.model_version, pools
        return encoder.version, self._rescored(encoder, queries, pools, texts)

    def compare_query(
        self, name: str, query: str, k: int, left: Side, right: Side, conditions: dict[str, Any] | None = None
    ) -> tuple[Ranking, Ranking]:
        """The query ranked by both sides (top k of the same pool, k <= CANDIDATES)."""
        check_text(self.settings, "query", query)
        state = self.service.serving.state()
        opened = state.store.get(name)
        pools = self._pools(state, opened, [query], conditions)
        texts = self._texts(opened, pools, metadata=True)
        rankings = []
        for side, field in ((left, "left"), (right, "right")):
            version, (pool,) = self._side_pools(state, side, f"{field}.model", [query], pools, texts)
            how, second = self._setting(opened, side, version), self._stage(opened, side, version, field)
            shown = min(k, CANDIDATES)
            items = ranked_documents(rank_pool(pool, how, first_stage_depth(shown, second)), texts)
            if second is not None:
                items = reranked(self.service, query, items, second, shown, f"{field}.rerank.model")
            rankings.append(Ranking(items[:shown], version, how, second))
        return rankings[0], rankings[1]

    def compare_metrics(
        self,
        name: str,
        left: Side,
        right: Side,
        metrics: Sequence[str] | None,
        limit: int,
        conditions: dict[str, Any] | None = None,
    ) -> MetricsComparison:
        """Both sides scored on the corpus's judged queries (the most recently judged `limit`)."""
        names = list(dict.fromkeys(metrics or DEFAULT_METRICS))
        for metric in names:
            try:
                parse_metric(metric)
            except ValueError as error:
                raise InvalidInputError(f"metrics: {error}", "metrics") from error
        state = self.service.serving.state()
        opened = state.store.get(name)
        with self.service.sessions() as session:
            pairs = PairRepository(session, opened.corpus_id).list()
            ids = {p.document_id for p in pairs if p.document_id is not None}
            existing = set(DocumentReader(session, opened.corpus_id).ids_of(sorted(ids)))
        judged = judged_queries(pairs, existing)
        if not judged:
            raise ConflictError(
                f"pairs: corpus {name!r} has no judged query with a relevant stored document; judge first",
                "pairs",
            )
        queries = list(judged)[:limit]
        qrels = {str(i): judged[q] for i, q in enumerate(queries)}
        pools = self._pools(state, opened, queries, conditions)
        texts = self._texts(opened, pools, metadata=False)
        sides = []
        for side, field in ((left, "left"), (right, "right")):
            version, side_pools = self._side_pools(state, side, f"{field}.model", queries, pools, texts)
            how, second = self._setting(opened, side, version), self._stage(opened, side, version, field)
            stage_field, run = f"{field}.rerank.model", {}
            for i, pool in enumerate(side_pools):
                items = ranked_documents(rank_pool(pool, how, CANDIDATES), texts)
                if second is not None:  # re-ranked as a rank call would re-rank the query
                    items = reranked(self.service, queries[i], items, second, CANDIDATES, stage_field)
                # Rank-derived scores: trec_eval's order (score, then id) is then exactly this order.
                run[str(i)] = order_scores([str(item.id) for item in items])
            report = evaluate_ranking(qrels, run, metrics=names)
            per_query = [report.per_query[str(i)] for i in range(len(queries))]
            sides.append(SideMetrics(version, how, report.means, per_query, second))
        relevant = [sum(1 for g in judged[q].values() if g > 0) for q in queries]
        return MetricsComparison(names, queries, relevant, len(judged), sides[0], sides[1])
