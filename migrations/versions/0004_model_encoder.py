"""The model registry records how each version is served: backend, precision and quality gate.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add model_versions.encoder (JSON)."""
    with op.batch_alter_table("model_versions") as batch:
        batch.add_column(sa.Column("encoder", sa.JSON, nullable=True))


def downgrade() -> None:
    """Drop model_versions.encoder."""
    with op.batch_alter_table("model_versions") as batch:
        batch.drop_column("encoder")
