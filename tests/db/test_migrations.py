"""Alembic migrations create the schema on SQLite and PostgreSQL, and downgrade cleanly."""

from __future__ import annotations

from alembic import command
from sqlalchemy import create_engine, inspect

from app.db.migrate import alembic_config, upgrade_to_head


def test_upgrade_downgrade_upgrade(database_url: str) -> None:
    upgrade_to_head(database_url)
    engine = create_engine(database_url)
    try:
        tables = set(inspect(engine).get_table_names())
        assert {
            "corpora",
            "documents",
            "evaluations",
            "alembic_version",
            "blobs",
            "blob_chunks",
            "job_inputs",
        } <= tables
        columns = {c["name"] for c in inspect(engine).get_columns("documents")}
        assert {"external_id", "text", "text_sha256", "metadata", "created_at", "updated_at"} <= columns
        command.downgrade(alembic_config(database_url), "base")
        assert not {"corpora", "documents", "evaluations"} & set(inspect(engine).get_table_names())
        upgrade_to_head(database_url)
        assert {"corpora", "documents"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
