"""The hot path's database budget, counted with SQLAlchemy's event hooks on the real databases.

A dense rank with a key costs at most one transaction and one statement (resolving the hits: the key
check is remembered, the corpus's ranking setting lives on its opened index); an idle process on
PostgreSQL polls at most 2 transactions per second (NOTIFY wakes its follower and job worker); every
response that did the work says where its time went in `Server-Timing`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from app.usecases.api_keys import ApiKeyService
from tests.api.conftest import ClientFactory, add_claims

RANK = {"query": "Is the earth flat?", "k": 3, "mode": "dense"}


@dataclass
class DatabaseCounts:
    """Transactions begun and statements sent on one engine since the counter was attached."""

    transactions: int = 0
    statements: int = 0
    sql: list[str] = field(default_factory=list)  # the statements' first words, for a failure's message


@pytest.fixture
def counting() -> Iterator[Any]:
    """Attach counters to an engine; detached at teardown."""
    attached: list[tuple[Engine, str, Any]] = []

    def attach(engine: Engine) -> DatabaseCounts:
        counts = DatabaseCounts()

        def on_begin(_connection: Any) -> None:
            counts.transactions += 1

        def on_statement(_connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            counts.statements += 1
            counts.sql.append(" ".join(statement.split())[:60])

        for name, hook in (("begin", on_begin), ("before_cursor_execute", on_statement)):
            event.listen(engine, name, hook)
            attached.append((engine, name, hook))
        return counts

    yield attach
    for engine, name, hook in attached:
        event.remove(engine, name, hook)


def _keyed_client(make_client: ClientFactory) -> tuple[TestClient, dict[str, str]]:
    client = make_client(auth="required", admin_api_key="admin-from-env")
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    _, key = ApiKeyService(runtime.sessions).create("write")
    headers = {"Authorization": f"Bearer {key}"}
    client.headers.update(headers)
    add_claims(client)
    return client, headers


def test_a_dense_rank_with_a_key_costs_at_most_one_transaction(
    make_client: ClientFactory, counting: Any, vector_store: str
) -> None:
    if vector_store == "pgvector":
        pytest.skip("pgvector searches in the database: its rank reads the space's mark and searches there")
    client, _ = _keyed_client(make_client)
    assert client.post("/v1/corpora/claims/rank", json=RANK).status_code == 200  # the key check, once
    counts = counting(client.app.state.runtime.engine)  # type: ignore[attr-defined]
    ranks = 5
    for _ in range(ranks):
        response = client.post("/v1/corpora/claims/rank", json=RANK)
        assert response.status_code == 200 and response.json()["results"]
    assert counts.transactions <= ranks, f"{counts.transactions} transactions for {ranks} ranks"
    assert counts.statements <= ranks, f"{counts.statements} statements for {ranks} ranks"


def test_server_timing_names_the_stages_of_a_rank(make_client: ClientFactory) -> None:
    client, _ = _keyed_client(make_client)
    timing = client.post("/v1/corpora/claims/rank", json=RANK).headers["server-timing"]
    stages = dict(part.strip().split(";dur=") for part in timing.split(","))
    assert set(stages) == {"queue", "encode", "search", "resolve"}
    assert all(float(ms) >= 0 for ms in stages.values())
    hybrid = client.post("/v1/corpora/claims/rank", json={**RANK, "mode": "hybrid"}).headers["server-timing"]
    assert "search;dur=" in hybrid and "resolve;dur=" in hybrid
    metrics = client.get("/metrics").text
    assert 'pairank_request_stage_seconds_count{stage="resolve"}' in metrics
    assert "server-timing" not in client.get("/health").headers  # nothing timed, no header


def test_an_idle_process_on_postgresql_polls_at_most_two_transactions_a_second(
    make_client: ClientFactory, counting: Any, database_url: str
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the budget is PostgreSQL's (LISTEN/NOTIFY); SQLite polls every PAIRANK_SYNC_SECONDS")
    client = make_client(sync_seconds=1.0, embedded_worker=True)
    time.sleep(1.5)  # past start-up: the worker's first claim, the follower's first look
    counts = counting(client.app.state.runtime.engine)  # type: ignore[attr-defined]
    seconds = 6.0
    time.sleep(seconds)
    assert counts.transactions / seconds <= 2.0, (
        f"{counts.transactions} transactions in {seconds} s: {counts.sql}"
    )


def test_a_write_through_another_process_reaches_an_idle_follower_at_once_on_postgresql(
    make_client: ClientFactory, database_url: str
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("NOTIFY is PostgreSQL's; SQLite followers poll every PAIRANK_SYNC_SECONDS")
    follower = make_client(sync_seconds=1.0)
    writer = make_client()
    add_claims(writer)
    follower.post("/v1/corpora/claims/rank", json=RANK)  # opened there
    time.sleep(1.5)  # the follower now waits on its LISTEN (its fallback poll is 10 s away)
    opened = follower.app.state.runtime.serving.state().store.get("claims")  # type: ignore[attr-defined]
    before = opened.lexical.hwm
    documents = [{"id": "late", "text": "A brand new claim about penguins on the moon."}]
    assert writer.post("/v1/corpora/claims/documents", json={"documents": documents}).status_code == 200
    deadline = time.monotonic() + 3.0
    while opened.lexical.hwm == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert opened.lexical.hwm > before, "the follower did not wake on the writer's NOTIFY"
    body = {"query": "penguins on the moon", "k": 1, "mode": "lexical"}
    assert follower.post("/v1/corpora/claims/rank", json=body).json()["results"][0]["id"] == "late"
