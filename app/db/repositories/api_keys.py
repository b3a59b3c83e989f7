"""SQL for API keys (their hashes only)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.admin_models import ApiKey


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
