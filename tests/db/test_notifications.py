"""The waits of the follower and the job worker (`ChangeWaiter`): a NOTIFY committed on PostgreSQL ends
a wait at once, and closing ends one long before its poll on every database."""

from __future__ import annotations

import threading
import time
import uuid

from sqlalchemy.orm import Session

from app.db.engine import make_engine
from app.db.notifications import ChangeWaiter, notify_changes

LONG_POLL = 60.0  # far longer than any wait below may take: reaching it would be the failure


def test_closing_ends_a_wait_long_before_its_poll(database_url: str) -> None:
    engine = make_engine(database_url)
    waiter = ChangeWaiter(engine, f"pairank_test_{uuid.uuid4().hex[:12]}")  # no other test's NOTIFYs
    closed = threading.Event()
    try:
        threading.Timer(0.3, closed.set).start()
        started = time.monotonic()
        assert waiter.wait(LONG_POLL, closed, listening_poll=LONG_POLL) is False
        assert time.monotonic() - started < LONG_POLL / 4
    finally:
        waiter.close()
        engine.dispose()


def test_a_committed_notify_wakes_the_listener(database_url: str) -> None:
    engine = make_engine(database_url)
    channel = f"pairank_test_{uuid.uuid4().hex[:12]}"
    waiter = ChangeWaiter(engine, channel)
    closed = threading.Event()
    try:
        assert waiter.wait(0, closed, listening_poll=0) is False  # LISTEN is up from here (PostgreSQL)
        with Session(engine) as session, session.begin():
            notify_changes(session, "corpus 1", channel)  # delivered at commit
        started = time.monotonic()
        woken = waiter.wait(0.05 if engine.dialect.name == "sqlite" else LONG_POLL, closed)
        # PostgreSQL delivers it; SQLite has no notifications: its wait is the poll's sleep.
        assert woken is (engine.dialect.name == "postgresql")
        assert time.monotonic() - started < LONG_POLL / 4
    finally:
        waiter.close()
        engine.dispose()
