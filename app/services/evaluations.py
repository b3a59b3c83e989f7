"""Use cases of the evaluation API: validate and queue an evaluation (run by a job worker), report it."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.db.engine import transaction
from app.db.evaluation_repository import EvaluationRepository
from app.db.job_repository import JobRepository
from app.db.models import Evaluation, utcnow
from app.db.repository import DocumentRepository
from app.services.corpora import require_corpus
from app.services.errors import InvalidInputError, NotFoundError
from app.services.evaluation_jobs import EvaluationSpec, compute_report, unknown_qrels_documents
from app.services.jobs import kinds
from app.services.jobs.context import JobContext, Outcome
from app.services.limits import check_count, check_text
from app.services.runtime import Runtime
from evaluation.metrics import parse_metric

log = logging.getLogger(__name__)
KIND = kinds.EVALUATE


@dataclass(frozen=True)
class EvaluationInfo:
    """An evaluation as the API shows it."""

    id: str
    name: str | None
    status: str
    corpus: str | None
    mode: str
    model: str | None
    metrics: dict[str, float] | None
    per_query: dict[str, dict[str, float]] | None
    error: str | None
    query_count: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None


def _info(row: Evaluation, with_per_query: bool) -> EvaluationInfo:
    return EvaluationInfo(
        id=row.id,
        name=row.name,
        status=row.status,
        corpus=row.corpus_name,
        mode=row.mode,
        model=row.model_version,
        metrics=row.metrics,
        per_query=row.per_query if with_per_query else None,
        error=row.error,
        query_count=len({q["query_id"] for q in row.request.get("qrels", [])}),
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        duration_seconds=row.duration_seconds,
    )


class EvaluationService:
    """Offline evaluation of the serving model on labeled queries."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = runtime.settings

    def _validate(self, request: dict[str, Any]) -> EvaluationSpec:
        settings = self.settings
        check_count("queries", request["queries"], settings.max_evaluation_queries, "queries")
        if request.get("documents") is not None:
            check_count("documents", request["documents"], settings.max_evaluation_documents, "documents")
            for position, document in enumerate(request["documents"]):
                check_text(settings, f"documents[{position}].text", document["text"])
        for position, query in enumerate(request["queries"]):
            check_text(settings, f"queries[{position}].text", query["text"])
        for name in request.get("metrics") or []:
            try:
                parse_metric(name)
            except ValueError as error:
                raise InvalidInputError(f"metrics: {error}", "metrics") from error
        spec = EvaluationSpec.from_request(request)
        unknown_queries = [q for q in spec.qrels if q not in spec.queries]
        if unknown_queries:
            raise InvalidInputError(f"qrels: query ids not in `queries`: {unknown_queries[:10]}", "qrels")
        known = set(spec.documents) if spec.documents is not None else self._corpus_ids(spec.corpus or "")
        unknown_documents = unknown_qrels_documents(spec.qrels, known)
        if unknown_documents:
            where = "`documents`" if spec.documents is not None else f"corpus {spec.corpus!r}"
            raise InvalidInputError(f"qrels: document ids not in {where}: {unknown_documents[:10]}", "qrels")
        return spec

    def _corpus_ids(self, name: str) -> set[str]:
        with self.runtime.sessions() as session:
            corpus = require_corpus(session, name)
            return DocumentRepository(session, corpus).external_ids()

    def submit(self, request: dict[str, Any]) -> EvaluationInfo:
        """Validate, record as queued and queue the job that runs it; returns the queued evaluation."""
        spec = self._validate(request)
        self.runtime.state()  # 503 now rather than a failed evaluation later
        evaluation_id = str(uuid.uuid4())
        with transaction(self.runtime.sessions) as session:
            row = EvaluationRepository(session).add(
                evaluation_id, request.get("name"), spec.corpus, spec.mode, request
            )
            JobRepository(session).add(str(uuid.uuid4()), KIND, spec.corpus, {"evaluation_id": evaluation_id})
            return _info(row, with_per_query=False)

    def get(self, evaluation_id: str) -> EvaluationInfo:
        """One evaluation with its per-query breakdown."""
        with self.runtime.sessions() as session:
            row = EvaluationRepository(session).get(evaluation_id)
            if row is None:
                raise NotFoundError(f"evaluation {evaluation_id!r} does not exist", field="id")
            return _info(row, with_per_query=True)

    def list(self, limit: int = 100) -> list[EvaluationInfo]:
        """The newest evaluations, without per-query details."""
        with self.runtime.sessions() as session:
            return [
                _info(row, with_per_query=False) for row in EvaluationRepository(session).list_recent(limit)
            ]


def run_evaluation(runtime: Runtime, context: JobContext) -> Outcome:
    """The `evaluate` job: rank the judged queries with the serving model and store the report."""
    evaluation_id = str(context.params["evaluation_id"])
    started = time.monotonic()
    with transaction(runtime.sessions) as session:
        row = EvaluationRepository(session).get(evaluation_id)
        if row is None:
            raise NotFoundError(f"evaluation {evaluation_id!r} was deleted", field="id")
        row.status, row.started_at = "running", utcnow()
        spec = EvaluationSpec.from_request(row.request)
    context.progress("ranking", queries=len(spec.qrels))
    state = runtime.state()
    report = compute_report(state, runtime.sessions, spec)
    with transaction(runtime.sessions) as session:
        EvaluationRepository(session).finish(
            evaluation_id,
            "succeeded",
            model_version=state.model_version,
            metrics=report.means,
            per_query=report.per_query,
            duration_seconds=time.monotonic() - started,
        )
    return Outcome({"model_version": state.model_version})
