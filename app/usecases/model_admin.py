"""Admin use cases on the model registry: list versions with their stored sizes, queue an activation
(app/control/activation.py), delete a version and the files only it used."""

from __future__ import annotations

from dataclasses import dataclass

from app.control.activation import enqueue_activation
from app.db.admin_models import Job, ModelVersion
from app.db.admin_repository import ModelRepository
from app.serving.context import ServiceContext
from app.serving.registry import DeletedModel


@dataclass(frozen=True)
class RegisteredModels:
    """Every registered version, the artifact store, and the bytes it holds."""

    models: list[ModelVersion]
    artifact_store: str
    stored_bytes: int


class ModelAdminService:
    """List registered models, queue their activation, delete them."""

    def __init__(self, service: ServiceContext) -> None:
        self.service = service

    def list_models(self) -> RegisteredModels:
        """Every registered version, newest first, with which one is active and the stored bytes."""
        with self.service.sessions() as session:
            models = ModelRepository(session).list()
        registry = self.service.serving.registry
        return RegisteredModels(models, registry.artifacts.name, registry.stored_bytes())

    def activate(self, version: str) -> Job:
        """Queue the activation of a registered version (also a rollback): its job builds the indexes."""
        return enqueue_activation(self.service.sessions, version)

    def delete(self, version: str) -> DeletedModel:
        """Delete a version and the stored files no other model or job uses; never the active or the
        previous version (409)."""
        return self.service.serving.registry.delete(version, self.service.settings.model)
