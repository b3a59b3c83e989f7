"""The document change log (what changed since sequence N); per-corpus change marks, index specs and
document counts.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# BIGSERIAL on PostgreSQL; on SQLite an INTEGER PRIMARY KEY AUTOINCREMENT (never reuses a number).
SEQ_TYPE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create document_changes; add corpora.change_seq and corpora.index_spec."""
    op.create_table(
        "document_changes",
        sa.Column("seq", SEQ_TYPE, primary_key=True, autoincrement=True),
        sa.Column("corpus_id", sa.Integer, sa.ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False),
        sa.Column("document_id", sa.Integer, nullable=False),
        sa.Column("external_id", sa.String(256), nullable=False),
        sa.Column("op", sa.String(8), nullable=False),
        sa.Column("text_sha256", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("op IN ('upsert', 'delete')", name="ck_document_changes_op"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_document_changes_corpus_seq", "document_changes", ["corpus_id", "seq"])
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("change_seq", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("index_spec", sa.JSON, nullable=True))
        batch.add_column(sa.Column("document_count", sa.Integer, nullable=False, server_default="0"))
    # Kept in step by every write from now on: counting never scans a corpus's documents again.
    op.execute(
        "UPDATE corpora SET document_count = "
        "(SELECT COUNT(*) FROM documents WHERE documents.corpus_id = corpora.id)"
    )


def downgrade() -> None:
    """Drop the change log and the corpus columns."""
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("document_count")
        batch.drop_column("index_spec")
        batch.drop_column("change_seq")
    op.drop_index("ix_document_changes_corpus_seq", table_name="document_changes")
    op.drop_table("document_changes")
