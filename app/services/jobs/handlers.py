"""Which code runs each kind of job."""

from __future__ import annotations

from app.services import activation, evaluations, imports, retrain_job
from app.services.jobs import kinds
from app.services.jobs.worker import Handler

HANDLERS: dict[str, Handler] = {
    kinds.RETRAIN: retrain_job.run_retrain,
    kinds.ACTIVATE: activation.run_activation,
    kinds.EVALUATE: evaluations.run_evaluation,
    kinds.IMPORT: imports.run_import,
}
