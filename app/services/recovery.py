"""Start-up recovery, run once per deployment start before any worker serves (see `pairank migrate`)."""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session, sessionmaker

from app.db.admin_repository import JobRepository
from app.db.engine import transaction
from app.db.evaluation_repository import EvaluationRepository

log = logging.getLogger(__name__)
INTERRUPTED = "interrupted: the service stopped before this finished; submit it again"


def recover_interrupted_work(sessions: sessionmaker[Session]) -> None:
    """Mark work a previous process left unfinished as failed, so no record claims to be running forever."""
    with transaction(sessions) as session:
        evaluations = EvaluationRepository(session).fail_unfinished(INTERRUPTED)
        jobs = JobRepository(session).fail_unfinished(INTERRUPTED)
    if evaluations or jobs:
        log.warning("marked %d interrupted evaluation(s) and %d job(s) as failed", evaluations, jobs)
