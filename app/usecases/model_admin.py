"""Admin use cases on the model registry: list versions, queue an activation (app/control/activation.py)."""

from __future__ import annotations

from app.control.activation import enqueue_activation
from app.db.admin_models import Job, ModelVersion
from app.db.admin_repository import ModelRepository
from app.serving.context import ServiceContext


class ModelAdminService:
    """List registered models and queue their activation."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def list_models(self) -> list[ModelVersion]:
        """Every registered version, newest first, with which one is active."""
        with self.service.sessions() as session:
            return ModelRepository(session).list()

    def activate(self, version: str) -> Job:
        """Queue the activation of a registered version (also a rollback): its job builds the indexes."""
        return enqueue_activation(self.service.sessions, version)
