"""The FastAPI application (`app.main:app`): the API process built on the composition root (app/process.py).

It builds the runtime, embeds a job worker when configured, and sets up the process that uvicorn serves
(logging, and one BLAS thread per call) when it starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api.body_limit import BodySizeLimit
from app.api.console import install_console
from app.api.docs_pages import install_docs
from app.api.errors import install_error_handlers
from app.api.json_guard import JsonBodyGuard
from app.api.observe import RequestObserver
from app.api.openapi import install_contract
from app.api.routes import (
    admin,
    compare,
    corpora,
    evaluations,
    health,
    identity,
    imports,
    inbox,
    judgements,
    matching,
    pairs,
    query_sets,
    ranking,
)
from app.api.routes.imports import IMPORTS_PATH
from app.api.security import TokenBuckets
from app.config import Settings, get_settings
from app.observability.metrics import worker_exited
from app.process import configure_process, embed_inbox_loops, embed_job_worker
from app.serving.runtime import Runtime
from app.usecases.api_keys import KeyCache
from pairank import __version__


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
        if not active.serving.is_ready():
            if active.settings.embedded_worker:
                embed_job_worker(active)
            embed_inbox_loops(active)
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
        # Served by install_docs from vendored assets: the defaults load them from a CDN.
        docs_url=None,
        redoc_url=None,
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
    routers = (
        health,
        identity,
        corpora,
        ranking,
        matching,
        compare,
        evaluations,
        pairs,
        judgements,
        query_sets,
    )
    for module in (*routers, imports, admin):
        app.include_router(module.router)
    app.include_router(inbox.router)
    install_console(app)
    install_docs(app)
    return app


# What uvicorn serves (`app.main:app`): the process's own app, set up when it starts.
app = create_app(own_process=True)
