"""ORM models of the judging workbench: each judge's judgement of a pair, query sets and their runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models import Base, UtcDateTime, utcnow


class PairJudgement(Base):
    """One judge's grade of a training pair (null: unsure/skip), with a note; one row per (pair, judge).
    The pair's label is their aggregate (app/core/grades.py)."""

    __tablename__ = "judgements"
    __table_args__ = (UniqueConstraint("pair_id", "judged_by", name="uq_judgements_pair_judge"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False, index=True
    )
    pair_id: Mapped[int] = mapped_column(
        ForeignKey("training_pairs.id", ondelete="CASCADE"), nullable=False, index=True
    )
    judged_by: Mapped[str] = mapped_column(String(100), nullable=False)
    grade: Mapped[float | None] = mapped_column(Float, nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    updated_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class QuerySet(Base):
    """A named list of queries of a corpus, re-scored on demand and after every ranking change."""

    __tablename__ = "query_sets"
    __table_args__ = (UniqueConstraint("corpus_id", "name", name="uq_query_sets_corpus_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    queries: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


class QuerySetRun(Base):
    """One scoring of a query set: why it ran, the model, its metrics and each query's."""

    __tablename__ = "query_set_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    query_set_id: Mapped[int] = mapped_column(
        ForeignKey("query_sets.id", ondelete="CASCADE"), nullable=False, index=True
    )
    job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    trigger: Mapped[str] = mapped_column(String(32), nullable=False)
    model: Mapped[str | None] = mapped_column(String(300), nullable=True)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    per_query: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
