"""The kinds of job, and what a job's end must also record (kept free of heavy imports: `pairank migrate`
fails lost jobs through it)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.db.admin_models import Job
from app.db.repositories.evaluations import EvaluationRepository

RETRAIN = "retrain"
ACTIVATE = "activate"
EVALUATE = "evaluate"
IMPORT = "import"
CALIBRATE_MATCH = "calibrate-match"  # a corpus's match decisions (app/usecases/calibration/match.py)
LANGUAGE = "language"  # a corpus's change of language (app/control/language_job.py)


def on_finished(session: Session, job: Job, status: str) -> None:
    """Mirror a job's end onto the record it works for (an evaluation that did not succeed)."""
    evaluation_id = (job.params or {}).get("evaluation_id")
    if job.kind == EVALUATE and evaluation_id and status != "succeeded":
        reason = job.error or f"the evaluation job was {status}"
        EvaluationRepository(session).finish(str(evaluation_id), "failed", error=reason)
