"""ORM models. The schema itself is created by Alembic migrations, never by `create_all` outside tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

CORPUS_KINDS = ("claim", "answer", "question")


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every database.

    PostgreSQL keeps the zone; SQLite stores text without one and hands back naive datetimes, which
    would serialize without the `Z` that RFC 3339 needs. Values are stored in UTC and always read back
    as aware UTC datetimes.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Store aware values converted to UTC; naive ones are taken as UTC already."""
        if value is None:
            return None
        return value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        """Read back an aware UTC datetime."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """Timezone-aware current time in UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base for all pairank tables."""


class Corpus(Base):
    """A named collection of documents of one kind (claims, answers or questions)."""

    __tablename__ = "corpora"
    __table_args__ = (CheckConstraint("kind IN ('claim', 'answer', 'question')", name="ck_corpora_kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Calibrated duplicate threshold and the model version it was calibrated with (valid for that one only).
    duplicate_threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    threshold_model: Mapped[str | None] = mapped_column(String(300), nullable=True)
    calibration: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # How the corpus ranks best with one model: {"model", "mode", "alpha", "fusion", "metric", ...}.
    ranking_calibration: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # How it ranks without a calibration for the serving model: {"mode", "alpha", "fusion"}, set at
    # creation (the kind's default unless the request names one); null: dense (corpora made before it).
    default_ranking: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # How it decides match / review / new (targets, short texts, recency; null: the defaults), and the
    # decision model calibrated on its judged pairs for one model version (app/usecases/matching.py).
    match_policy: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    match_calibration: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Highest change-log sequence number of this corpus: workers compare it with their indexes' marks.
    change_seq: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0, server_default="0")
    # The search structure requested at creation (indexes.spec.IndexSpec); null means automatic.
    index_spec: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # ISO 639-1 code its texts are analysed in, or "multi": each document in its own (`Document.language`).
    language: Mapped[str] = mapped_column(String(8), nullable=False, default="en", server_default="en")
    # The scale its judges grade on: `binary` (0/1) or `graded` (0-3) (app/core/grades.py).
    judgement_scale: Mapped[str] = mapped_column(
        String(8), nullable=False, default="binary", server_default="binary"
    )
    # Maintained by every insert and delete (under the row lock): O(1) counts at any corpus size.
    document_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(
        UtcDateTime(), default=utcnow, onupdate=utcnow, nullable=False
    )

    documents: Mapped[list[Document]] = relationship(
        back_populates="corpus", cascade="all, delete-orphan", passive_deletes=True
    )


class Document(Base):
    """A text in a corpus, addressed by an external id unique within the corpus."""

    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("corpus_id", "external_id", name="uq_documents_corpus_external"),
        Index("ix_documents_corpus_language", "corpus_id", "language"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False, index=True
    )
    external_id: Mapped[str] = mapped_column(String(256), nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    # The hash lets start-up reconcile an index bundle with the database without reading every text.
    text_sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, nullable=True)
    # Its own language in a `multi` corpus (given, or detected from the text); null in a corpus of one
    # language, whose documents are all in the corpus's (a change to one clears them: app/control).
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(
        UtcDateTime(), default=utcnow, onupdate=utcnow, nullable=False
    )

    corpus: Mapped[Corpus] = relationship(back_populates="documents")


CHANGE_OPS = ("upsert", "delete")


class DocumentChange(Base):
    """One entry of the change log: a document's text was inserted or replaced, or it was deleted.

    Written in the same transaction as the document itself, under the corpus row's lock, so within a
    corpus the sequence order is the commit order: a reader that has applied everything up to N never
    misses a change numbered below N. Metadata-only updates are not logged (no vector changes).
    """

    __tablename__ = "document_changes"
    __table_args__ = (
        CheckConstraint("op IN ('upsert', 'delete')", name="ck_document_changes_op"),
        Index("ix_document_changes_corpus_seq", "corpus_id", "seq"),
        {"sqlite_autoincrement": True},
    )

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    document_id: Mapped[int] = mapped_column(Integer, nullable=False)
    external_id: Mapped[str] = mapped_column(String(256), nullable=False)
    op: Mapped[str] = mapped_column(String(8), nullable=False)
    text_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)


EVALUATION_STATUSES = ("queued", "running", "succeeded", "failed")


class Evaluation(Base):
    """An offline evaluation run: its request, status, metrics and per-query breakdown."""

    __tablename__ = "evaluations"
    __table_args__ = (
        CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed')", name="ck_evaluations_status"
        ),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    corpus_name: Mapped[str | None] = mapped_column(String(100), nullable=True)
    mode: Mapped[str] = mapped_column(String(16), nullable=False)
    model_version: Mapped[str | None] = mapped_column(String(300), nullable=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    per_query: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    ranking: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # the first stage's setting
    rerank: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # the stage that ran
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    duration_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)

    @property
    def query_count(self) -> int:
        """How many distinct queries the request judges."""
        return len({q["query_id"] for q in self.request.get("qrels", [])})
