"""Apply Alembic migrations programmatically (`pairank serve`, `pairank migrate`, tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

import migrations
from app.db.engine import make_engine


def alembic_config(database_url: str) -> Config:
    """An Alembic config pointing at the bundled migration scripts and the given database."""
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    # ConfigParser treats % as interpolation; URLs may carry percent-encoded passwords.
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade_to_head(database_url: str) -> None:
    """Bring the database schema up to the newest migration."""
    command.upgrade(alembic_config(database_url), "head")


def is_at_head(engine: Engine) -> bool:
    """True when the database has every migration applied (a worker waits for the API to migrate)."""
    script = ScriptDirectory.from_config(alembic_config(engine.url.render_as_string(hide_password=False)))
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_heads()
    except DBAPIError:
        return False
    return set(current) == set(script.get_heads())


def migrated_engine(database_url: str, data_dir: Path) -> Engine:
    """An engine on the database, migrated to head first (the data dir, where SQLite lives, created):
    what every command that opens the database on its own starts with."""
    data_dir.mkdir(parents=True, exist_ok=True)
    upgrade_to_head(database_url)
    return make_engine(database_url)
