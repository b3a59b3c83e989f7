"""The waits of the follower and the job worker (`ChangeWaiter`): a notification committed ends a wait at
once (on PostgreSQL through LISTEN, on SQLite within the process), a rolled-back one does not, and closing
ends a wait long before its poll, on every database."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session

from app.db.engine import make_engine
from app.db.notifications import ChangeWaiter, notify_changes

LONG_POLL = 60.0  # far longer than any wait below may take: reaching it would be the failure


@pytest.fixture
def waiter(database_url: str) -> Iterator[ChangeWaiter]:
    """A waiter on a channel of its own (no other test's notifications), LISTENing already on PostgreSQL."""
    engine = make_engine(database_url)
    waiter = ChangeWaiter(engine, f"pairank_test_{uuid.uuid4().hex[:12]}")
    assert waiter.wait(0, threading.Event(), listening_poll=0) is False
    yield waiter
    waiter.close()
    engine.dispose()


def timed_wait(waiter: ChangeWaiter, closed: threading.Event) -> bool:
    """Wait with the long poll, asserting that it ended long before it."""
    started = time.monotonic()
    woken = waiter.wait(LONG_POLL, closed, listening_poll=LONG_POLL)
    assert time.monotonic() - started < LONG_POLL / 4
    return woken


def test_closing_ends_a_wait_long_before_its_poll(waiter: ChangeWaiter) -> None:
    closed = threading.Event()
    threading.Timer(0.3, closed.set).start()
    assert timed_wait(waiter, closed) is False


def test_a_commit_wakes_the_waiter_and_a_rollback_does_not(waiter: ChangeWaiter, database_url: str) -> None:
    engine, channel, closed = make_engine(database_url), waiter.channel, threading.Event()
    with Session(engine) as session:
        with session.begin():
            notify_changes(session, "rolled back", channel)
            session.rollback()
        assert waiter.wait(0.3, closed, listening_poll=0.3) is False  # nothing was committed
        with session.begin():
            notify_changes(session, "committed", channel)
    engine.dispose()
    assert timed_wait(waiter, closed) is True
