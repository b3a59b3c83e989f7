"""Metrics, request ids and readiness over HTTP, on both databases."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from app.db.engine import make_engine
from tests.api.conftest import ClientFactory, add_claims
from tests.helpers.processes import free_port

RANK = "/v1/corpora/{name}/rank"


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """GET /metrics parsed by Prometheus' own parser: {(sample name, sorted labels): value}."""
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def requests_counted(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], status: str) -> float:
    """pairank_http_requests_total for POST rank with a status."""
    labels = (("method", "POST"), ("route", RANK), ("status", status))
    return metrics.get(("pairank_http_requests_total", labels), 0.0)


def test_metrics_count_requests_and_describe_the_service(client: TestClient) -> None:
    add_claims(client)
    before = scrape(client)
    for _ in range(3):
        assert client.post("/v1/corpora/claims/rank", json={"query": "moon", "k": 1}).status_code == 200
    assert client.post("/v1/corpora/claims/rank", json={"query": ""}).status_code == 422
    after = scrape(client)
    assert requests_counted(after, "200") - requests_counted(before, "200") == 3
    assert requests_counted(after, "422") - requests_counted(before, "422") == 1
    latency = ("pairank_http_request_duration_seconds_count", (("method", "POST"), ("route", RANK)))
    assert after[latency] - before.get(latency, 0) == 4
    # Route templates, never raw paths: one series per endpoint whatever the ids.
    assert not any("claims" in dict(labels).get("route", "") for _, labels in after)
    assert after[("pairank_documents", (("corpus", "claims"),))] == 5
    assert after[("pairank_index_vectors", (("corpus", "claims"),))] == 5
    assert ("pairank_index_changes_since_checkpoint", (("corpus", "claims"),)) in after
    assert after[("pairank_ready", ())] == 1
    model = [dict(labels) for name, labels in after if name == "pairank_model_info"]
    version = client.post("/v1/corpora/claims/rank", json={"query": "moon"}).json()["model"]
    assert model == [{"version": version, "backend": "torch", "precision": "fp32"}]
    assert after.get(("pairank_encoder_batch_texts_count", ()), 0) > before.get(
        ("pairank_encoder_batch_texts_count", ()), 0
    )


def test_request_ids_are_echoed_or_made(client: TestClient) -> None:
    given = client.get("/health", headers={"X-Request-ID": "tipline-42:a/b"})
    assert given.headers["X-Request-ID"] == "tipline-42:a/b"
    made = client.get("/v1/corpora/nope")
    assert made.status_code == 404 and len(made.headers["X-Request-ID"]) == 32
    assert client.get("/health").headers["X-Request-ID"] != made.headers["X-Request-ID"]
    for insane in ("x" * 129, "two words", "ünïcode", "a\tb"):
        replaced = client.get("/health", headers={"X-Request-ID": insane.encode()}).headers["X-Request-ID"]
        assert replaced != insane and len(replaced) == 32
    # Answers made before routing (a body over the limit) carry one too.
    too_big = client.post("/v1/corpora", content=b"x" * 40_000_000, headers={"X-Request-ID": "big-1"})
    assert too_big.status_code == 413 and too_big.headers["X-Request-ID"] == "big-1"


def unreachable_url(database_url: str, tmp_path: Path) -> str:
    """The same kind of database, somewhere it cannot be reached: a closed port, an unopenable file."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        folder = tmp_path / "a-folder-not-a-database"
        folder.mkdir()
        return f"sqlite:///{folder}"
    return url.set(host="127.0.0.1", port=free_port()).render_as_string(hide_password=False)


def test_ready_names_the_database_when_it_is_unreachable(
    client: TestClient, database_url: str, tmp_path: Path
) -> None:
    ready = client.get("/ready")
    assert ready.status_code == 200
    body = ready.json()
    assert body["status"] == "ready" and body["database"] == {"ok": True}
    assert body["model"] and body["backend"] == "torch" and isinstance(body["indexes"], dict)
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    gone = make_engine(unreachable_url(database_url, tmp_path))
    runtime.engine, working = gone, runtime.engine
    runtime.sessions.configure(bind=gone)
    try:
        down = client.get("/ready")
        assert down.status_code == 503
        assert down.json()["failing"] == ["database"] and down.json()["database"]["ok"] is False
        assert down.json()["database"]["error"]
        assert client.get("/health").status_code == 200  # liveness is not readiness
        listing = client.get("/v1/corpora")
        assert listing.status_code == 503 and listing.json()["field"] == "database"
        assert listing.headers["Retry-After"] == "5"
    finally:
        runtime.engine = working
        runtime.sessions.configure(bind=working)
        gone.dispose()
    assert client.get("/ready").status_code == 200


def test_ready_while_loading_names_the_model(make_client: ClientFactory) -> None:
    client = make_client()
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    runtime.serving._ready.clear()  # as it is before the model has loaded
    try:
        response = client.get("/ready")
        assert response.status_code == 503 and response.json()["failing"] == ["model"]
        assert response.json()["status"] == "loading"
    finally:
        runtime.serving._ready.set()
