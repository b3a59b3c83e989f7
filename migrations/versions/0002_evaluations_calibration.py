"""Evaluations table; calibrated duplicate threshold on corpora.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the evaluations table and the corpus calibration columns."""
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("duplicate_threshold", sa.Float, nullable=True))
        batch.add_column(sa.Column("threshold_model", sa.String(300), nullable=True))
        batch.add_column(sa.Column("calibration", sa.JSON, nullable=True))
    op.create_table(
        "evaluations",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("corpus_name", sa.String(100), nullable=True),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("model_version", sa.String(300), nullable=True),
        sa.Column("request", sa.JSON, nullable=False),
        sa.Column("metrics", sa.JSON, nullable=True),
        sa.Column("per_query", sa.JSON, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration_seconds", sa.Float, nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed')", name="ck_evaluations_status"
        ),
    )
    op.create_index("ix_evaluations_created_at", "evaluations", ["created_at"])


def downgrade() -> None:
    """Drop the evaluations table and the calibration columns."""
    op.drop_index("ix_evaluations_created_at", table_name="evaluations")
    op.drop_table("evaluations")
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("calibration")
        batch.drop_column("threshold_model")
        batch.drop_column("duplicate_threshold")
