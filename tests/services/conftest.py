"""Use-case fixtures: a migrated database without any server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db.engine import make_engine, make_session_factory
from app.db.migrate import upgrade_to_head
from app.services.registry import active_model_spec
from app.services.runtime import Runtime

RuntimeFactory = Callable[..., Runtime]


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    """A session factory on a migrated, empty database."""
    upgrade_to_head(database_url)
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def make_runtime(make_settings: Callable[..., Settings]) -> Iterator[RuntimeFactory]:
    """Runtimes on one migrated database and data dir, with no background threads (tests drive them)."""
    opened: list[Runtime] = []

    def factory(**overrides: Any) -> Runtime:
        settings = make_settings(embedded_worker=False, **overrides)
        upgrade_to_head(settings.resolved_database_url)
        runtime = Runtime(settings)
        opened.append(runtime)
        return runtime

    yield factory
    for runtime in opened:
        runtime.close()


def serve(runtime: Runtime) -> None:
    """What the loader thread does, in the test's thread: serve the registry's active model."""
    spec = active_model_spec(runtime.sessions, runtime.settings.model)
    runtime.serving.start(runtime.serving.build_state(spec))
