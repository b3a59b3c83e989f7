"""SQL for jobs: enqueue, claim with a lease, renew, cancel, finish, and expire what a dead worker held.

Claiming is `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL (workers never wait on each other's
candidate rows) followed by an update conditioned on the row still being queued, which is also what
makes it safe on SQLite, where one writer at a time is the rule. The `exclusive` column's unique index
is what refuses a second unfinished retraining or activation job, whichever process inserts it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.errors import ConflictError
from app.db.admin_models import UNFINISHED_JOB_STATUSES, Job
from app.db.engine import insert_if_absent
from app.db.models import utcnow
from app.db.notifications import JOBS_CHANNEL, notify_changes

MODEL_SLOT = "model"


class JobRepository:
    """Jobs of every kind."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(
        self,
        job_id: str,
        kind: str,
        corpus: str | None,
        params: dict[str, Any],
        *,
        exclusive: str | None = None,
    ) -> Job:
        """Enqueue a job; ConflictError naming the unfinished one when `exclusive`'s slot is taken."""
        values = {"id": job_id, "kind": kind, "status": "queued", "corpus_name": corpus, "params": params,
                  "exclusive": exclusive, "cancel_requested": False}  # fmt: skip
        # In the caller's transaction: a job is visible (and claimable) only with its inputs.
        if not insert_if_absent(self.session, Job, values):
            holder = self.session.scalar(select(Job).where(Job.exclusive == exclusive)) if exclusive else None
            if holder is None:
                raise ConflictError(
                    f"job {job_id} could not be queued (its slot was just freed); retry", "job"
                )
            what = (
                "retraining or activation job"
                if exclusive == MODEL_SLOT
                else f"{holder.kind} job of this corpus"
            )
            raise ConflictError(
                f"job {holder.id} ({holder.kind}) is {holder.status}; one {what} runs at a time", "job"
            )
        notify_changes(self.session, kind, JOBS_CHANNEL)  # a waiting worker claims it at commit
        job = self.get(job_id)
        assert job is not None  # inserted just now, in this transaction
        return job

    def get(self, job_id: str) -> Job | None:
        """One job by id."""
        return self.session.get(Job, job_id)

    def update(self, job_id: str, **fields: Any) -> None:
        """Set fields of a job (it must exist)."""
        job = self.get(job_id)
        if job is None:
            raise LookupError(f"job {job_id} does not exist")
        for key, value in fields.items():
            setattr(job, key, value)

    def list_recent(self, limit: int, kind: str | None = None) -> list[Job]:
        """Newest jobs first."""
        query = select(Job).order_by(Job.created_at.desc()).limit(limit)
        if kind is not None:
            query = query.where(Job.kind == kind)
        return list(self.session.scalars(query))

    def count_by_state(self) -> dict[tuple[str, str], int]:
        """How many jobs of each (kind, status): one grouped query, for the metrics scrape."""
        rows = self.session.execute(select(Job.kind, Job.status, func.count()).group_by(Job.kind, Job.status))
        return {(str(kind), str(status)): int(count) for kind, status, count in rows}

    def claim(self, owner: str, kinds: tuple[str, ...], lease_seconds: float) -> Job | None:
        """Take the oldest queued job of these kinds for `owner`, leased for `lease_seconds`; None if none."""
        candidates = (
            select(Job.id)
            .where(Job.status == "queued", Job.kind.in_(kinds))
            .order_by(Job.created_at)
            .limit(5)
            .with_for_update(skip_locked=True)
        )
        now = utcnow()
        for job_id in self.session.scalars(candidates).all():
            taken = self.session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status == "queued")
                .values(
                    status="running",
                    owner=owner,
                    started_at=now,
                    lease_expires_at=now + timedelta(seconds=lease_seconds),
                )  # fmt: skip
            )
            if taken.rowcount == 1:  # type: ignore[attr-defined]
                job = self.get(job_id)
                if job is not None:
                    self.session.refresh(job)
                return job
        return None

    def renew(self, job_id: str, owner: str, lease_seconds: float) -> bool | None:
        """Extend `owner`'s lease; returns whether a cancel was asked, None once the job is not `owner`'s."""
        renewed = self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.owner == owner, Job.status == "running")
            .values(lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
        )
        if renewed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return bool(self.session.scalar(select(Job.cancel_requested).where(Job.id == job_id)))

    def finish(self, job_id: str, status: str, **fields: Any) -> None:
        """End a job: its status and outcome; the lease and the exclusive slot are released."""
        self.update(
            job_id, status=status, finished_at=utcnow(), lease_expires_at=None, exclusive=None, **fields
        )

    def requeue(self, job_id: str) -> None:
        """Queue an ended job again (an import resumes where its progress says it stopped)."""
        self.update(job_id, status="queued", error=None, finished_at=None, owner=None, started_at=None,
                    lease_expires_at=None, cancel_requested=False)  # fmt: skip

    def request_cancel(self, job_id: str) -> Job | None:
        """Cancel a queued job at once, or flag a running one for its worker; None if unknown."""
        job = self.get(job_id)
        if job is None or job.status not in UNFINISHED_JOB_STATUSES:
            return job
        if job.status == "queued":
            self.finish(job_id, "cancelled", error="cancelled by an operator before it started")
        else:
            job.cancel_requested = True
        self.session.flush()
        return job

    def expired(self, now: datetime | None = None) -> list[Job]:
        """Running jobs whose worker stopped renewing its lease (it died or hung)."""
        query = select(Job).where(Job.status == "running", Job.lease_expires_at < (now or utcnow()))
        return list(self.session.scalars(query.with_for_update(skip_locked=True)))

    def slot_holder(self, slot: str) -> Job | None:
        """The unfinished job holding an exclusive slot, if any."""
        return self.session.scalar(select(Job).where(Job.exclusive == slot))

    def unfinished(self, kind: str) -> Job | None:
        """A queued or running job of a kind, if any."""
        query = select(Job).where(Job.kind == kind, Job.status.in_(UNFINISHED_JOB_STATUSES))
        return self.session.scalar(query.limit(1))
