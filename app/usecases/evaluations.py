"""Use cases of the evaluation API: validate and queue an evaluation (run by a job worker), report it."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import asdict

from app.control import job_kinds
from app.control.job_context import JobContext, Outcome
from app.core.errors import InvalidInputError, NotFoundError
from app.core.limits import check_count, check_text
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.db.models import Evaluation, utcnow
from app.db.repositories.documents import DocumentRepository
from app.db.repositories.evaluations import EvaluationRepository
from app.db.repositories.jobs import JobRepository
from app.search.decisions import required_decider
from app.search.ranked import RankedItem
from app.search.ranking_setting import RerankSetting
from app.serving.context import ServiceContext
from app.usecases.calibration.match import open_world_report
from app.usecases.evaluation_report import EvaluationSpec, Reranking, compute_report, unknown_qrels_documents
from app.usecases.reranking import rerank_stage, reranked, stage_record
from evaluation.metrics import parse_metric

log = logging.getLogger(__name__)
KIND = job_kinds.EVALUATE


class EvaluationService:
    """Offline evaluation of the serving model on labeled queries."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service
        self.settings = service.settings

    def _validate(self, spec: EvaluationSpec) -> None:
        settings = self.settings
        check_count("queries", list(spec.queries), settings.max_evaluation_queries, "queries")
        if spec.documents is not None:
            check_count("documents", list(spec.documents), settings.max_evaluation_documents, "documents")
            for position, text in enumerate(spec.documents.values()):
                check_text(settings, f"documents[{position}].text", text)
        for position, text in enumerate(spec.queries.values()):
            check_text(settings, f"queries[{position}].text", text)
        for name in spec.metrics or []:
            try:
                parse_metric(name)
            except ValueError as error:
                raise InvalidInputError(f"metrics: {error}", "metrics") from error
        unknown_queries = [q for q in spec.qrels if q not in spec.queries]
        if unknown_queries:
            raise InvalidInputError(f"qrels: query ids not in `queries`: {unknown_queries[:10]}", "qrels")
        known = set(spec.documents) if spec.documents is not None else self._corpus_ids(spec.corpus or "")
        unknown_documents = unknown_qrels_documents(spec.qrels, known)
        if unknown_documents:
            where = "`documents`" if spec.documents is not None else f"corpus {spec.corpus!r}"
            raise InvalidInputError(f"qrels: document ids not in {where}: {unknown_documents[:10]}", "qrels")

    def _corpus_ids(self, name: str) -> set[str]:
        with self.service.sessions() as session:
            corpus = require_corpus(session, name)
            return DocumentRepository(session, corpus).external_ids()

    def submit(self, spec: EvaluationSpec, name: str | None = None) -> Evaluation:
        """Validate, record as queued and queue the job that runs it; returns the queued evaluation."""
        self._validate(spec)
        request = {"name": name, **spec.to_request()}
        evaluation_stage(self.service, spec)  # 404/409 now rather than a failed evaluation later
        state = self.service.serving.state()  # 503 now rather than a failed evaluation later
        if spec.open_world is not None and spec.corpus is not None:
            settings = state.store.get(spec.corpus).settings  # 409 now: the corpus must be calibrated
            required_decider(
                settings.match_calibration, settings.match_policy, state.model_version, spec.corpus
            )
        evaluation_id = str(uuid.uuid4())
        with transaction(self.service.sessions) as session:
            row = EvaluationRepository(session).add(evaluation_id, name, spec.corpus, spec.mode, request)
            JobRepository(session).add(str(uuid.uuid4()), KIND, spec.corpus, {"evaluation_id": evaluation_id})
            return row

    def get(self, evaluation_id: str) -> Evaluation:
        """One evaluation with its per-query breakdown."""
        with self.service.sessions() as session:
            row = EvaluationRepository(session).get(evaluation_id)
            if row is None:
                raise NotFoundError(f"evaluation {evaluation_id!r} does not exist", field="id")
            return row

    def list(self, limit: int = 100) -> list[Evaluation]:
        """The newest evaluations."""
        with self.service.sessions() as session:
            return EvaluationRepository(session).list_recent(limit)


def evaluation_stage(service: ServiceContext, spec: EvaluationSpec) -> RerankSetting | None:
    """The re-ranking stage an evaluation runs: the request's choices over its corpus's stage (404, 409
    naming `rerank.model` as a rank call would)."""
    model = service.serving.state().model_version
    if spec.corpus is None:
        return rerank_stage(service, spec.rerank, None, model)
    with service.sessions() as session:
        corpus = require_corpus(session, spec.corpus)
        return rerank_stage(service, spec.rerank, corpus, model)


def run_evaluation(service: ServiceContext, context: JobContext) -> Outcome:
    """The `evaluate` job: rank the judged queries with the serving model and store the report."""
    evaluation_id = str(context.params["evaluation_id"])
    started = time.monotonic()
    with transaction(service.sessions) as session:
        row = EvaluationRepository(session).get(evaluation_id)
        if row is None:
            raise NotFoundError(f"evaluation {evaluation_id!r} was deleted", field="id")
        row.status, row.started_at = "running", utcnow()
        spec = EvaluationSpec.from_request(row.request)
    context.progress("ranking", queries=len(spec.qrels))
    state = service.serving.state()
    second = evaluation_stage(service, spec)
    reranking = None
    if second is not None:
        stage = second  # bound for the closure: the stage this evaluation resolved

        def rerank(query: str, items: list[RankedItem]) -> list[RankedItem]:
            return reranked(service, query, items, stage, len(items))

        reranking = Reranking(stage.k, rerank)
    setting = spec.setting(state)
    if spec.open_world is not None and spec.corpus is not None:
        relevant = {q: {d for d, g in j.items() if g >= spec.relevance_level} for q, j in spec.qrels.items()}
        queries = {q: spec.queries[q] for q in spec.qrels}
        share, seed = float(spec.open_world["share"]), int(spec.open_world["seed"])
        report = open_world_report(service, spec.corpus, queries, relevant, share, seed)
    else:
        report = compute_report(state, service.sessions, spec, setting, reranking)
    with transaction(service.sessions) as session:
        EvaluationRepository(session).finish(
            evaluation_id,
            "succeeded",
            model_version=state.model_version,
            ranking=asdict(setting),
            metrics=report.means,
            per_query=report.per_query,
            rerank=stage_record(second),
            duration_seconds=time.monotonic() - started,
        )
    return Outcome({"model_version": state.model_version})
