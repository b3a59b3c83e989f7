"""SQL for training pairs, jobs and model versions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.errors import ConflictError
from app.db.admin_models import ApiKey, ModelVersion, TrainingPair
from app.db.changes import notify_changes
from app.db.models import utcnow


class PairRepository:
    """Training pairs of one corpus."""

    def __init__(self, session: Session, corpus_id: int) -> None:
        self.session = session
        self.corpus_id = corpus_id

    def add_many(self, rows: Sequence[dict[str, Any]]) -> list[TrainingPair]:
        """Insert pairs ({query, document_id | document, label, split}); returns them with ids."""
        pairs = [TrainingPair(corpus_id=self.corpus_id, **row) for row in rows]
        self.session.add_all(pairs)
        self.session.flush()
        return pairs

    def list(self, split: str | None = None, offset: int = 0, limit: int | None = None) -> list[TrainingPair]:
        """Pairs in insertion order, optionally of one split."""
        query = select(TrainingPair).where(TrainingPair.corpus_id == self.corpus_id)
        if split is not None:
            query = query.where(TrainingPair.split == split)
        query = query.order_by(TrainingPair.id).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        return list(self.session.scalars(query))

    def counts(self) -> dict[str, int]:
        """Pair counts: total, positives (label > 0), and per split."""
        positives = func.sum(case((TrainingPair.label > 0, 1), else_=0))
        rows = self.session.execute(
            select(TrainingPair.split, positives, func.count())
            .where(TrainingPair.corpus_id == self.corpus_id)
            .group_by(TrainingPair.split)
        ).all()
        counts = {"total": 0, "positive": 0, "negative": 0, "train": 0, "dev": 0, "unsplit": 0}
        for split, positive, count in rows:
            counts["total"] += count
            counts["positive"] += int(positive)
            counts["negative"] += count - int(positive)
            counts[split or "unsplit"] += count
        return counts

    def get(self, pair_id: int) -> TrainingPair | None:
        """One pair by id, if it belongs to this corpus."""
        pair = self.session.get(TrainingPair, pair_id)
        return pair if pair is not None and pair.corpus_id == self.corpus_id else None

    def delete(self, pair: TrainingPair) -> None:
        """Delete one pair."""
        self.session.delete(pair)


class ModelRepository:
    """The model registry."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, version: str) -> ModelVersion | None:
        """One registered version."""
        return self.session.get(ModelVersion, version)

    def active(self) -> ModelVersion | None:
        """The active version, if one was ever activated."""
        return self.session.scalar(select(ModelVersion).where(ModelVersion.is_active.is_(True)).limit(1))

    def list(self) -> list[ModelVersion]:
        """Every version, newest first."""
        return list(self.session.scalars(select(ModelVersion).order_by(ModelVersion.created_at.desc())))

    def add(self, **fields: Any) -> ModelVersion:
        """Register a version; ConflictError when it is registered already (also concurrently)."""
        row = ModelVersion(**fields)
        try:
            with self.session.begin_nested():
                self.session.add(row)
                self.session.flush()
        except IntegrityError as error:
            raise ConflictError(f"model version {row.version!r} is registered already", "version") from error
        return row

    def record_encoder(self, version: str, encoder: dict[str, Any]) -> None:
        """Store how a version is served (backend, precision, quality gate)."""
        row = self.get(version)
        if row is not None and row.encoder != encoder:
            row.encoder = encoder

    def activate(self, version: str) -> None:
        """Make one version the only active one (a single transaction, so never zero or two)."""
        self.session.execute(
            update(ModelVersion).where(ModelVersion.is_active.is_(True)).values(is_active=False)
        )
        self.session.execute(
            update(ModelVersion)
            .where(ModelVersion.version == version)
            .values(is_active=True, activated_at=utcnow())
        )
        notify_changes(self.session, f"model:{version}")  # followers switch at once, not at their next poll


class ApiKeyRepository:
    """API keys (hashes only)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, key: ApiKey) -> ApiKey:
        """Store a new key."""
        self.session.add(key)
        self.session.flush()
        return key

    def get(self, key_id: str) -> ApiKey | None:
        """One key by id (revoked ones included)."""
        return self.session.get(ApiKey, key_id)

    def list(self) -> list[ApiKey]:
        """Every key, newest first."""
        return list(self.session.scalars(select(ApiKey).order_by(ApiKey.created_at.desc())))

    def count_active_admin(self) -> int:
        """How many admin keys are not revoked."""
        query = select(ApiKey).where(ApiKey.scope == "admin", ApiKey.revoked_at.is_(None))
        return len(list(self.session.scalars(query)))
