"""The encoder as API clients see it: backend and precision in /ready, 429 with Retry-After on overload."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from app.serving.runtime import Runtime
from tests.api.conftest import ClientFactory, add_claims
from tests.encoders.encoder_helpers import GatedBackend

pytestmark = pytest.mark.postgres


def runtime_of(client: TestClient) -> Runtime:
    """The runtime behind a test client's app."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    return runtime


def test_ready_and_the_registry_name_backend_and_precision(make_client: ClientFactory) -> None:
    client = make_client(admin_api_key="k", encoder_backend="auto")
    ready = client.get("/ready").json()
    assert (ready["backend"], ready["precision"]) == ("openvino", "int8")
    assert ready["encoder"]["quality"]["min_cosine"] >= 0.97 and ready["encoder"]["micro_batching"] is True
    models = client.get("/admin/models", headers={"X-API-Key": "k"}).json()["models"]
    active = next(m for m in models if m["is_active"])
    assert active["encoder"]["backend"] == "openvino" and active["version"] == ready["model"]


def test_explicit_backend_settings_are_served(make_client: ClientFactory) -> None:
    client = make_client(encoder_backend="torch", micro_batching=False)
    ready = client.get("/ready").json()
    assert (ready["backend"], ready["precision"]) == ("torch", "fp32")
    assert ready["encoder"]["micro_batching"] is False
    add_claims(client)
    top = client.post("/v1/corpora/claims/rank", json={"query": "Vaccines cause autism in young children."})
    assert top.json()["results"][0]["id"] == "c3"


def test_a_full_encoder_queue_answers_429_with_retry_after(make_client: ClientFactory) -> None:
    client = make_client(max_queued_texts=1, batch_wait_ms=0)
    add_claims(client)
    batcher = runtime_of(client).serving.state().encoder.batcher
    gated = GatedBackend(batcher.backend)
    batcher.backend = gated
    statuses: list[int] = []

    def rank() -> None:
        statuses.append(client.post("/v1/corpora/claims/rank", json={"query": "moon landing"}).status_code)

    first = threading.Thread(target=rank)
    first.start()
    assert gated.started.wait(10)  # the worker holds the first query
    second = threading.Thread(target=rank)
    second.start()
    while batcher.queued_texts < 1:
        threading.Event().wait(0.01)
    refused = client.post("/v1/corpora/claims/rank", json={"query": "one more"})
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    body = refused.json()
    assert body["field"] == "PAIRANK_MAX_QUEUED_TEXTS" and body["limit"] == 1
    assert "over the limit of 1" in body["detail"]
    # Bulk work is not refused: an upsert waits for the encoder instead.
    upserted: list[int] = []
    bulk = threading.Thread(
        target=lambda: upserted.append(
            client.post(
                "/v1/corpora/claims/documents", json={"documents": [{"id": "c9", "text": "A new claim."}]}
            ).status_code
        )
    )
    bulk.start()
    gated.gate.set()
    for thread in (first, second, bulk):
        thread.join(30)
    assert statuses == [200, 200] and upserted == [200]
