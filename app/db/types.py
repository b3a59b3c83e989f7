"""Column types shared by the ORM models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


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
