"""Corpora hold their match policy and their match calibration (the decision model, its thresholds).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add corpora.match_policy and corpora.match_calibration (null: the defaults, not calibrated)."""
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("match_policy", sa.JSON, nullable=True))
        batch.add_column(sa.Column("match_calibration", sa.JSON, nullable=True))


def downgrade() -> None:
    """Drop them."""
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("match_calibration")
        batch.drop_column("match_policy")
