"""The model registry: which model is active, and registering configured and trained models."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.core.errors import ConflictError
from app.db.admin_repository import ModelRepository
from app.db.engine import transaction
from pairank.models import ModelSpec, resolve_model

log = logging.getLogger(__name__)


def register_model(
    sessions: sessionmaker[Session], spec: ModelSpec, path: str, source: str, **fields: Any
) -> None:
    """Register a model version unless it is already known."""
    try:
        with transaction(sessions) as session:
            repository = ModelRepository(session)
            if repository.get(spec.version) is None:
                repository.add(
                    version=spec.version,
                    model_id=spec.model_id,
                    path=path,
                    source=source,
                    weights_sha256=spec.weights_sha256,
                    **fields,
                )
    except ConflictError:  # another worker registered it at the same moment
        pass


def active_model_spec(sessions: sessionmaker[Session], configured: str) -> ModelSpec:
    """The model to serve at start-up.

    A PAIRANK_MODEL that names a model not registered yet is a new choice of the operator: it is
    registered and activated. Otherwise the registry's active version wins, so an activation or a
    rollback made through the admin API survives restarts.
    """
    configured_spec = resolve_model(configured)
    with sessions() as session:
        repository = ModelRepository(session)
        known = repository.get(configured_spec.version) is not None
        active = repository.active()
        active_path = active.path if active is not None else None
    if known and active_path is not None:
        spec = resolve_model(active_path)
        log.info("serving the registry's active model %s", spec.version)
        return spec
    register_model(sessions, configured_spec, configured, "configured")
    with transaction(sessions) as session:
        ModelRepository(session).activate(configured_spec.version)
    return configured_spec
