"""Checkpoints that fail (a full disk, a read-only volume): remembered, reported, retried with backoff.

A failed checkpoint loses nothing: the change log in the database holds every change since the last
snapshot, and the previous snapshot stays current (a new generation is written beside it and only made
current once whole). So serving and writes go on; what an operator needs is to hear of it (`/ready`
names the corpus and the error, `/metrics` counts consecutive failures) and to see it heal by itself
once space is freed, without a retry storm on a disk that stays full.
"""

from __future__ import annotations

import errno
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

FIRST_RETRY_SECONDS = 5.0
MAX_RETRY_SECONDS = 120.0
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO})


def is_disk_error(error: BaseException) -> bool:
    """True for the OS errors of storage itself (full, over quota, read-only, failing)."""
    return isinstance(error, OSError) and error.errno in DISK_ERRNOS


@dataclass
class Failure:
    """Consecutive failed checkpoints of one corpus."""

    count: int
    error: str
    disk: bool
    since: datetime
    retry_at: float  # time.monotonic() before which the loop leaves the corpus alone


class CheckpointHealth:
    """Failed checkpoints by corpus name: when to retry, and what /ready and /metrics report."""

    def __init__(self) -> None:
        self._failures: dict[str, Failure] = {}
        self._lock = threading.Lock()

    def may_try(self, corpus: str) -> bool:
        """False while a failed corpus waits out its backoff."""
        with self._lock:
            failure = self._failures.get(corpus)
        return failure is None or time.monotonic() >= failure.retry_at

    def failed(self, corpus: str, error: BaseException) -> Failure:
        """Record a failure; the next try waits 5 s, doubling up to 2 minutes."""
        with self._lock:
            previous = self._failures.get(corpus)
            count = previous.count + 1 if previous else 1
            delay = min(MAX_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** (count - 1))
            failure = Failure(
                count=count,
                error=f"{type(error).__name__}: {error}",
                disk=is_disk_error(error),
                since=previous.since if previous else datetime.now(UTC),
                retry_at=time.monotonic() + delay,
            )
            self._failures[corpus] = failure
            return failure

    def succeeded(self, corpus: str) -> None:
        """A checkpoint was written: the corpus is healthy again."""
        with self._lock:
            self._failures.pop(corpus, None)

    def failures(self) -> dict[str, int]:
        """Consecutive failures by corpus (only failing corpora)."""
        with self._lock:
            return {name: failure.count for name, failure in self._failures.items()}

    def report(self) -> dict[str, dict[str, Any]]:
        """What /ready shows per failing corpus: the error, since when, how often, the next retry."""
        now = time.monotonic()
        with self._lock:
            return {
                name: {
                    "error": failure.error,
                    "disk": failure.disk,
                    "failures": failure.count,
                    "since": failure.since.isoformat(),
                    "retry_in_seconds": round(max(0.0, failure.retry_at - now), 1),
                }
                for name, failure in self._failures.items()
            }
