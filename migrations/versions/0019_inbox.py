"""The tips inbox: inboxes, their clusters and items, the desk's actions, webhook deliveries.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def _time(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _inbox_id() -> sa.Column:
    return sa.Column("inbox_id", sa.Integer, sa.ForeignKey("inboxes.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    """Create the inbox tables."""
    op.create_table(
        "inboxes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("corpora", sa.JSON, nullable=False),
        sa.Column("language", sa.String(8), nullable=True),
        sa.Column("webhooks", sa.JSON, nullable=False),
        sa.Column("grew_after", sa.Integer, nullable=False),
        sa.Column("threshold", sa.Float, nullable=True),
        sa.Column("threshold_model", sa.String(300), nullable=True),
        sa.Column("cluster_seq", sa.BigInteger, nullable=False),
        sa.Column("marks", sa.JSON, nullable=False),
        _time("created_at"),
    )
    op.create_table(
        "inbox_clusters",
        sa.Column("id", sa.Integer, primary_key=True),
        _inbox_id(),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("representative", sa.Text, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("vector_sum", sa.LargeBinary, nullable=True),
        sa.Column("model", sa.String(300), nullable=True),
        sa.Column("decision", sa.String(8), nullable=True),
        sa.Column("probability", sa.Float, nullable=True),
        sa.Column("match", sa.JSON, nullable=True),
        sa.Column("candidates", sa.JSON, nullable=False),
        sa.Column("languages", sa.JSON, nullable=False),
        sa.Column("sources", sa.JSON, nullable=False),
        sa.Column("hourly", sa.JSON, nullable=False),
        sa.Column("rejected", sa.JSON, nullable=False),
        _time("first_at"),
        _time("last_at"),
        _time("created_at"),
        _time("updated_at"),
    )
    op.create_index("ix_inbox_clusters_seq", "inbox_clusters", ["inbox_id", "seq"])
    op.create_index("ix_inbox_clusters_last", "inbox_clusters", ["inbox_id", "last_at"])
    op.create_index("ix_inbox_clusters_size", "inbox_clusters", ["inbox_id", "size"])
    op.create_table(
        "inbox_items",
        sa.Column("id", sa.Integer, primary_key=True),
        _inbox_id(),
        sa.Column("cluster_id", sa.Integer, nullable=False),
        sa.Column("external_id", sa.String(256), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        _time("received_at"),
        sa.Column("source", sa.String(200), nullable=True),
        sa.Column("language", sa.String(8), nullable=True),
        sa.Column("metadata", sa.JSON, nullable=True),
        sa.Column("vector", sa.LargeBinary, nullable=True),
        sa.Column("decision", sa.String(8), nullable=True),
        sa.Column("match_id", sa.String(300), nullable=True),
        sa.Column("probability", sa.Float, nullable=True),
        _time("created_at"),
        sa.UniqueConstraint("inbox_id", "external_id", name="uq_inbox_items_external"),
    )
    op.create_index("ix_inbox_items_cluster", "inbox_items", ["cluster_id"])
    op.create_table(
        "inbox_actions",
        sa.Column("id", sa.Integer, primary_key=True),
        _inbox_id(),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("cluster_id", sa.Integer, nullable=True),
        sa.Column("similarity", sa.Float, nullable=True),
        sa.Column("same", sa.Boolean, nullable=True),
        sa.Column("detail", sa.JSON, nullable=True),
        sa.Column("judged_by", sa.String(100), nullable=True),
        _time("created_at"),
    )
    op.create_index("ix_inbox_actions_inbox_id", "inbox_actions", ["inbox_id"])
    op.create_table(
        "inbox_deliveries",
        sa.Column("id", sa.Integer, primary_key=True),
        _inbox_id(),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        _time("next_attempt_at"),
        _time("leased_until", nullable=True),
        sa.Column("last_status_code", sa.Integer, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        _time("created_at"),
        _time("delivered_at", nullable=True),
    )
    op.create_index("ix_inbox_deliveries_due", "inbox_deliveries", ["status", "next_attempt_at"])
    op.create_index("ix_inbox_deliveries_inbox", "inbox_deliveries", ["inbox_id", "id"])


def downgrade() -> None:
    """Drop them."""
    for table in ("inbox_deliveries", "inbox_actions", "inbox_items", "inbox_clusters", "inboxes"):
        op.drop_table(table)
