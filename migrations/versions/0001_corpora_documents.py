"""Corpora and documents.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the corpora and documents tables."""
    op.create_table(
        "corpora",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("name", name="uq_corpora_name"),
        sa.CheckConstraint("kind IN ('claim', 'answer', 'question')", name="ck_corpora_kind"),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("corpus_id", sa.Integer, sa.ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False),
        sa.Column("external_id", sa.String(256), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("text_sha256", sa.String(64), nullable=False),
        sa.Column("metadata", sa.JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("corpus_id", "external_id", name="uq_documents_corpus_external"),
    )
    op.create_index("ix_documents_corpus_id", "documents", ["corpus_id"])


def downgrade() -> None:
    """Drop the documents and corpora tables."""
    op.drop_index("ix_documents_corpus_id", table_name="documents")
    op.drop_table("documents")
    op.drop_table("corpora")
