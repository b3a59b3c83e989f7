"""SQL for the model registry: registered versions, the active one, its activation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.errors import ConflictError, NotFoundError
from app.db.admin_models import ModelVersion
from app.db.engine import insert_if_absent
from app.db.models import utcnow
from app.db.notifications import notify_changes


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
