"""The workbench for a team: one judgement per (pair, judge), a corpus's judging scale, query sets.

Every existing pair keeps its label and gets one judgement row: by its `judged_by` (`unknown` where it
was stored before judges were recorded), its label as the grade, its times. A pair's label is from now
on the aggregate of its judgements (app/core/grades.py), null while every judge was unsure; pairs
whose judges differ are flagged (`disagreement`). Corpora judge on `binary` unless changed.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def _created_at() -> sa.Column[object]:
    """A not-null creation time."""
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    """Add corpora.judgement_scale, training_pairs.disagreement (label nullable), judgements (filled
    from the pairs), query_sets and query_set_runs."""
    with op.batch_alter_table("corpora") as batch:
        batch.add_column(sa.Column("judgement_scale", sa.String(8), nullable=False, server_default="binary"))
    with op.batch_alter_table("training_pairs") as batch:
        batch.add_column(sa.Column("disagreement", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.alter_column("label", existing_type=sa.Float(), nullable=True)
    op.create_table(
        "judgements",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("corpus_id", sa.Integer(), sa.ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False),
        sa.Column(
            "pair_id", sa.Integer(), sa.ForeignKey("training_pairs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("judged_by", sa.String(100), nullable=False),
        sa.Column("grade", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        _created_at(),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("pair_id", "judged_by", name="uq_judgements_pair_judge"),
    )
    op.create_index("ix_judgements_corpus_id", "judgements", ["corpus_id"])
    op.create_index("ix_judgements_pair_id", "judgements", ["pair_id"])
    op.execute(
        "INSERT INTO judgements (corpus_id, pair_id, judged_by, grade, note, created_at, updated_at) "
        "SELECT corpus_id, id, COALESCE(judged_by, 'unknown'), label, NULL, created_at, updated_at "
        "FROM training_pairs ORDER BY id"
    )
    op.create_table(
        "query_sets",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("corpus_id", sa.Integer(), sa.ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("queries", sa.JSON(), nullable=False),
        _created_at(),
        sa.UniqueConstraint("corpus_id", "name", name="uq_query_sets_corpus_name"),
    )
    op.create_index("ix_query_sets_corpus_id", "query_sets", ["corpus_id"])
    op.create_table(
        "query_set_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "query_set_id", sa.Integer(), sa.ForeignKey("query_sets.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("job_id", sa.String(36), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("trigger", sa.String(32), nullable=False),
        sa.Column("model", sa.String(300), nullable=True),
        sa.Column("metrics", sa.JSON(), nullable=True),
        sa.Column("per_query", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        _created_at(),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_query_set_runs_query_set_id", "query_set_runs", ["query_set_id"])


def downgrade() -> None:
    """Drop the new tables and columns; pairs every judge was unsure of (no label) go with them."""
    op.drop_index("ix_query_set_runs_query_set_id", table_name="query_set_runs")
    op.drop_table("query_set_runs")
    op.drop_index("ix_query_sets_corpus_id", table_name="query_sets")
    op.drop_table("query_sets")
    op.drop_index("ix_judgements_pair_id", table_name="judgements")
    op.drop_index("ix_judgements_corpus_id", table_name="judgements")
    op.drop_table("judgements")
    op.execute("DELETE FROM training_pairs WHERE label IS NULL")
    with op.batch_alter_table("training_pairs") as batch:
        batch.alter_column("label", existing_type=sa.Float(), nullable=False)
        batch.drop_column("disagreement")
    with op.batch_alter_table("corpora") as batch:
        batch.drop_column("judgement_scale")
