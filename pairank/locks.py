"""A small readers-writer lock: shared holders run together (searches, document writes); an exclusive holder
(a model swap, an index rebuild) waits for them and runs alone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class SharedExclusiveLock:
    """Shared holders run together; an exclusive holder waits for them and blocks new ones (no starvation)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._shared = 0
        self._exclusive = False
        self._exclusive_waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the lock with other shared holders."""
        with self._condition:
            # A waiting swap goes first, so a stream of writes cannot postpone it forever.
            self._condition.wait_for(lambda: not self._exclusive and not self._exclusive_waiting)
            self._shared += 1
        try:
            yield
        finally:
            with self._condition:
                self._shared -= 1
                self._condition.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lock alone."""
        with self._condition:
            self._exclusive_waiting += 1
            self._condition.wait_for(lambda: not self._exclusive and self._shared == 0)
            self._exclusive_waiting -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._condition:
                self._exclusive = False
                self._condition.notify_all()
