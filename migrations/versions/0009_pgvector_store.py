"""Vectors in PostgreSQL for the pgvector store: vector spaces and document vectors.

Created on PostgreSQL when the store is pgvector (creating the extension when the role may, else
failing with the command to run), or when the extension is already installed. Faiss deployments on a
server without pgvector are left as they are; the pgvector store creates the tables at start-up if a
deployment switches later (`app.db.repositories.vectors.ensure_vector_schema`, idempotent).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import op

from app.db.vector_schema import ensure_vector_schema

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the vector tables where pgvector is wanted or present."""
    connection = op.get_bind()
    if connection.dialect.name != "postgresql":
        return
    wanted = os.environ.get("PAIRANK_VECTOR_STORE", "faiss").lower() == "pgvector"
    installed = connection.scalar(sa.text("SELECT 1 FROM pg_extension WHERE extname = 'vector'"))
    if wanted or installed:
        ensure_vector_schema(connection)


def downgrade() -> None:
    """Drop the vector tables (the extension stays: other databases' objects may use it)."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TABLE IF EXISTS document_vectors")
        op.execute("DROP TABLE IF EXISTS vector_spaces")
