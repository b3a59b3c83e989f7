"""Model artifacts: each registered model's manifest of files, and where its files are stored.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_COLUMNS = ("artifact_store", "artifact_sha256", "artifact_bytes", "artifact_files")


def upgrade() -> None:
    """Create model_files; add the artifact columns to model_versions (null: not stored yet)."""
    op.create_table(
        "model_files",
        sa.Column(
            "version",
            sa.String(300),
            sa.ForeignKey("model_versions.version", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("path", sa.String(1000), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_model_files_sha256", "model_files", ["sha256"])
    with op.batch_alter_table("model_versions") as batch:
        batch.add_column(sa.Column("artifact_store", sa.String(16), nullable=True))
        batch.add_column(sa.Column("artifact_sha256", sa.String(64), nullable=True))
        batch.add_column(sa.Column("artifact_bytes", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("artifact_files", sa.Integer, nullable=True))


def downgrade() -> None:
    """Drop the artifact columns and model_files (blobs only models used stay until collected)."""
    with op.batch_alter_table("model_versions") as batch:
        for column in reversed(_COLUMNS):
            batch.drop_column(column)
    op.drop_index("ix_model_files_sha256", table_name="model_files")
    op.drop_table("model_files")
