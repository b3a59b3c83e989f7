"""The job table as a queue, on both databases: one model job at a time, claims, leases, cancels."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.control.job_queue import JobService
from app.control.worker import fail_expired
from app.core.errors import ConflictError
from app.db.engine import transaction
from app.db.models import utcnow
from app.db.repositories.jobs import MODEL_SLOT, JobRepository


def enqueue(
    sessions: sessionmaker[Session], job_id: str, kind: str = "retrain", slot: str | None = MODEL_SLOT
) -> None:
    """Add a queued job."""
    with transaction(sessions) as session:
        JobRepository(session).add(job_id, kind, None, {}, exclusive=slot)


def test_one_model_job_at_a_time_is_enforced_by_the_database(sessions: sessionmaker[Session]) -> None:
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def submit(job_id: str) -> None:
        barrier.wait()
        try:
            enqueue(sessions, job_id, "retrain" if job_id < "j2" else "activate")
            outcomes.append("queued")
        except ConflictError as error:
            assert error.field == "job"
            outcomes.append("conflict")

    threads = [threading.Thread(target=submit, args=(f"j{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "conflict", "conflict", "queued"]
    enqueue(sessions, "evaluation", "evaluate", slot=None)  # other kinds do not take the slot
    (holder,) = [j for j in JobService(sessions).list() if j.kind in ("retrain", "activate")]
    JobService(sessions).cancel(holder.id)  # a queued job is cancelled at once, releasing the slot
    enqueue(sessions, "next")


def test_each_job_is_claimed_once(sessions: sessionmaker[Session]) -> None:
    for i in range(20):
        enqueue(sessions, f"e{i:02d}", "evaluate", slot=None)
    claimed: dict[str, list[str]] = {"a": [], "b": [], "c": []}

    def work(owner: str) -> None:
        while True:
            with transaction(sessions) as session:
                job = JobRepository(session).claim(owner, ("evaluate",), 30)
                if job is None:
                    return
                claimed[owner].append(job.id)

    threads = [threading.Thread(target=work, args=(owner,)) for owner in claimed]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [job_id for ids in claimed.values() for job_id in ids]
    assert sorted(everything) == [f"e{i:02d}" for i in range(20)]  # all of them, none twice
    with sessions() as session:
        job = JobRepository(session).get("e00")
        assert job is not None and job.status == "running" and job.owner in claimed


def test_leases_cancels_and_expiry(sessions: sessionmaker[Session]) -> None:
    enqueue(sessions, "alive")
    with transaction(sessions) as session:
        repository = JobRepository(session)
        assert repository.claim("w1", ("retrain",), 30) is not None
        assert repository.renew("alive", "w1", 30) is False  # renewed, no cancel asked
        assert repository.renew("alive", "someone-else", 30) is None  # not theirs
    JobService(sessions).cancel("alive")
    with transaction(sessions) as session:
        assert JobRepository(session).renew("alive", "w1", 30) is True  # the worker sees the cancel
    enqueue(sessions, "lost", "evaluate", slot=None)
    with transaction(sessions) as session:
        repository = JobRepository(session)
        repository.claim("w2", ("evaluate",), 30)
        repository.update("lost", lease_expires_at=utcnow() - timedelta(seconds=1))
    assert fail_expired(sessions) == ["lost"]
    info = JobService(sessions).get("lost")
    assert info.status == "failed" and "w2 stopped renewing its lease" in (info.error or "")
    assert JobService(sessions).get("alive").status == "running"  # a live lease is left alone
    with pytest.raises(ConflictError):
        JobService(sessions).cancel("lost")
