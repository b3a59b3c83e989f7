"""Jobs run by workers: an owner and a lease, a cancel flag, and one model-changing job at a time.

`exclusive` holds "model" while a retraining or activation job is unfinished and NULL otherwise; its
unique index lets the database, not a check-then-insert, refuse a second one from any process.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None
_INTERRUPTED = "interrupted: the service was upgraded before this finished; submit it again"


def upgrade() -> None:
    """Add owner, lease, cancel flag and the exclusive slot; fail work no worker will pick up."""
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("owner", sa.String(100), nullable=True))
        batch.add_column(sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("exclusive", sa.String(16), nullable=True))
        batch.create_index("uq_jobs_exclusive", ["exclusive"], unique=True)
        batch.create_index("ix_jobs_status_created", ["status", "created_at"])
    # Jobs and evaluations of the old in-process runner have no owner to finish them.
    op.execute(
        sa.text("UPDATE jobs SET status = 'failed', error = :reason, finished_at = CURRENT_TIMESTAMP "
                "WHERE status IN ('queued', 'running')").bindparams(reason=_INTERRUPTED)
    )  # fmt: skip
    op.execute(
        sa.text("UPDATE evaluations SET status = 'failed', error = :reason, finished_at = CURRENT_TIMESTAMP "
                "WHERE status IN ('queued', 'running')").bindparams(reason=_INTERRUPTED)
    )  # fmt: skip


def downgrade() -> None:
    """Drop the worker columns."""
    with op.batch_alter_table("jobs") as batch:
        batch.drop_index("ix_jobs_status_created")
        batch.drop_index("uq_jobs_exclusive")
        batch.drop_column("exclusive")
        batch.drop_column("cancel_requested")
        batch.drop_column("lease_expires_at")
        batch.drop_column("owner")
