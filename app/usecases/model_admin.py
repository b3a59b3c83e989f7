"""Admin use cases on the model registry: list versions with their stored sizes, register a folder (a
bi-encoder or a cross-encoder re-ranker), queue an activation (app/control/activation.py), delete a
version and the files only it used."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.control.activation import enqueue_activation
from app.core.errors import InvalidInputError, NotFoundError
from app.db.admin_models import Job, ModelVersion
from app.db.repositories.model_versions import ModelRepository
from app.serving.context import ServiceContext
from app.serving.registry import DeletedModel
from pairank.models import model_kind, resolve_model

# What a run folder's manifest tells about how its model was made (kept with the registered version).
_RUN_FACTS = ("model_id", "base_model", "groups", "negatives", "steps", "seconds", "config_sha256")


@dataclass(frozen=True)
class RegisteredModels:
    """Every registered version, the artifact store, and the bytes it holds."""

    models: list[ModelVersion]
    artifact_store: str
    stored_bytes: int


@dataclass(frozen=True)
class RegisteredModel:
    """A registered folder's version and kind, and whether this call registered it."""

    version: str
    kind: str
    created: bool


def _run_manifest(model_folder: Path) -> dict[str, Any]:
    """The training run's manifest beside a model folder (`run/model`), or {}."""
    try:
        data = json.loads((model_folder.parent / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}
    is_its_run = isinstance(data, dict) and data.get("model_path") == model_folder.name
    return data if is_its_run else {}


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

    def register(self, path: str) -> RegisteredModel:
        """Register a model folder or training run folder with its files stored (a cross-encoder by its
        run's manifest or its sentence-transformers config); a version known already is left as it is."""
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise NotFoundError(f"path: no folder {path}", "path")
        spec = resolve_model(str(folder))
        if spec.weights_sha256 is None:
            raise InvalidInputError(f"path: {path} holds no model weights (model.safetensors)", "path")
        kind = model_kind(folder)
        manifest = _run_manifest(Path(spec.path))
        training = {"kind": kind, **{key: manifest[key] for key in _RUN_FACTS if key in manifest}}
        created = self.service.serving.registry.register(
            spec,
            spec.path,  # the model folder itself (a run folder holds it under model/)
            "registered",
            base_model=manifest.get("base_model"),
            training=training,
        )
        return RegisteredModel(spec.version, kind, created)

    def activate(self, version: str) -> Job:
        """Queue the activation of a registered version (also a rollback): its job builds the indexes."""
        return enqueue_activation(self.service.sessions, version)

    def delete(self, version: str) -> DeletedModel:
        """Delete a version and the stored files no other model or job uses; never the active or the
        previous version (409)."""
        return self.service.serving.registry.delete(version, self.service.settings.model)
