"""Registered models' stored files over HTTP: their sizes in GET /admin/models and /metrics, and
DELETE /admin/models/{version}, which frees what no other model shares and never touches the active,
the previous (rollback) or the configured version. Every database: the local store on SQLite, the
database store on PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.serving.runtime import Runtime
from pairank.models import resolve_model
from tests.api.conftest import ClientFactory, add_claims
from tests.api.test_admin import KEY, finished, wait_job
from tests.api.test_operations import scrape
from tests.helpers.tiny_model import build_tiny_model


def folder_bytes(folder: Path) -> tuple[int, int]:
    """(bytes, files) of a model folder as a store counts them (hidden names left out)."""
    files = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return sum(p.stat().st_size for p in files), len(files)


def models(client: TestClient) -> dict[str, Any]:
    """GET /admin/models."""
    response = client.get("/admin/models", headers=KEY)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def register(client: TestClient, folder: Path) -> str:
    """Register a model folder as a trained one would be (its files stored); its version."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    spec = resolve_model(str(folder))
    assert runtime.serving.registry.register(spec, str(folder), "trained")
    return spec.version


def activate(client: TestClient, version: str) -> None:
    """Activate through the API and wait for the job."""
    created = client.post(f"/admin/models/{version}/activate", headers=KEY)
    assert created.status_code == 202, created.text
    assert wait_job(client, created.json()["id"], finished)["status"] == "succeeded"


@pytest.fixture
def admin(make_client: ClientFactory) -> TestClient:
    """A ready client with an admin key and the five claims."""
    client = make_client(admin_api_key="s3cret")
    add_claims(client)
    return client


def test_stored_sizes_in_the_registry_and_the_metrics(
    admin: TestClient, tiny_model_dir: Path, database_url: str
) -> None:
    listed = models(admin)
    store = "local" if database_url.startswith("sqlite") else "database"
    assert listed["artifact_store"] == store
    (configured,) = listed["models"]
    size, files = folder_bytes(tiny_model_dir)
    assert configured["artifact_store"] == store and len(configured["artifact_sha256"]) == 64
    assert (configured["artifact_bytes"], configured["artifact_files"]) == (size, files)
    assert listed["stored_bytes"] == size
    metrics = scrape(admin)
    assert metrics[("pairank_model_artifact_bytes", (("version", configured["version"]),))] == size
    assert metrics[("pairank_artifact_store_bytes", ())] == size


def test_delete_frees_unshared_files_and_keeps_the_models_in_use(
    admin: TestClient, tiny_model_dir: Path, tmp_path: Path, database_url: str
) -> None:
    configured = models(admin)["models"][0]["version"]
    first = register(admin, build_tiny_model(tmp_path / "first", seed=3))
    second = register(admin, build_tiny_model(tmp_path / "second", seed=4))
    spare_folder = build_tiny_model(tmp_path / "spare", seed=5)
    spare = register(admin, spare_folder)
    activate(admin, first)
    activate(admin, second)  # active: second; previous (the rollback): first
    refused = {v: admin.delete(f"/admin/models/{v}", headers=KEY) for v in (second, first, configured)}
    assert {v: r.status_code for v, r in refused.items()} == {second: 409, first: 409, configured: 409}
    assert "active" in refused[second].json()["detail"]
    assert "previous" in refused[first].json()["detail"]
    assert "PAIRANK_MODEL" in refused[configured].json()["detail"]
    missing = admin.delete("/admin/models/org/nope@123", headers=KEY)  # versions may hold a slash
    assert missing.status_code == 404 and "'org/nope@123' is not registered" in missing.json()["detail"]
    assert admin.delete(f"/admin/models/{spare}").status_code == 401  # admin routes need the admin key

    before = models(admin)
    deleted = admin.delete(f"/admin/models/{spare}", headers=KEY)
    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    assert body["version"] == spare and body["artifact_bytes"] == folder_bytes(spare_folder)[0]
    after = models(admin)
    assert spare not in {m["version"] for m in after["models"]} and len(after["models"]) == 3
    if database_url.startswith("sqlite"):
        # The local store leaves the operator's folder alone: nothing it owned to free.
        assert body["freed_bytes"] == 0 and spare_folder.is_dir()
    else:
        # The tokenizer and configs every tiny model shares stay; the spare's own weights are gone.
        weights = (spare_folder / "model.safetensors").stat().st_size
        assert weights <= body["freed_bytes"] < body["artifact_bytes"]
        assert after["stored_bytes"] == before["stored_bytes"] - body["freed_bytes"]
    metrics = scrape(admin)
    assert ("pairank_model_artifact_bytes", (("version", spare),)) not in metrics
    assert metrics[("pairank_artifact_store_bytes", ())] == after["stored_bytes"]
    # Every model still in use still serves.
    assert admin.post("/v1/corpora/claims/rank", json={"query": "moon"}).json()["model"] == second
    activate(admin, first)
    assert admin.post("/v1/corpora/claims/rank", json={"query": "moon"}).json()["model"] == first
