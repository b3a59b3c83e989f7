"""Files in the database: content-addressed blobs in chunks, and the inputs each job runs on.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create blobs, blob_chunks and job_inputs."""
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "blob_chunks",
        sa.Column(
            "sha256", sa.String(64), sa.ForeignKey("blobs.sha256", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "job_inputs",
        sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=False),
    )
    op.create_index("ix_job_inputs_sha256", "job_inputs", ["sha256"])


def downgrade() -> None:
    """Drop job_inputs, blob_chunks and blobs."""
    op.drop_index("ix_job_inputs_sha256", table_name="job_inputs")
    op.drop_table("job_inputs")
    op.drop_table("blob_chunks")
    op.drop_table("blobs")
