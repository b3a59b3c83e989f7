"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.api.deps import RuntimeDep

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness: the process answers (even while the model loads)."""
    return {"status": "ok"}


@router.get("/ready", response_model=None)
async def ready(runtime: RuntimeDep) -> JSONResponse | dict[str, Any]:
    """Readiness: 200 once the model and indexes are loaded, 503 before (or after a load failure)."""
    if runtime.is_ready():
        state = runtime.state()
        encoder = state.encoder
        return {
            "status": "ready",
            "model": state.model_version,
            "backend": encoder.backend,
            "precision": encoder.precision,
            "encoder": encoder.describe(),
            "encoder_queue": encoder.batcher.queued_texts,
        }
    error = runtime.load_error
    detail = f"loading failed: {error}" if error else "the model and indexes are loading"
    return JSONResponse(
        status_code=503, content={"status": "loading" if not error else "failed", "detail": detail}
    )
