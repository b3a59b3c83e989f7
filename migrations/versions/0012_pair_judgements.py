"""Pairs record who judged them and when a judgement last changed, and are found by (query, document).

`query_sha256` keys a judgement: the console's judge buttons update the pair of a (query, document)
instead of adding another (`PUT .../pairs/judgement`). A hash, not the query text, is indexed: query
texts run to 10,000 characters, beyond what a PostgreSQL btree entry holds. Existing pairs get their
hashes here; nothing else about them changes.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_BATCH = 1000


def upgrade() -> None:
    """Add training_pairs.judged_by, updated_at, query_sha256 (filled in) and its index."""
    with op.batch_alter_table("training_pairs") as batch:
        batch.add_column(sa.Column("judged_by", sa.String(100), nullable=True))
        batch.add_column(sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("query_sha256", sa.String(64), nullable=True))
    pairs = sa.table(
        "training_pairs", sa.column("id", sa.Integer), sa.column("query", sa.Text), sa.column("query_sha256")
    )
    connection = op.get_bind()
    last = 0
    while True:
        rows = connection.execute(
            sa.select(pairs.c.id, pairs.c.query).where(pairs.c.id > last).order_by(pairs.c.id).limit(_BATCH)
        ).all()
        if not rows:
            break
        connection.execute(
            pairs.update().where(pairs.c.id == sa.bindparam("pair_id")),
            [{"pair_id": i, "query_sha256": hashlib.sha256(q.encode()).hexdigest()} for i, q in rows],
        )
        last = rows[-1][0]
    op.create_index("ix_training_pairs_corpus_query", "training_pairs", ["corpus_id", "query_sha256"])


def downgrade() -> None:
    """Drop the index and the three columns."""
    op.drop_index("ix_training_pairs_corpus_query", table_name="training_pairs")
    with op.batch_alter_table("training_pairs") as batch:
        batch.drop_column("query_sha256")
        batch.drop_column("updated_at")
        batch.drop_column("judged_by")
