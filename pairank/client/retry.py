"""When the client sends a request again, and how long it waits first.

The rule: a call is retried only when sending it twice leaves the service as sending it once (the client
marks each operation; see docs/guides/python-client.md, "Retries"), and only after an answer that says
"not now" (429 overloaded, 503 unavailable) or no answer at all (a connection error or timeout). It waits
the `Retry-After` seconds the API sends, else an exponential backoff with jitter, and stops after
`attempts` tries or once the next try would start later than `max_elapsed` seconds after the first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pairank.client.errors import ConnectionFailedError, PairankError


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently idempotent calls are retried (`RetryPolicy(attempts=1)`: never)."""

    attempts: int = 5
    """Tries in all, the first one included."""
    backoff: float = 0.5
    """The first wait when the answer names none (doubling after each try)."""
    max_backoff: float = 8.0
    """The longest wait of the exponential backoff (a longer `Retry-After` is still honoured)."""
    max_elapsed: float = 60.0
    """No try starts later than this many seconds after the first."""
    jitter: float = 0.5
    """The share of each backoff drawn at random, so clients turned away together do not return together."""
    statuses: frozenset[int] = frozenset({429, 503})
    """The answers that mean "not now"."""
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)
    """Where the jitter comes from (seed one for repeatable waits)."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1 (got {self.attempts})")
        if min(self.backoff, self.max_backoff, self.max_elapsed) < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("backoff, max_backoff and max_elapsed must be >= 0 and jitter within [0, 1]")

    def wait_before(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (1: the first retry)."""
        if retry_after is not None:
            # Never earlier than the server asked; a little later at random, to spread the callers out.
            return retry_after + self.rng.uniform(0, self.jitter * self.backoff)
        delay = min(self.max_backoff, self.backoff * 2 ** (retry - 1))
        return delay * (1 - self.jitter) + self.rng.uniform(0, delay * self.jitter)

    def delay_after(self, error: PairankError, tries: int, elapsed: float, idempotent: bool) -> float | None:
        """The wait before trying again after `tries` tries that took `elapsed` seconds; None: give up."""
        retryable = isinstance(error, ConnectionFailedError) or error.status in self.statuses
        if not (idempotent and retryable) or tries >= self.attempts:
            return None
        delay = self.wait_before(tries, error.retry_after)
        return delay if elapsed + delay <= self.max_elapsed else None


NO_RETRIES = RetryPolicy(attempts=1)
