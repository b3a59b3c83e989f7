"""The job worker: claims queued jobs, keeps their leases fresh, obeys cancels, records the outcome.

One worker runs one job at a time. While a job runs, a keeper thread renews its lease every second
and reads its cancel flag, so a cancel sent to any API process reaches the job within a second, and a
worker that dies (kill -9, lost host) stops renewing: once its lease expires, any other worker (or the
next start) fails the job. Such jobs are failed, not retried: a retraining or an import that stopped
half-way is for an operator to look at and resubmit (an import resumes from its last chunk). A job that
meets a database outage is different: nothing is wrong with it, so once the database answers again it
is queued again (at most MAX_REQUEUES times) and resumes; its lease (30 s by default) outlives a short
outage meanwhile.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.control.job_context import JobCancelled, JobContext, Outcome
from app.control.job_kinds import on_finished
from app.db.engine import DATABASE_UNAVAILABLE, transaction
from app.db.notifications import JOBS_CHANNEL, ChangeWaiter
from app.db.repositories.jobs import JobRepository
from app.serving.context import ServiceContext

log = logging.getLogger(__name__)
Handler = Callable[[ServiceContext, JobContext], Outcome]
_RENEW_SECONDS = 1.0
_EXPIRY_SECONDS = 5.0  # how often an idle worker looks for jobs whose worker stopped renewing
REQUEUED = "_requeued"  # in a job's params: how often a database outage sent it back to the queue
MAX_REQUEUES = 3


def worker_name() -> str:
    """A name unique to this worker: host, process and a random suffix."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def fail_expired(sessions: sessionmaker[Session]) -> list[str]:
    """Fail running jobs whose worker stopped renewing its lease; returns their ids."""
    with transaction(sessions) as session:
        repository = JobRepository(session)
        lost = repository.expired()
        for job in lost:
            owner = job.owner or "its worker"
            repository.finish(
                job.id, "failed", error=f"lost: {owner} stopped renewing its lease; submit it again"
            )
            on_finished(session, job, "failed")
        ids = [job.id for job in lost]
    if ids:
        log.warning("failed %d job(s) whose worker stopped: %s", len(ids), ", ".join(ids))
    return ids


