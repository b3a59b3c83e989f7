"""Admin use cases on the model registry: list versions (activation is a job: app/services/activation.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.db.admin_models import ModelVersion
from app.db.admin_repository import ModelRepository
from app.services.runtime import Runtime


@dataclass(frozen=True)
class ModelInfo:
    """A registered model version."""

    version: str
    model_id: str
    source: str
    path: str
    base_model: str | None
    weights_sha256: str | None
    job_id: str | None
    training: dict[str, Any] | None
    dev_metrics: dict[str, Any] | None
    encoder: dict[str, Any] | None
    is_active: bool
    created_at: datetime
    activated_at: datetime | None


def _info(row: ModelVersion) -> ModelInfo:
    return ModelInfo(
        row.version, row.model_id, row.source, row.path, row.base_model, row.weights_sha256, row.job_id,
        row.training, row.dev_metrics, row.encoder, row.is_active, row.created_at, row.activated_at,
    )  # fmt: skip


class ModelAdminService:
    """List registered models."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def list_models(self) -> list[ModelInfo]:
        """Every registered version, newest first, with which one is active."""
        with self.runtime.sessions() as session:
            return [_info(row) for row in ModelRepository(session).list()]
