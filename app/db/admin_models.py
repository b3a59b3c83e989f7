"""ORM models of the retraining loop: labeled training pairs, jobs and the model registry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models import Base, UtcDateTime, utcnow
from pairank.models import BI_ENCODER

JOB_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")
UNFINISHED_JOB_STATUSES = ("queued", "running")


class TrainingPair(Base):
    """A labeled (query, document) pair of a corpus: label 1/0 or a graded score."""

    __tablename__ = "training_pairs"
    __table_args__ = (Index("ix_training_pairs_corpus_query", "corpus_id", "query_sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False, index=True
    )
    query: Mapped[str] = mapped_column(Text, nullable=False)
    # Either a stored document (resolved to its text when a job exports the pairs) or an inline text.
    document_id: Mapped[str | None] = mapped_column(String(256), nullable=True)
    document: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The aggregate of its judgements (app/core/grades.py); null while every judge was unsure: such
    # pairs are never read as pairs (`PairRepository.list` leaves them out), so readers see a float.
    label: Mapped[float] = mapped_column(Float, nullable=True)
    split: Mapped[str | None] = mapped_column(String(8), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    # Who stored or last changed the judgement (a key id; `admin-key` for PAIRANK_ADMIN_API_KEY,
    # `anonymous` with auth disabled) and when it last changed (null: never since it was stored).
    judged_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    updated_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Finds the pair of a (query, document): query texts are too long to index themselves (migration 0012).
    query_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Its judges gave different grades (migration 0018): the review screen's filter.
    disagreement: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())


class Job(Base):
    """A job run by a worker (retraining, activation, evaluation, import): state, lease, progress, outcome.

    A worker owns a running job while its lease is fresh; `cancel_requested` asks it to stop from any
    process; `exclusive` is "model" while a retraining or activation job is unfinished (unique).
    """

    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    corpus_name: Mapped[str | None] = mapped_column(String(100), nullable=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    progress: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    log_tail: Mapped[str | None] = mapped_column(Text, nullable=True)
    run_dir: Mapped[str | None] = mapped_column(Text, nullable=True)
    model_version: Mapped[str | None] = mapped_column(String(300), nullable=True)
    gate: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    exclusive: Mapped[str | None] = mapped_column(String(16), nullable=True, unique=True)


class ModelVersion(Base):
    """A registered model; exactly one is active (the one the service serves)."""

    __tablename__ = "model_versions"

    version: Mapped[str] = mapped_column(String(300), primary_key=True)
    model_id: Mapped[str] = mapped_column(String(300), nullable=False)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    source: Mapped[str] = mapped_column(String(16), nullable=False)  # configured | trained
    base_model: Mapped[str | None] = mapped_column(String(300), nullable=True)
    weights_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    training: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    dev_metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # How the version is served: backend, precision and the export's quality-gate result.
    encoder: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    is_active: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    activated_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # The model's files as stored by the artifact store (app/stores/artifacts): which store, the sha256 of
    # its manifest (the files' paths, hashes and sizes: `model_files`), their bytes and count. Null for
    # a model no store holds: the bundled default (in every install) or a hub name.
    artifact_store: Mapped[str | None] = mapped_column(String(16), nullable=True)
    artifact_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    artifact_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    artifact_files: Mapped[int | None] = mapped_column(Integer, nullable=True)

    @property
    def kind(self) -> str:
        """`bi-encoder` (serves, can be activated) or `cross-encoder` (a corpus's re-ranker), as recorded
        in `training` when it was registered (versions registered before kinds existed: bi-encoders)."""
        return str((self.training or {}).get("kind") or BI_ENCODER)


SCOPES = ("read", "write", "admin")


class ApiKey(Base):
    """An API key: its scope, the corpora it may touch (null: all), and a salted hash of its secret.

    The secret itself is shown once at creation and never stored.
    """

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    scope: Mapped[str] = mapped_column(String(8), nullable=False)
    corpora: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    salt: Mapped[str] = mapped_column(String(32), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
