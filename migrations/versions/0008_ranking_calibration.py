"""Corpora remember how they rank best: the calibrated mode, lexical weight and fusion per model.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add corpora.ranking_calibration (JSON)."""
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("ranking_calibration", sa.JSON, nullable=True))


def downgrade() -> None:
    """Drop corpora.ranking_calibration."""
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("ranking_calibration")
