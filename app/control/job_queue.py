"""Jobs as the admin API sees them: list, inspect and cancel (from any process)."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import ConflictError, NotFoundError
from app.db.admin_models import UNFINISHED_JOB_STATUSES, Job
from app.db.engine import transaction
from app.db.repositories.jobs import JobRepository


class JobService:
    """Read and cancel jobs of any kind."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def get(self, job_id: str, kind: str | None = None) -> Job:
        """One job (of `kind`, when given)."""
        with self.sessions() as session:
            job = JobRepository(session).get(job_id)
            if job is None or (kind is not None and job.kind != kind):
                raise NotFoundError(f"job {job_id!r} does not exist", field="id")
            return job

    def list(self, limit: int = 100, kind: str | None = None) -> list[Job]:
        """Newest jobs first."""
        with self.sessions() as session:
            return JobRepository(session).list_recent(limit, kind)

    def cancel(self, job_id: str) -> Job:
        """Cancel a queued job at once; ask the worker running a running one to stop (within a second)."""
        with transaction(self.sessions) as session:
            repository = JobRepository(session)
            job = repository.get(job_id)
            if job is None:
                raise NotFoundError(f"job {job_id!r} does not exist", field="id")
            if job.status not in UNFINISHED_JOB_STATUSES:
                raise ConflictError(f"job {job_id} is already {job.status}", "id")
            repository.request_cancel(job_id)
            return job
