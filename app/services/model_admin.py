"""Admin use cases on the model registry: list versions, activate one (which is also a rollback)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.db.admin_models import ModelVersion
from app.db.admin_repository import ModelRepository
from app.services.errors import ConflictError, NotFoundError
from app.services.runtime import Runtime
from pairank.models import resolve_model


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
    """List and activate registered models."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def list_models(self) -> list[ModelInfo]:
        """Every registered version, newest first, with which one is active."""
        with self.runtime.sessions() as session:
            return [_info(row) for row in ModelRepository(session).list()]

    def activate(self, version: str) -> ModelInfo:
        """Build the version's indexes while the current model serves, then swap to it atomically."""
        with self.runtime.sessions() as session:
            row = ModelRepository(session).get(version)
            if row is None:
                raise NotFoundError(f"model version {version!r} is not registered", field="version")
            path = row.path
        spec = resolve_model(path)
        if spec.version != version:
            raise ConflictError(
                f"the weights at {path} now hash to {spec.version}, not {version}; refusing to activate",
                "version",
            )
        if self.runtime.state().model_version != version:
            self.runtime.swap(self.runtime.build_state(spec))
        with self.runtime.sessions() as session:
            activated = ModelRepository(session).get(version)
            assert activated is not None
            return _info(activated)
