"""The composition root: the FastAPI application (`app.main:app`), and what each job kind runs.

The planes below know nothing of each other's upper neighbours; this module wires them: it builds the
runtime, hands the job worker its handlers (control and use-case code alike), and sets up the process
that uvicorn serves (logging, and one BLAS thread per call) when it starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from threadpoolctl import threadpool_limits

from app.api.body_limit import BodySizeLimit
from app.api.console import install_console
from app.api.errors import install_error_handlers
from app.api.json_guard import JsonBodyGuard
from app.api.observe import RequestObserver
from app.api.openapi import install_contract
from app.api.routes import admin, compare, corpora, evaluations, health, identity, imports, pairs, ranking
from app.api.routes.imports import IMPORTS_PATH
from app.api.security import TokenBuckets
from app.config import Settings, get_settings
from app.control import job_kinds
from app.control.activation import run_activation
from app.control.language_job import run_language_change
from app.control.retrain_job import run_retrain
from app.control.worker import Handler, JobWorker
from app.observability.logs import configure_logging
from app.observability.metrics import worker_exited
from app.serving.runtime import Runtime
from app.usecases.api_keys import KeyCache
from app.usecases.evaluations import run_evaluation
from app.usecases.imports import run_import
from pairank import __version__

JOB_HANDLERS: dict[str, Handler] = {
    job_kinds.RETRAIN: run_retrain,
    job_kinds.ACTIVATE: run_activation,
    job_kinds.EVALUATE: run_evaluation,
    job_kinds.IMPORT: run_import,
    job_kinds.LANGUAGE: run_language_change,
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


def embed_job_worker(runtime: Runtime) -> None:
    """Run queued jobs in a thread of this serving process once it has loaded (`PAIRANK_EMBEDDED_WORKER`)."""
    runtime.run_after_loading("pairank-job-worker", JobWorker(runtime, JOB_HANDLERS).run_forever)


def create_app(
    settings: Settings | None = None, runtime: Runtime | None = None, *, own_process: bool = False
) -> FastAPI:
    """Build the app; the model and indexes load in the background once it starts.

    `own_process`: the app is its process's (what uvicorn serves), so its start-up configures the
    process; apps that tests build leave logging to pytest and the BLAS threads alone.
    """
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if own_process:
            configure_process(settings)
        active = runtime or Runtime(settings)
        app.state.runtime = active
        if not active.is_ready():
            if active.settings.embedded_worker:
                embed_job_worker(active)
            active.start_loading()
        try:
            yield
        finally:
            if runtime is None:
                active.close()
                worker_exited()

    app = FastAPI(
        title="pairank",
        version=__version__,
        description="Semantic ranking, duplicate detection and similarity over corpora of claims, answers "
        "and questions.",
        lifespan=lifespan,
        # A trailing slash is never redirected: a client following a redirect could otherwise turn
        # `DELETE .../documents/..` (normalised to `.../corpus/`) into a delete of the whole corpus.
        redirect_slashes=False,
    )
    app.state.rate_buckets = TokenBuckets()  # per app, so per worker process (documented as such)
    app.state.key_cache = KeyCache(settings.key_cache_seconds)  # likewise
    install_error_handlers(app)
    install_contract(app, settings)
    app.add_middleware(JsonBodyGuard, uploads=[IMPORTS_PATH])
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_request_bytes,
        overrides=[(IMPORTS_PATH, settings.max_import_bytes)],
    )
    # Added last, so outermost: the request id, metrics and access log cover the 413s and 422s above.
    app.add_middleware(RequestObserver)
    for module in (health, identity, corpora, ranking, compare, evaluations, pairs, imports, admin):
        app.include_router(module.router)
    install_console(app)
    return app


# What uvicorn serves (`app.main:app`): the process's own app, set up when it starts.
app = create_app(own_process=True)
