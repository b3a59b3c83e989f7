"""The waits of the follower and the job worker (`ChangeWaiter`): a notification committed ends a wait at
once (on PostgreSQL through LISTEN, on SQLite within the process), a rolled-back one does not, and closing
ends a wait long before its poll, on every database."""

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


def test_a_commit_wakes_the_waiter_and_a_rollback_does_not(database_url: str) -> None:
    engine = make_engine(database_url)
    channel = f"pairank_test_{uuid.uuid4().hex[:12]}"
    waiter = ChangeWaiter(engine, channel)
    closed = threading.Event()
    try:
        assert waiter.wait(0, closed, listening_poll=0) is False
        with Session(engine) as session:
            with session.begin():
                notify_changes(session, "rolled back", channel)
                session.rollback()
            assert waiter.wait(0.3, closed, listening_poll=0.3) is False  # nothing was committed
            with session.begin():
                notify_changes(session, "committed", channel)
        started = time.monotonic()
        assert waiter.wait(LONG_POLL, closed, listening_poll=LONG_POLL) is True
        assert time.monotonic() - started < LONG_POLL / 4
    finally:
        waiter.close()
        engine.dispose()
