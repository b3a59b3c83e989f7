"""Waiting for other processes' writes: PostgreSQL's LISTEN on the channel every document write NOTIFYs.

The follower (app/serving/follower.py) waits here between its polls, so a write made by another process
reaches it at once on PostgreSQL; on SQLite, which has no notifications, the wait is a plain sleep.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any

from sqlalchemy import Engine

from app.db.repository import CHANGES_CHANNEL

log = logging.getLogger(__name__)


class ChangeWaiter:
    """Waits for the writers' NOTIFY on PostgreSQL; elsewhere (SQLite) it simply sleeps."""

    def __init__(self, engine: Engine) -> None:
        self._url = engine.url
        self._connection: Any = None

    def _connect(self) -> Any:
        if self._url.get_backend_name() != "postgresql":
            return None
        if self._connection is None or self._connection.closed:
            import psycopg

            url = self._url.set(drivername="postgresql").render_as_string(hide_password=False)
            self._connection = psycopg.connect(url, autocommit=True)
            self._connection.execute(f"LISTEN {CHANGES_CHANNEL}")
        return self._connection

    def wait(self, timeout: float, closed: threading.Event) -> None:
        """Return when a change is announced, the timeout passes, or the worker is closing."""
        try:
            connection = self._connect()
        except Exception as error:  # noqa: BLE001 - the poll still runs; try to listen again next time
            log.warning("cannot LISTEN for changes (%s); polling every %.1f s", error, timeout)
            connection = self._connection = None
        if connection is None:
            closed.wait(timeout)
            return
        try:
            for _ in connection.notifies(timeout=timeout, stop_after=1):
                pass
        except Exception as error:  # noqa: BLE001 - a dropped connection is reopened on the next wait
            log.warning("listening for changes failed: %s", error)
            self.close()
            closed.wait(timeout)

    def close(self) -> None:
        """Close the listening connection."""
        if self._connection is not None:
            with contextlib.suppress(Exception):  # closing a broken connection may fail; nothing to do
                self._connection.close()
            self._connection = None
