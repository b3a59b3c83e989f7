"""SQL for training pairs, jobs and model versions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, func, select, update
from sqlalchemy.orm import Session

from app.core.errors import ConflictError, NotFoundError
from app.core.text_hash import text_sha256
from app.db.admin_models import ApiKey, ModelVersion, TrainingPair
from app.db.changes import notify_changes
from app.db.engine import insert_if_absent
from app.db.models import Corpus, utcnow


class PairRepository:
    """Training pairs of one corpus."""

    def __init__(self, session: Session, corpus_id: int) -> None:
        self.session = session
        self.corpus_id = corpus_id

    def add_many(self, rows: Sequence[dict[str, Any]]) -> list[TrainingPair]:
        """Insert pairs ({query, document_id | document, label, split, judged_by}); returns them with ids."""
        pairs = [
            TrainingPair(corpus_id=self.corpus_id, query_sha256=text_sha256(r["query"]), **r) for r in rows
        ]
        self.session.add_all(pairs)
        self.session.flush()
        return pairs

    def list(
        self, split: str | None = None, offset: int = 0, limit: int | None = None, query: str | None = None
    ) -> list[TrainingPair]:
        """Pairs in insertion order, optionally of one split, or of one query text."""
        statement = select(TrainingPair).where(TrainingPair.corpus_id == self.corpus_id)
        if split is not None:
            statement = statement.where(TrainingPair.split == split)
        if query is not None:
            statement = statement.where(
                TrainingPair.query_sha256 == text_sha256(query), TrainingPair.query == query
            )
        statement = statement.order_by(TrainingPair.id).offset(offset)
        if limit is not None:
            statement = statement.limit(limit)
        return list(self.session.scalars(statement))

    def take_writer_turn(self) -> None:
        """Make this transaction the corpus's one writer until it ends, before it reads: a no-op UPDATE of
        the corpus row takes SQLite's write lock (whose driver begins a transaction only at a write) and
        the row lock on PostgreSQL, so a read-then-write (a judgement's upsert) never races another."""
        self.session.execute(
            update(Corpus).where(Corpus.id == self.corpus_id).values(updated_at=Corpus.updated_at)
        )

    def find(self, query: str, document_id: str) -> TrainingPair | None:
        """The first stored pair of this query and stored document, if any."""
        return self.session.scalar(
            select(TrainingPair)
            .where(
                TrainingPair.corpus_id == self.corpus_id,
                TrainingPair.query_sha256 == text_sha256(query),
                TrainingPair.query == query,
                TrainingPair.document_id == document_id,
            )
            .order_by(TrainingPair.id)
            .limit(1)
        )

    def counts(self) -> dict[str, int]:
        """Pair counts: total, positives (label > 0), per split, and distinct judged queries."""
        positives = func.sum(case((TrainingPair.label > 0, 1), else_=0))
        mine = TrainingPair.corpus_id == self.corpus_id
        rows = self.session.execute(
            select(TrainingPair.split, positives, func.count()).where(mine).group_by(TrainingPair.split)
        ).all()
        counts = {"total": 0, "positive": 0, "negative": 0, "train": 0, "dev": 0, "unsplit": 0}
        for split, positive, count in rows:
            counts["total"] += count
            counts["positive"] += int(positive)
            counts["negative"] += count - int(positive)
            counts[split or "unsplit"] += count
        # Distinct by hash: the index answers it; two texts with one SHA-256 do not happen.
        queries = select(func.count(func.distinct(TrainingPair.query_sha256))).where(mine)
        counts["queries"] = int(self.session.scalar(queries) or 0)
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

    def previous(self) -> ModelVersion | None:
        """The version active before the active one (the rollback target): the latest activated other one."""
        query = (
            select(ModelVersion)
            .where(ModelVersion.is_active.is_(False), ModelVersion.activated_at.is_not(None))
            .order_by(ModelVersion.activated_at.desc())
            .limit(1)
        )
        return self.session.scalar(query)

    def registered_from(self, path: str, *, stored: bool = False) -> ModelVersion | None:
        """The newest version registered from `path` (a folder or a name); `stored`: only one whose files
        an artifact store holds."""
        query = select(ModelVersion).where(ModelVersion.path == path)
        if stored:
            query = query.where(ModelVersion.artifact_store.is_not(None))
        return self.session.scalar(query.order_by(ModelVersion.created_at.desc()).limit(1))

    def has_manifest(self, sha256: str) -> bool:
        """Whether a registered version's stored files have this manifest sha256."""
        query = select(ModelVersion.version).where(ModelVersion.artifact_sha256 == sha256).limit(1)
        return self.session.scalar(query) is not None

    def unstored(self) -> Sequence[ModelVersion]:
        """Versions whose files no artifact store holds yet (registered before stores, or hub names)."""
        query = select(ModelVersion).where(ModelVersion.artifact_store.is_(None))
        return list(self.session.scalars(query.order_by(ModelVersion.created_at)))

    def lock(self, version: str) -> ModelVersion | None:
        """One version, its row locked until the transaction ends (PostgreSQL; SQLite writers take turns)."""
        return self.session.scalar(
            select(ModelVersion).where(ModelVersion.version == version).with_for_update()
        )

    def delete(self, row: ModelVersion) -> None:
        """Forget a version (its manifest rows go with it)."""
        self.session.delete(row)
        self.session.flush()

    def add(self, **fields: Any) -> ModelVersion:
        """Register a version; ConflictError when it is registered already (also concurrently). The row
        is written in the caller's transaction, visible only when it commits (with the model's files)."""
        version = fields["version"]
        if not insert_if_absent(self.session, ModelVersion, {"is_active": False, **fields}):
            raise ConflictError(f"model version {version!r} is registered already", "version")
        row = self.session.get(ModelVersion, version)
        assert row is not None  # inserted just now, in this transaction
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
        switched = self.session.execute(
            update(ModelVersion)
            .where(ModelVersion.version == version)
            .values(is_active=True, activated_at=utcnow())
        )
        if switched.rowcount != 1:  # type: ignore[attr-defined]
            # Deleted meanwhile: raising rolls the whole switch back, so the old version stays active.
            raise NotFoundError(f"model version {version!r} is not registered", field="version")
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
