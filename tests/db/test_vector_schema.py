"""Set-up errors of the pgvector store: a clear message instead of a failure deep in a request."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import create_engine

from app.config import Settings
from app.core.errors import ConfigurationError
from app.db.vector_schema import ensure_vector_schema


def test_pgvector_needs_a_postgresql_url(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="PAIRANK_DATABASE_URL"):
        Settings(data_dir=tmp_path, vector_store="pgvector")


def test_a_server_without_pgvector_gets_the_command_to_run() -> None:
    base_url = os.environ.get("TEST_DATABASE_URL")
    if not base_url:
        pytest.skip("TEST_DATABASE_URL is not set (a PostgreSQL without pgvector to try)")
    engine = create_engine(base_url)
    try:
        with engine.connect() as connection:
            if connection.exec_driver_sql(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            ).scalar():
                pytest.skip("this PostgreSQL has pgvector")
            with pytest.raises(ConfigurationError, match="CREATE EXTENSION IF NOT EXISTS vector"):
                ensure_vector_schema(connection)
    finally:
        engine.dispose()
