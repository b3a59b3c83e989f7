"""Retries against real servers: a rate limit of 2 requests/s (429 with Retry-After), a model that failed
to load (503 on every ranking call), and a PostgreSQL stopped and started again (503 with Retry-After, then
200). Idempotent calls wait and try again; other calls raise at once, having changed nothing."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pairank.client import Client, NotFoundError, OverloadedError, RetryPolicy, UnavailableError
from tests.client.conftest import ADMIN_KEY, Serve, url_of
from tests.helpers.postgres import own_postgres, psycopg_url, stop_postgres

AUTH = {"Authorization": f"Bearer {ADMIN_KEY}"}
PATIENT = RetryPolicy(attempts=10, max_elapsed=60)


def retries(caplog: pytest.LogCaptureFixture, status: int) -> list[float]:
    """The waits the client logged before retrying after `status`."""
    pattern = re.compile(rf"^retrying \S+ \S+ in ([0-9.]+) s after {status} ")
    found = (pattern.match(r.getMessage()) for r in caplog.records if r.name == "pairank.client")
    return [float(match.group(1)) for match in found if match]


@pytest.fixture(scope="module")
def limited(serve: Serve) -> str:
    """A server that takes 2 requests/s per key, 2 at once."""
    return url_of(serve(rate_limit="2", rate_burst="2"))


@pytest.fixture
def log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The client's retry log."""
    caplog.set_level(logging.INFO, logger="pairank.client")
    yield caplog


def test_429_is_retried_after_retry_after_for_idempotent_calls(
    limited: str, log: pytest.LogCaptureFixture
) -> None:
    with Client(limited, api_key=ADMIN_KEY, retry=PATIENT) as client:
        time.sleep(1.0)  # a full bucket
        client.create_corpus("limited", "claim")
        started = time.monotonic()
        for _ in range(5):
            assert client.get_corpus("limited").name == "limited"
        documents = [{"id": f"d{n}", "text": f"claim {n} about the moon"} for n in range(12)]
        assert client.upsert("limited", documents, batch_size=3).inserted == 12  # a POST, idempotent by id
        assert client.rank("limited", "moon", k=2).results  # a POST that only reads
        elapsed = time.monotonic() - started
    waits = retries(log, 429)
    # 11 calls at 2/s after the one left in the bucket: about 5 s, every wait at least the 1 s asked for.
    assert len(waits) >= 3 and min(waits) >= 1.0, waits
    assert elapsed >= 4.0, elapsed


def test_429_on_a_call_that_is_not_idempotent_is_raised_and_changes_nothing(
    limited: str, log: pytest.LogCaptureFixture
) -> None:
    with Client(limited, api_key=ADMIN_KEY, retry=PATIENT) as client, httpx.Client(base_url=limited) as raw:
        while raw.get("/v1/corpora", headers=AUTH).status_code != 429:  # empty the bucket
            pass
        with pytest.raises(OverloadedError) as overloaded:
            client.create_corpus("limited-never", "claim")
        error = overloaded.value
        assert (error.status, error.retry_after, error.limit) == (
            429,
            1.0,
            2,
        ) and "rate limit" in error.detail
        assert not retries(log, 429)  # sent once
        with pytest.raises(NotFoundError):
            client.get_corpus("limited-never")  # retried until answered: the refused call created nothing
    assert retries(log, 429)


def test_503_while_the_model_cannot_load_is_retried_then_raised(
    serve: Serve, tiny_model_dir: Path, log: pytest.LogCaptureFixture
) -> None:
    # A folder that is no sentence-transformers model: loading fails, and ranking answers 503 for good.
    server = serve(model=str(tiny_model_dir / "1_Pooling"), ready=False)
    deadline = time.monotonic() + 60
    while server.http.get("/ready").json().get("status") != "failed":
        assert time.monotonic() < deadline, "loading never failed"
        time.sleep(0.2)
    policy = RetryPolicy(attempts=3, backoff=0.2, jitter=0.0)
    with Client(url_of(server), api_key=ADMIN_KEY, retry=policy) as client:
        assert client.list_corpora() == []  # the database answers
        with pytest.raises(UnavailableError) as unavailable:
            client.similarity([("the moon", "the sun")])
    assert unavailable.value.status == 503 and "loading" in unavailable.value.detail
    assert retries(log, 503) == [0.2, 0.4]  # three tries, backing off exponentially
    server.kill()


def test_503_during_a_database_outage_is_waited_out(
    serve: Serve, tmp_path: Path, log: pytest.LogCaptureFixture
) -> None:
    with own_postgres(tmp_path / "pg") as postgres:
        server = serve(psycopg_url(postgres))
        with Client(url_of(server), api_key=ADMIN_KEY, retry=PATIENT) as client:
            client.create_corpus("outage", "claim")
            stop_postgres(postgres)
            refused = server.http.get("/v1/corpora/outage", headers=AUTH)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
            restart = threading.Timer(1.0, postgres.ensure_postgres_running)
            restart.start()
            started = time.monotonic()
            assert client.get_corpus("outage").name == "outage"
            waited = time.monotonic() - started
            restart.join()
        server.kill()
    waits = retries(log, 503)
    assert waits and min(waits) >= 5.0 and waited >= 5.0, (waits, waited)  # Retry-After: 5, honoured
