"""Training pairs, retraining jobs and the model registry.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create training_pairs, jobs and model_versions."""
    op.create_table(
        "training_pairs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("corpus_id", sa.Integer, sa.ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("document_id", sa.String(256), nullable=True),
        sa.Column("document", sa.Text, nullable=True),
        sa.Column("label", sa.Float, nullable=False),
        sa.Column("split", sa.String(8), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("split IS NULL OR split IN ('train', 'dev')", name="ck_training_pairs_split"),
    )
    op.create_index("ix_training_pairs_corpus_id", "training_pairs", ["corpus_id"])
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("corpus_name", sa.String(100), nullable=True),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("progress", sa.JSON, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("log_tail", sa.Text, nullable=True),
        sa.Column("run_dir", sa.Text, nullable=True),
        sa.Column("model_version", sa.String(300), nullable=True),
        sa.Column("gate", sa.JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')", name="ck_jobs_status"
        ),
    )
    op.create_index("ix_jobs_created_at", "jobs", ["created_at"])
    op.create_table(
        "model_versions",
        sa.Column("version", sa.String(300), primary_key=True),
        sa.Column("model_id", sa.String(300), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("base_model", sa.String(300), nullable=True),
        sa.Column("weights_sha256", sa.String(64), nullable=True),
        sa.Column("job_id", sa.String(36), nullable=True),
        sa.Column("training", sa.JSON, nullable=True),
        sa.Column("dev_metrics", sa.JSON, nullable=True),
        sa.Column("is_active", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("activated_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    """Drop the retraining tables."""
    op.drop_table("model_versions")
    op.drop_index("ix_jobs_created_at", table_name="jobs")
    op.drop_table("jobs")
    op.drop_index("ix_training_pairs_corpus_id", table_name="training_pairs")
    op.drop_table("training_pairs")
