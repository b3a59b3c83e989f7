"""Use-case fixtures: a migrated database without any server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.engine import make_engine, make_session_factory
from app.db.migrate import upgrade_to_head


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    """A session factory on a migrated, empty database."""
    upgrade_to_head(database_url)
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()
