"""Database engine and session factory (SQLite embedded default, PostgreSQL in production)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker


def _enable_sqlite_foreign_keys(dbapi_connection: Any, _record: Any) -> None:
    # SQLite ignores ON DELETE CASCADE unless foreign keys are switched on per connection;
    # WAL lets readers go on while a large upsert commits.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Create an engine; for a SQLite file, create its folder and switch on foreign keys and WAL."""
    parsed = make_url(url)
    # Up to 30 connections per process: the request thread pool has 40 threads, and a connection opened
    # past the pool is closed again after one use (costly under load, and on SQLite it re-runs PRAGMAs).
    # No `pool_pre_ping`: its `SELECT 1` is a round trip and, on PostgreSQL, a transaction of its own on
    # every checkout (it doubled the hot path's transactions). A connection the driver already knows is
    # broken is replaced at checkout (`_drop_broken`); one the server dropped silently fails the request
    # that meets it (503 with Retry-After), and SQLAlchemy then renews the whole pool.
    kwargs: dict[str, Any] = {"pool_size": 10, "max_overflow": 20, "pool_recycle": 1800}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        # A local file cannot drop a connection: no ping per checkout; keep every connection pooled.
        kwargs.update(pool_size=30, max_overflow=0, pool_recycle=-1)
    else:
        # A database host that drops packets would otherwise hold /ready and every request for minutes.
        kwargs["connect_args"] = {"connect_timeout": 10}
    engine = create_engine(url, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _enable_sqlite_foreign_keys)
    else:
        event.listen(engine, "checkout", _drop_broken)
    return engine


def _drop_broken(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    # A local check, no round trip: psycopg marks a connection closed or broken once it has seen it fail.
    if getattr(dbapi_connection, "closed", False) or getattr(dbapi_connection, "broken", False):
        raise DisconnectionError("pooled connection is closed or broken")


def insert_if_absent(session: Session, table: Any, values: dict[str, Any]) -> bool:
    """INSERT a row unless one with the same unique key exists (ON CONFLICT DO NOTHING); whether it did.

    The portable alternative to a savepoint around a plain INSERT: on SQLite (pysqlite) a SAVEPOINT
    that opens the transaction is committed by its RELEASE, so rows written before it would become
    visible before the transaction's end. On PostgreSQL a conflicting row still being written by another
    transaction is waited for: nothing is inserted if it commits, the row is if it rolls back.
    """
    dialect = session.get_bind().dialect.name
    table = getattr(table, "__table__", table)  # a Core insert: the ORM's bulk path hides the row count
    statement = postgresql_insert(table) if dialect == "postgresql" else sqlite_insert(table)
    key = list(table.primary_key.columns)[0]
    inserted = session.execute(statement.values(**values).on_conflict_do_nothing().returning(key))
    return inserted.first() is not None


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """A session factory whose objects stay readable after commit."""
    return sessionmaker(bind=engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on any error."""
    with factory() as session, session.begin():
        yield session


# Errors meaning "the database cannot be reached now" (server down, refused, file unopenable): the API
# answers them with 503 and Retry-After instead of a 500.
DATABASE_UNAVAILABLE: tuple[type[Exception], ...] = (OperationalError, InterfaceError)


def database_problem(engine: Engine) -> str | None:
    """None when one round trip (`SELECT 1`) succeeds; else why it failed, in one line."""
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except DBAPIError as error:
        return str(error.orig or error).strip().splitlines()[0][:300]
    return None


class _SharedSession(Session):
    """A Session that nested `with` blocks share: only the outermost one closes it (ends its transaction)."""

    _depth = 0

    def __enter__(self) -> _SharedSession:
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.close()


class RequestSessions(sessionmaker[Session]):
    """The sessions of one request: every `with sessions() as session` gets the same Session (the key
    check and the handler share it), each use ending its transaction and handing the connection back
    to the pool, so a request never holds one while it encodes or searches."""

    def __init__(self, factory: sessionmaker[Session]) -> None:  # noqa: D107 - no new type per request
        self.kw = factory.kw
        self.class_ = factory.class_
        self._session: _SharedSession | None = None

    def __call__(self, **local_kw: Any) -> Session:
        """The request's Session (made on first use: requests that need no database never open one)."""
        if self._session is None:
            self._session = _SharedSession(**{**self.kw, **local_kw})
        return self._session

    def close(self) -> None:
        """At the end of the request."""
        if self._session is not None:
            self._session.close()
