"""Jobs (retraining, activation, imports): read, cancel, resume, and wait for the end (evaluations too)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from app.schemas.admin import JobOut
from app.schemas.evaluations import EvaluationOut
from pairank.client.calls import Call, Pause, Steps, call, reads
from pairank.client.errors import JobCancelledError, JobFailedError, WaitTimeoutError
from pairank.client.ops import segment
from pairank.client.progress import RecordProgress, reporter

R = TypeVar("R", JobOut, EvaluationOut)
UNFINISHED = ("queued", "running")


class JobHandle(Protocol):
    """What a job's operations read and update: its latest known state."""

    record: JobOut


def _path(record: JobOut) -> str:
    # Import and language jobs are the corpus's (a write key follows them); the others are admin's.
    if record.kind == "import" and record.corpus is not None:
        return f"/v1/corpora/{segment(record.corpus)}/imports/{segment(record.id)}"
    if record.kind == "language" and record.corpus is not None:
        return f"/v1/corpora/{segment(record.corpus)}/language/{segment(record.id)}"
    return f"/admin/jobs/{segment(record.id)}"


def _read(record: JobOut) -> Call[JobOut]:
    return call("GET", _path(record), reads(JobOut), idempotent=True)


def refresh(job: JobHandle) -> Steps[JobOut]:
    """Read the job's state again (status, progress, gate, error)."""
    job.record = yield _read(job.record)
    return job.record


def cancel(job: JobHandle) -> Steps[JobOut]:
    """Cancel a queued job, or stop a running one within a second (409 once it has ended)."""
    job.record = yield call("POST", f"{_path(job.record)}/cancel", reads(JobOut), idempotent=False)
    return job.record


def resume(job: JobHandle) -> Steps[JobOut]:
    """Continue a failed, cancelled or interrupted import from its last committed chunk."""
    job.record = yield call("POST", f"{_path(job.record)}/resume", reads(JobOut), idempotent=False)
    return job.record


def poll(
    read: Callable[[], Call[R]],
    timeout: float | None,
    poll_interval: float,
    progress: RecordProgress,
    description: str,
) -> Steps[R]:
    """Read a record every `poll_interval` seconds until it has ended; raise when it did not succeed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    report = reporter(progress, description)
    try:
        record: R = yield read()
        report.polled(record)
        while record.status in UNFINISHED:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise WaitTimeoutError(record, timeout or 0.0)
            yield Pause(poll_interval if left is None else min(poll_interval, left))
            record = yield read()
            report.polled(record)
    finally:
        report.close()
    if record.status == "cancelled":
        raise JobCancelledError(record)
    if record.status != "succeeded":
        raise JobFailedError(record)
    return record


def wait(
    job: JobHandle,
    timeout: float | None = None,
    *,
    poll_interval: float = 0.5,
    progress: RecordProgress = None,
) -> Steps[JobOut]:
    """Poll until the job ends: its final state once it succeeded; `JobFailedError` (`JobCancelledError`)
    when it failed (was cancelled), `WaitTimeoutError` after `timeout` seconds (None: no limit).
    `progress`: True for a tqdm bar, or `callback(record)` after every poll."""
    record = job.record
    into = f" into {record.corpus}" if record.kind == "import" and record.corpus else f" {record.id[:8]}"
    description = record.kind + into
    try:
        job.record = yield from poll(lambda: _read(job.record), timeout, poll_interval, progress, description)
    except (JobFailedError, WaitTimeoutError) as ended:
        if isinstance(ended.record, JobOut):
            job.record = ended.record
        raise
    return job.record
