"""What a running job sees: its parameters, a way to report progress, and whether it was cancelled."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.db.engine import transaction
from app.db.repositories.jobs import JobRepository


class JobCancelled(Exception):
    """Raised by `check_cancel` once a cancel was requested; the worker records the job as cancelled."""


@dataclass(frozen=True)
class FollowUp:
    """A job to enqueue in the same transaction that finishes this one (retraining -> activation)."""

    kind: str
    corpus: str | None
    params: dict[str, Any]
    exclusive: str | None = None


@dataclass
class Outcome:
    """What a handler returns: fields to store on the job, and jobs to enqueue after it."""

    fields: dict[str, Any] = field(default_factory=dict)
    follow_ups: list[FollowUp] = field(default_factory=list)


@dataclass
class JobContext:
    """One claimed job, as its handler sees it."""

    job_id: str
    kind: str
    corpus: str | None
    params: dict[str, Any]
    progress_so_far: dict[str, Any] | None
    sessions: sessionmaker[Session]
    cancelled: threading.Event = field(default_factory=threading.Event)
    cancel_reason: str = "cancelled by an operator"
    _on_cancel: list[Callable[[], None]] = field(default_factory=list)

    def update(self, **fields: Any) -> None:
        """Store fields on the job row now (progress, log tail)."""
        with transaction(self.sessions) as session:
            JobRepository(session).update(self.job_id, **fields)

    def progress(self, stage: str, **fields: Any) -> None:
        """Report the stage the job is in, with details (what `GET .../jobs/{id}` shows)."""
        self.update(progress={"stage": stage, **fields})

    def check_cancel(self) -> None:
        """Raise JobCancelled if a cancel was requested (call between stages)."""
        if self.cancelled.is_set():
            raise JobCancelled

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run `callback` when a cancel arrives (e.g. terminate a child process); at once if it has."""
        self._on_cancel.append(callback)
        if self.cancelled.is_set():
            callback()

    def cancel(self, reason: str | None = None) -> None:
        """Mark cancelled and run the callbacks (the worker calls this when it sees the flag)."""
        if not self.cancelled.is_set():
            self.cancel_reason = reason or self.cancel_reason
            self.cancelled.set()
            for callback in list(self._on_cancel):
                callback()
