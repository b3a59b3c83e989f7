"""Admin use cases on the model registry: list versions (activation is a job: app/services/activation.py)."""

from __future__ import annotations

from app.db.admin_models import ModelVersion
from app.db.admin_repository import ModelRepository
from app.services.runtime import Runtime


class ModelAdminService:
    """List registered models."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def list_models(self) -> list[ModelVersion]:
        """Every registered version, newest first, with which one is active."""
        with self.runtime.sessions() as session:
            return ModelRepository(session).list()
