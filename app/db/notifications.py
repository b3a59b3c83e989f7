"""Notifications between processes: corpus settings, document writes, activations, queued jobs.

On PostgreSQL every corpus settings change (app/db/corpus_settings.py), document write and activation
NOTIFYs `CHANGES_CHANNEL`, and every queued job `JOBS_CHANNEL`; the follower (app/serving/follower.py)
and the job worker (app/control/worker.py) block on a LISTEN (`ChangeWaiter`), so their polls are only
the fallback for a lost notification (every `LISTENING_POLL_SECONDS`). On SQLite, which has no
notifications, they poll; a commit in the same process still wakes its own waiters at once (a job queued
on the embedded default starts now, not at the worker's next poll).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import weakref
from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, event, text
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

CHANGES_CHANNEL = "pairank_changes"  # document writes, corpus settings, activations: followers LISTEN
JOBS_CHANNEL = "pairank_jobs"  # a job was queued: job workers LISTEN
LISTENING_POLL_SECONDS = 10.0  # the fallback poll while a LISTEN is up: well under 1 transaction/s
CLOSE_SLICE_SECONDS = 0.1  # how soon a wait sees `closed` (or, on SQLite, a wake-up)
_PENDING = "pairank_notify_here"  # Session.info key: channels to wake in this process when it commits
_LOCAL_LOCK = threading.Lock()
_LOCAL_WAITERS: defaultdict[str, weakref.WeakSet[ChangeWaiter]] = defaultdict(weakref.WeakSet)


def notify_changes(session: Session, payload: str, channel: str = CHANGES_CHANNEL) -> None:
    """Wake the waiters on `channel` at commit: every process LISTENing on PostgreSQL, this process's own
    elsewhere (the others poll)."""
    if session.get_bind().dialect.name == "postgresql":
        session.connection().execute(
            text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload}
        )
    else:
        session.info.setdefault(_PENDING, set()).add(channel)  # this process's waiters, at commit


@event.listens_for(Session, "after_commit")
def _wake_waiters_here(session: Session) -> None:
    for channel in session.info.pop(_PENDING, ()):
        with _LOCAL_LOCK:
            waiters = list(_LOCAL_WAITERS[channel])
        for waiter in waiters:
            waiter.woken.set()


@event.listens_for(Session, "after_rollback")
def _forget_pending(session: Session) -> None:
    session.info.pop(_PENDING, None)  # nothing was written: nobody to wake


class ChangeWaiter:
    """Waits for the writers' NOTIFY on PostgreSQL; elsewhere (SQLite) for a commit of this process."""

    def __init__(self, engine: Engine, channel: str = CHANGES_CHANNEL) -> None:
        self._url = engine.url
        self.channel = channel
        self._connection: Any = None
        self.woken = threading.Event()  # set by a commit in this process that notified `channel`
        with _LOCAL_LOCK:
            _LOCAL_WAITERS[channel].add(self)

    def _connect(self) -> Any:
        if self._url.get_backend_name() != "postgresql":
            return None
        if self._connection is None or self._connection.closed:
            import psycopg

            url = self._url.set(drivername="postgresql").render_as_string(hide_password=False)
            self._connection = psycopg.connect(url, autocommit=True)
            self._connection.execute(f"LISTEN {self.channel}")
        return self._connection

    def wait(
        self, poll: float, closed: threading.Event, listening_poll: float = LISTENING_POLL_SECONDS
    ) -> bool:
        """Return when a change is announced (True), the poll's time passes, or `closed` is set: after
        `poll` seconds without a LISTEN, after `max(poll, listening_poll)` with one."""
        try:
            connection = self._connect()
        except Exception as error:  # noqa: BLE001 - the poll still runs; try to listen again next time
            log.warning("cannot LISTEN on %s (%s); polling every %.1f s", self.channel, error, poll)
            connection = self._connection = None
        if connection is None:
            return self._wait_here(poll, closed)
        try:
            # In short slices (each a wait on the socket, no query: ~10 cheap wake-ups a second), so that
            # `closed` ends the wait at once: with 1 s slices every PostgreSQL runtime took ~0.9 s to close.
            deadline = time.monotonic() + max(poll, listening_poll)
            while not closed.is_set() and (left := deadline - time.monotonic()) > 0:
                for _ in connection.notifies(timeout=min(left, CLOSE_SLICE_SECONDS), stop_after=1):
                    return True
            return False
        except Exception as error:  # noqa: BLE001 - a dropped connection is reopened on the next wait
            log.warning("listening on %s failed: %s", self.channel, error)
            self.close()
            closed.wait(poll)
            return False

    def _wait_here(self, poll: float, closed: threading.Event) -> bool:
        """Without a LISTEN: until this process commits a notification (True), `poll` passes or `closed`."""
        deadline = time.monotonic() + poll
        while not closed.is_set() and (left := deadline - time.monotonic()) > 0:
            if self.woken.wait(min(left, CLOSE_SLICE_SECONDS)):
                self.woken.clear()
                return True
        return False

    def close(self) -> None:
        """Close the listening connection."""
        if self._connection is not None:
            with contextlib.suppress(Exception):  # closing a broken connection may fail; nothing to do
                self._connection.close()
            self._connection = None
