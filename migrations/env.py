"""Alembic environment: runs migrations online against the configured database."""

from __future__ import annotations

from alembic import context

import app.db.admin_models  # noqa: F401  (registers the retraining tables on Base.metadata)
import app.db.inbox_models  # noqa: F401  (registers the inbox tables)
import app.db.workbench_models  # noqa: F401  (the judgements and query-set tables)
from app.db.engine import make_engine
from app.db.models import Base

config = context.config
target_metadata = Base.metadata


def _database_url() -> str:
    # A URL set programmatically (tests, `pairank migrate`) wins over the service settings.
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from app.config import get_settings

    return get_settings().resolved_database_url


def run_migrations_online() -> None:
    """Apply migrations over one connection, each in its own transaction."""
    connectable = config.attributes.get("connection")
    if connectable is not None:
        context.configure(connection=connectable, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_database_url())
    try:
        with engine.connect() as connection:
            # render_as_batch lets later ALTERs run on SQLite, which cannot alter most constraints in place.
            context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


run_migrations_online()
