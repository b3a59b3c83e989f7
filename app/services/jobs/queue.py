"""Jobs as the admin API sees them: list, inspect and cancel (from any process)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.db.admin_models import UNFINISHED_JOB_STATUSES, Job
from app.db.engine import transaction
from app.db.job_repository import JobRepository
from app.services.errors import ConflictError, NotFoundError


@dataclass(frozen=True)
class JobInfo:
    """A job as the admin API shows it (parameters starting with `_` are the worker's, not shown)."""

    id: str
    kind: str
    status: str
    corpus: str | None
    params: dict[str, Any]
    progress: dict[str, Any] | None
    error: str | None
    log_tail: str | None
    model_version: str | None
    gate: dict[str, Any] | None
    owner: str | None
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


def job_info(job: Job) -> JobInfo:
    """Shape a job row for the API."""
    params = {key: value for key, value in (job.params or {}).items() if not key.startswith("_")}
    return JobInfo(
        job.id, job.kind, job.status, job.corpus_name, params, job.progress, job.error, job.log_tail,
        job.model_version, job.gate, job.owner, bool(job.cancel_requested), job.created_at, job.started_at,
        job.finished_at,
    )  # fmt: skip


class JobService:
    """Read and cancel jobs of any kind."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def get(self, job_id: str, kind: str | None = None) -> JobInfo:
        """One job (of `kind`, when given)."""
        with self.sessions() as session:
            job = JobRepository(session).get(job_id)
            if job is None or (kind is not None and job.kind != kind):
                raise NotFoundError(f"job {job_id!r} does not exist", field="id")
            return job_info(job)

    def list(self, limit: int = 100, kind: str | None = None) -> list[JobInfo]:
        """Newest jobs first."""
        with self.sessions() as session:
            return [job_info(job) for job in JobRepository(session).list_recent(limit, kind)]

    def cancel(self, job_id: str) -> JobInfo:
        """Cancel a queued job at once; ask the worker running a running one to stop (within a second)."""
        with transaction(self.sessions) as session:
            repository = JobRepository(session)
            job = repository.get(job_id)
            if job is None:
                raise NotFoundError(f"job {job_id!r} does not exist", field="id")
            if job.status not in UNFINISHED_JOB_STATUSES:
                raise ConflictError(f"job {job_id} is already {job.status}", "id")
            repository.request_cancel(job_id)
            return job_info(job)
