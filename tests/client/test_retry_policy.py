"""The retry rule and its waits, and connection errors over real sockets (a port nobody listens on)."""

from __future__ import annotations

import logging
import random
import time

import httpx
import pytest

from pairank.client import Client, ConnectionFailedError, OverloadedError, RetryPolicy, UnavailableError
from pairank.client.errors import ConflictError, NotFoundError
from tests.helpers.processes import free_port


def test_waits_double_with_jitter_up_to_the_cap() -> None:
    policy = RetryPolicy(backoff=0.5, max_backoff=4.0, jitter=0.5, rng=random.Random(7))
    for retry, full in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 4.0), (9, 4.0)]:
        waits = [policy.wait_before(retry, None) for _ in range(200)]
        assert full * 0.5 <= min(waits) and max(waits) <= full, (retry, min(waits), max(waits))
        assert max(waits) - min(waits) > full * 0.3  # spread out, not one value
    exact = RetryPolicy(backoff=0.5, jitter=0.0)
    assert [exact.wait_before(n, None) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]


def test_retry_after_is_never_cut_short() -> None:
    policy = RetryPolicy(backoff=0.5, max_backoff=1.0, jitter=0.5, rng=random.Random(1))
    waits = [policy.wait_before(1, 5.0) for _ in range(200)]
    assert min(waits) >= 5.0 and max(waits) <= 5.25  # the server's 5 s, longer than max_backoff, plus jitter


def test_only_idempotent_calls_retry_and_only_after_429_503_or_no_answer() -> None:
    policy = RetryPolicy(attempts=3, jitter=0.0, max_elapsed=60)
    overloaded = OverloadedError("busy", status=429, retry_after=1.0)
    assert policy.delay_after(overloaded, tries=1, elapsed=0, idempotent=True) == 1.0
    assert policy.delay_after(overloaded, tries=1, elapsed=0, idempotent=False) is None
    assert policy.delay_after(UnavailableError("loading", status=503), 1, 0, True) == 0.5
    assert policy.delay_after(ConnectionFailedError("refused"), 2, 0, True) == 1.0
    for final in (NotFoundError("no", status=404), ConflictError("taken", status=409)):
        assert policy.delay_after(final, 1, 0, True) is None
    assert policy.delay_after(overloaded, tries=3, elapsed=0, idempotent=True) is None  # attempts spent
    assert policy.delay_after(overloaded, tries=1, elapsed=59.5, idempotent=True) is None  # past max_elapsed
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)


def test_no_answer_is_retried_for_idempotent_calls_only(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pairank.client")
    policy = RetryPolicy(attempts=3, backoff=0.05, jitter=0.0)
    with Client(f"http://127.0.0.1:{free_port()}", retry=policy, timeout=5) as client:
        started = time.monotonic()
        with pytest.raises(ConnectionFailedError) as failed:
            client.list_corpora()
        assert time.monotonic() - started >= 0.05 + 0.1  # waited between the three tries
        assert failed.value.status is None and isinstance(failed.value.__cause__, httpx.ConnectError)
        retries = [r.getMessage() for r in caplog.records if r.name == "pairank.client"]
        assert retries == [
            "retrying GET /v1/corpora in 0.05 s after no answer (try 2 of 3)",
            "retrying GET /v1/corpora in 0.10 s after no answer (try 3 of 3)",
        ]
        caplog.clear()
        with pytest.raises(ConnectionFailedError):
            client.create_corpus("claims", "claim")  # not idempotent: sent once
        assert not [r for r in caplog.records if r.name == "pairank.client"]
