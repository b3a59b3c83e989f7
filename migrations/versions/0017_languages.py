"""Languages: a corpus's language (ISO 639-1, or `multi`), a document's own language.

Corpora that exist already are English, as their lexical index has always been; documents have no
language of their own until one is given or detected (in a `multi` corpus).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add corpora.language (default `en`), documents.language and its index (same-language filters)."""
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("language", sa.String(8), nullable=False, server_default="en"))
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("language", sa.String(8), nullable=True))
    op.create_index("ix_documents_corpus_language", "documents", ["corpus_id", "language"])


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ix_documents_corpus_language", table_name="documents")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("language")
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("language")
