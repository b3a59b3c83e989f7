"""The composition root of every pairank process: what each job kind runs, and the process's set-up.

The planes below know nothing of each other's upper neighbours; this module wires them for both kinds
of process: the API process (app/main.py builds the FastAPI app on it, and may embed a job worker) and
`pairank worker` (app/worker_cli.py), which never imports the web application.
"""

from __future__ import annotations

import threading

from threadpoolctl import threadpool_limits

from app.config import Settings
from app.control import job_kinds
from app.control.activation import run_activation
from app.control.language_job import run_language_change
from app.control.retraining.job import run_retrain
from app.control.worker import Handler, JobWorker
from app.db.notifications import ChangeWaiter
from app.observability.logs import configure_logging
from app.serving.runtime import Runtime
from app.usecases.calibration.match import run_match_calibration
from app.usecases.evaluations import run_evaluation
from app.usecases.imports import run_import
from app.usecases.inbox.rematch import rematch_forever
from app.usecases.inbox.webhooks import deliver_forever
from app.usecases.workbench.query_sets import run_query_set

JOB_HANDLERS: dict[str, Handler] = {
    job_kinds.RETRAIN: run_retrain,
    job_kinds.ACTIVATE: run_activation,
    job_kinds.EVALUATE: run_evaluation,
    job_kinds.IMPORT: run_import,
    job_kinds.LANGUAGE: run_language_change,
    job_kinds.CALIBRATE_MATCH: run_match_calibration,
    job_kinds.QUERY_SET: run_query_set,
}


def configure_process(settings: Settings) -> None:
    """Process-wide set-up of a serving or worker process, done once by its entry point."""
    configure_logging(settings.log_format)
    # Searches are small matrix products on many request threads at once: a multi-threaded BLAS spins
    # its threads against each other and the encoder's (measured: 2.4x more requests/s at 32 clients
    # with one BLAS thread per call).
    threadpool_limits(limits=1, user_api="blas")
    if settings.encoder_threads:  # torch's intra-op threads are process-wide, so they are set here once
        import torch

        torch.set_num_threads(settings.encoder_threads)


def job_worker(runtime: Runtime, kinds: tuple[str, ...] | None = None) -> JobWorker:
    """A job worker on this process's runtime, running every job kind (or only `kinds`)."""
    return JobWorker(runtime, JOB_HANDLERS, kinds)


def embed_job_worker(runtime: Runtime) -> None:
    """Run queued jobs in a thread of this serving process once it has loaded (`PAIRANK_EMBEDDED_WORKER`)."""
    runtime.run_after_loading("pairank-job-worker", job_worker(runtime).run_forever)


def embed_inbox_loops(runtime: Runtime) -> None:
    """Run the inboxes' re-match on publish and webhook delivery in threads of this process once it has
    loaded (`PAIRANK_INBOX_REMATCH_SECONDS`, `PAIRANK_WEBHOOK_POLL_SECONDS`; 0 turns one off)."""
    settings = runtime.settings
    if settings.inbox_rematch_seconds > 0:
        waiter = ChangeWaiter(runtime.engine)

        def rematch(closed: threading.Event) -> None:
            try:
                rematch_forever(runtime, waiter.wait, closed)
            finally:
                waiter.close()  # its LISTEN connection, on PostgreSQL

        runtime.run_after_loading("pairank-inbox-rematch", rematch)
    if settings.webhook_poll_seconds > 0:
        runtime.run_after_loading("pairank-webhooks", lambda closed: deliver_forever(runtime, closed))
