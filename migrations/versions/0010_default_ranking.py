"""Corpora remember the ranking they use before any calibration: new claim corpora rank hybrid.

Corpora that exist already keep ranking as before (null: dense).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add corpora.default_ranking (JSON)."""
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("default_ranking", sa.JSON, nullable=True))


def downgrade() -> None:
    """Drop corpora.default_ranking."""
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("default_ranking")
