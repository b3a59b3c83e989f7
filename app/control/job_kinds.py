"""The kinds of job, and what a job's end must also record (kept free of heavy imports: `pairank migrate`
fails lost jobs through it)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.db.admin_models import Job
from app.db.repositories.evaluations import EvaluationRepository
from app.db.repositories.query_sets import QuerySetRepository

RETRAIN = "retrain"
ACTIVATE = "activate"
EVALUATE = "evaluate"
IMPORT = "import"
CALIBRATE_MATCH = "calibrate-match"  # a corpus's match decisions (app/usecases/calibration/match.py)
LANGUAGE = "language"  # a corpus's change of language (app/control/language_job.py)
QUERY_SET = "query-set"  # one scoring of a saved query set (app/usecases/workbench/query_sets.py)


def on_finished(session: Session, job: Job, status: str) -> None:
    """Mirror a job's end onto the record it works for (an evaluation or a query set's run that did not
    succeed)."""
    evaluation_id = (job.params or {}).get("evaluation_id")
    if job.kind == EVALUATE and evaluation_id and status != "succeeded":
        reason = job.error or f"the evaluation job was {status}"
        EvaluationRepository(session).finish(str(evaluation_id), "failed", error=reason)
    run_id = (job.params or {}).get("run_id")
    if job.kind == QUERY_SET and run_id and status != "succeeded":
        repository = QuerySetRepository(session)
        run = repository.run(int(run_id))
        if run is not None and run.status in ("queued", "running"):
            repository.finish_run(run, "failed", error=job.error or f"the scoring job was {status}")
