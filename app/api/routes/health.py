"""Liveness, readiness and metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from app.api.deps import get_runtime
from app.api.security import READ
from app.observability.metrics import render
from app.schemas.errors import error_responses
from app.usecases.operations import OperationsService

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness: the process answers (even while the model loads or the database is down)."""
    return {"status": "ok"}


@router.get(
    "/ready", response_model=None, responses={503: {"description": "Not ready: `failing` names why."}}
)
def ready(request: Request) -> JSONResponse | dict[str, Any]:
    """Readiness: a database round trip, the model and the indexes; 503 naming the failing part."""
    readiness = OperationsService(get_runtime(request)).readiness()
    body = {"status": readiness.status, **readiness.detail}
    if readiness.ready:
        return body
    return JSONResponse(status_code=503, content={**body, "failing": readiness.failing})


@router.get(
    "/metrics",
    dependencies=[READ],
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {}}, "description": "Prometheus text format."},
        **error_responses(401, 403, 429, 503),
    },
)
def metrics(request: Request) -> Response:
    """Prometheus metrics: every worker's request and encoder counters, database counts, index state."""
    payload, content_type = render(OperationsService(get_runtime(request)).scrape())
    return Response(payload, media_type=content_type)
