"""PostgreSQL for tests: a fresh schema per test (or module) on a shared server, so runs never see each
other; or a server of one test's own (the pgserver wheel), which it may stop and start."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url


def _schema_url(base_url: str, schema: str, *path: str) -> str:
    url = make_url(base_url)
    query = dict(url.query)
    query["options"] = f"-csearch_path={','.join([schema, *path])}"
    return url.set(query=query).render_as_string(hide_password=False)


@contextmanager
def postgres_schema(base_url: str, *path: str) -> Iterator[str]:
    """Create a schema, yield a URL whose search path is it (then `path`), drop it with everything in it."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base_url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield _schema_url(base_url, schema, *path)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@contextmanager
def own_postgres(folder: Path) -> Iterator[Any]:
    """A PostgreSQL only this test uses, in `folder` (skips the test where the pgserver wheel cannot run)."""
    pgserver = pytest.importorskip("pgserver", reason="the pgserver wheel starts the test's own PostgreSQL")
    try:
        server = pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as error:  # noqa: BLE001 - any failure to start a server means: not here
        pytest.skip(f"the pgserver wheel's PostgreSQL did not start: {error}")
    try:
        yield server
    finally:
        server.cleanup()


def stop_postgres(server: Any) -> None:
    """Stop an own PostgreSQL at once (fast shutdown: open connections are cut); start it again with
    `server.ensure_postgres_running()`."""
    from pgserver import _commands

    _commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


def psycopg_url(server: Any) -> str:
    """An own PostgreSQL's URL for SQLAlchemy with psycopg 3."""
    return str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
