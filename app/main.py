"""The FastAPI application (`app.main:app`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api.body_limit import BodySizeLimit
from app.api.errors import install_error_handlers
from app.api.json_guard import JsonBodyGuard
from app.api.observe import RequestObserver
from app.api.openapi import install_contract
from app.api.routes import admin, corpora, evaluations, health, imports, pairs, ranking
from app.api.routes.imports import IMPORTS_PATH
from app.api.security import TokenBuckets
from app.config import Settings, get_settings
from app.observability.logs import configure_logging
from app.observability.metrics import worker_exited
from app.services.runtime import Runtime
from pairank import __version__


def create_app(
    settings: Settings | None = None, runtime: Runtime | None = None, *, configure_logs: bool = False
) -> FastAPI:
    """Build the app; the model and indexes load in the background once it starts."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if configure_logs:
            configure_logging(settings.log_format)
        active = runtime or Runtime(settings)
        app.state.runtime = active
        if not active.is_ready():
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
    install_error_handlers(app)
    install_contract(app, settings)
    app.add_middleware(JsonBodyGuard)
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_request_bytes,
        overrides=[(IMPORTS_PATH, settings.max_import_bytes)],
    )
    # Added last, so outermost: the request id, metrics and access log cover the 413s and 422s above.
    app.add_middleware(RequestObserver)
    for module in (health, corpora, ranking, evaluations, pairs, imports, admin):
        app.include_router(module.router)
    return app


# What uvicorn serves (`app.main:app`). It sets up logging when it starts; apps that tests build leave
# logging to pytest.
app = create_app(configure_logs=True)
