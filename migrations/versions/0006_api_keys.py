"""API keys: scoped, optionally limited to corpora, stored only as salted hashes, revocable.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create api_keys."""
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("scope", sa.String(8), nullable=False),
        sa.Column("corpora", sa.JSON, nullable=True),
        sa.Column("salt", sa.String(32), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("scope IN ('read', 'write', 'admin')", name="ck_api_keys_scope"),
    )


def downgrade() -> None:
    """Drop api_keys."""
    op.drop_table("api_keys")
