"""Builds the configured artifact store: the one module that knows both adapters."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.stores.artifacts.database import DatabaseArtifactStore
from app.stores.artifacts.local import LocalArtifactStore
from app.stores.artifacts.port import ArtifactStore


def open_artifact_store(settings: Settings, sessions: sessionmaker[Session]) -> ArtifactStore:
    """The store `PAIRANK_ARTIFACT_STORE` names (`auto`: the database on PostgreSQL, local on SQLite)."""
    if settings.resolved_artifact_store == "database":
        return DatabaseArtifactStore(sessions, settings.artifact_cache_dir)
    return LocalArtifactStore(sessions, settings.data_dir / "models")
