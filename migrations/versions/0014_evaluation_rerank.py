"""Evaluations record the re-ranking stage they ran (null: the first stage alone).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add evaluations.rerank (the stage's model, k and weight)."""
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("rerank", sa.JSON, nullable=True))


def downgrade() -> None:
    """Drop evaluations.rerank."""
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("rerank")