class JobWorker:
    """Runs queued jobs of the given kinds, each with its handler (app/main.py hands them over)."""

    def __init__(
        self,
        service: ServiceContext,
        handlers: Mapping[str, Handler],
        kinds: tuple[str, ...] | None = None,
        lease_seconds: float | None = None,
        poll_seconds: float = 1.0,
    ) -> None:
        self.service = service
        self.sessions = service.sessions
        self.handlers = dict(handlers)
        self.kinds = kinds or tuple(self.handlers)
        self.lease_seconds = lease_seconds or service.settings.job_lease_seconds
        self.poll_seconds = poll_seconds
        self.owner = worker_name()
        self.current: JobContext | None = None
        self._released: set[str] = set()  # jobs stopped because this worker stops (not cancelled)

    def run_forever(self, stop: threading.Event) -> None:
        """Claim and run jobs until `stop` is set; a job running then is stopped and queued again.

        Idle, it waits for a NOTIFY of a queued job on PostgreSQL (polling only as the fallback), and
        polls every `poll_seconds` on SQLite; lost workers' jobs are failed every `_EXPIRY_SECONDS`.
        """
        log.info("job worker %s: running %s", self.owner, ", ".join(self.kinds))
        with self.sessions() as session:
            waiter = ChangeWaiter(session.get_bind().engine, JOBS_CHANNEL)  # no query: just the engine
        next_expiry = 0.0
        try:
            while not stop.is_set():
                try:
                    if time.monotonic() >= next_expiry:
                        fail_expired(self.sessions)
                        next_expiry = time.monotonic() + min(_EXPIRY_SECONDS, self.lease_seconds / 2)
                    ran = self.run_once(stop)
                except Exception:  # noqa: BLE001 - a database hiccup must not end the worker
                    log.exception("job worker %s: claiming failed", self.owner)
                    ran = False
                if not ran:
                    waiter.wait(self.poll_seconds, stop)
        finally:
            waiter.close()

    def run_once(self, stop: threading.Event | None = None) -> bool:
        """Claim one job and run it to its end; False when none was queued."""
        with transaction(self.sessions) as session:
            job = JobRepository(session).claim(self.owner, self.kinds, self.lease_seconds)
            if job is None:
                return False
            context = JobContext(
                job.id, job.kind, job.corpus_name, dict(job.params), job.progress, self.sessions
            )
        log.info("job worker %s: running %s job %s", self.owner, context.kind, context.job_id)
        self.current = context
        keeper_done = threading.Event()
        keeper = threading.Thread(
            target=self._keep_lease, args=(context, keeper_done, stop), name="pairank-lease", daemon=True
        )
        keeper.start()
        try:
            self._run(context)
        finally:
            keeper_done.set()
            keeper.join()
            self.current = None
        return True

    def _run(self, context: JobContext) -> None:
        handler = self.handlers[context.kind]
        try:
            outcome = handler(self.service, context)
            context.check_cancel()
        except JobCancelled:
            if context.job_id in self._released:  # this worker is stopping: another one takes the job
                self._release(context)
            else:
                self._finish(context, "cancelled", Outcome({"error": context.cancel_reason}))
        except DATABASE_UNAVAILABLE as error:
            if not self._requeue_when_back(context):
                self._finish(context, "failed", Outcome({"error": f"the database was unreachable: {error}"}))
        except Exception as error:  # noqa: BLE001 - every failure ends the job with its reason
            log.exception("job %s failed", context.job_id)
            message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
            self._finish(context, "failed", Outcome({"error": message}))
        else:
            self._finish(context, "succeeded", outcome)

    def _requeue_if_ours(self, context: JobContext, why: str, **fields: Any) -> None:
        """Queue the job again (setting `fields` first) if this worker still holds it running."""
        with transaction(self.sessions) as session:
            repository = JobRepository(session)
            job = repository.get(context.job_id)
            if job is not None and job.owner == self.owner and job.status == "running":
                if fields:
                    repository.update(job.id, **fields)
                repository.requeue(job.id)
                log.warning("job %s %s; queued again", context.job_id, why)

    def _release(self, context: JobContext) -> None:
        """Hand a job this stopping worker began back to the queue (an import resumes where it was)."""
        self._requeue_if_ours(context, f"stopped with its worker {self.owner}")

    def _requeue_when_back(self, context: JobContext) -> bool:
        """The database went away under the job: queue it again once it answers (within the lease), so
        any worker resumes it (an import from its last committed chunk, other kinds from the start).
        False when the job was requeued too often already (it then fails as any other error does)."""
        if int(context.params.get(REQUEUED, 0)) >= MAX_REQUEUES:
            return False
        deadline = time.monotonic() + self.lease_seconds
        while time.monotonic() < deadline:
            try:
                requeued = {**context.params, REQUEUED: int(context.params.get(REQUEUED, 0)) + 1}
                self._requeue_if_ours(context, "met a database outage", params=requeued)
                return True
            except DATABASE_UNAVAILABLE:
                time.sleep(1)
        log.error("job %s: the database stayed away; its lease runs out and it fails", context.job_id)
        return True

    def _finish(self, context: JobContext, status: str, outcome: Outcome) -> None:
        with transaction(self.sessions) as session:
            repository = JobRepository(session)
            job = repository.get(context.job_id)
            if job is None or job.owner != self.owner or job.status != "running":
                log.warning(
                    "job %s was taken from this worker (lease expired); outcome dropped", context.job_id
                )
                return
            repository.finish(context.job_id, status, **outcome.fields)
            for follow_up in outcome.follow_ups:
                repository.add(str(uuid.uuid4()), follow_up.kind, follow_up.corpus, follow_up.params,
                               exclusive=follow_up.exclusive)  # fmt: skip
            on_finished(session, job, status)

    def _keep_lease(self, context: JobContext, done: threading.Event, stop: threading.Event | None) -> None:
        while not done.wait(_RENEW_SECONDS):
            try:
                with transaction(self.sessions) as session:
                    cancel = JobRepository(session).renew(context.job_id, self.owner, self.lease_seconds)
            except Exception:  # noqa: BLE001 - try again; the lease outlives a few missed renewals
                log.exception("renewing the lease of job %s failed", context.job_id)
                continue
            if cancel is None:
                log.error("job %s: lease lost; stopping it", context.job_id)
                context.cancel("its worker lost the lease")
                return
            if cancel:
                context.cancel()
            elif stop is not None and stop.is_set():
                self._released.add(context.job_id)
                context.cancel(f"its worker {self.owner} stopped; queued again for another worker")
