"""Builds the configured vector store: the one module that knows every adapter."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.stores.faiss_store import FaissStore
from app.stores.pgvector_store import PgVectorStore
from app.stores.port import VectorStore


def open_store(settings: Settings, encoder: Any, sessions: sessionmaker[Session]) -> VectorStore[Any]:
    """The store `PAIRANK_VECTOR_STORE` names, for one encoder (nothing opened yet)."""
    if settings.vector_store == "pgvector":
        return PgVectorStore(settings.index_dir, encoder, sessions)
    return FaissStore(settings.index_dir, encoder, sessions)
