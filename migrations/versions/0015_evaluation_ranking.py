"""Evaluations record the first stage's setting they ranked by (mode, alpha, fusion).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add evaluations.ranking (null for evaluations that ran before it was recorded)."""
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("ranking", sa.JSON, nullable=True))


def downgrade() -> None:
    """Drop evaluations.ranking."""
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("ranking")
