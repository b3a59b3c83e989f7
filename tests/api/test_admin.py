"""Admin API: auth, the retraining loop end to end (tiny model), 409, cancel, kill -9 of the trainer."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.serving.runtime import Runtime
from pairank.models import resolve_model
from tests.api.conftest import CLAIMS, ClientFactory, add_claims
from tests.helpers.tiny_model import build_tiny_model

KEY = {"X-API-Key": "s3cret"}
PARAPHRASES = [
    ("was the moon landing fake", "c1"),
    ("does bleach cure covid", "c2"),
    ("do vaccines cause autism", "c3"),
    ("is the earth really flat", "c4"),
    ("shark on a flooded highway photo", "c5"),
    ("moon hoax studio", "c1"),
    ("bleach coronavirus cure", "c2"),
    ("autism from vaccines", "c3"),
]


def claims_admin(make_client: ClientFactory, **settings: Any) -> TestClient:
    """A ready client with an admin key, the five claims and labeled paraphrase pairs."""
    client = make_client(admin_api_key="s3cret", **settings)
    add_claims(client)
    pairs = [{"query": q, "document_id": d, "label": 1} for q, d in PARAPHRASES]
    assert client.post("/v1/corpora/claims/pairs", json={"pairs": pairs}).status_code == 201
    return client


@pytest.fixture
def admin(make_client: ClientFactory) -> TestClient:
    """`claims_admin` with the test settings."""
    return claims_admin(make_client)


def wait_job(
    client: TestClient, job_id: str, done: Callable[[dict[str, Any]], bool], timeout: float = 120
) -> dict[str, Any]:
    """Poll a job until `done(job)` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/admin/jobs/{job_id}", headers=KEY).json()
        if done(job):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job never reached the expected state: {job}")


def trainer_running(job: dict[str, Any]) -> bool:
    """True once the training process has reported its first event."""
    return (job["progress"] or {}).get("event") in ("start", "step", "epoch_end")


def finished(job: dict[str, Any]) -> bool:
    """True once a job has ended."""
    return job["status"] not in ("queued", "running")


def test_admin_auth(make_client: ClientFactory) -> None:
    # With read and write routes open, admin routes still need an admin key.
    no_admin_key = make_client()
    assert no_admin_key.get("/admin/jobs", headers=KEY).status_code == 401
    client = make_client(admin_api_key="s3cret")
    assert client.get("/admin/jobs").status_code == 401
    assert client.get("/admin/jobs", headers={"X-API-Key": "wrong"}).status_code == 401
    assert client.get("/admin/jobs", headers=KEY).json() == {"jobs": []}
    assert client.post("/admin/retrain", json={"corpus": "x"}).status_code == 401


def test_retrain_activate_and_roll_back(make_client: ClientFactory) -> None:
    # The default encoder settings: a trained model is exported and gated like the configured one.
    admin = claims_admin(make_client, encoder_backend="auto")
    query = {"query": "is it true the moon landing was staged", "k": 3}
    before = admin.post("/v1/corpora/claims/rank", json=query).json()
    old_version = before["model"]
    body = {"corpus": "claims", "epochs": 2, "batch_size": 4, "learning_rate": 1e-3, "min_improvement": -1}
    body["require_significant"] = False  # five dev queries: any gain is inside the noise band
    created = admin.post("/admin/retrain", json=body, headers=KEY)
    assert created.status_code == 202, created.text
    job = wait_job(admin, created.json()["job_id"], finished)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    assert job["progress"]["stage"] == "done" and job["gate"]["activation"] == "queued"
    # The loss and dev-metric curve stays in the finished job's progress (the console draws it live).
    curve = job["progress"]["curve"]
    assert [e["epoch"] for e in curve["epochs"]][-2:] == [1, 2] and curve["steps"]
    assert all(isinstance(point["loss"], float) for point in curve["steps"])
    assert job["gate"]["metric"] == "MRR" and {"candidate", "active", "delta", "noise"} <= set(job["gate"])
    assert job["gate"]["noise"]["noise_band"] == 2 * job["gate"]["noise"]["standard_error"]
    assert job["started_at"] and job["finished_at"] and job["params"]["train_pairs"] >= 2
    new_version = job["model_version"]
    # A passing gate queues an activation job: it builds the indexes, then serving switches.
    activation = next(
        j for j in admin.get("/admin/jobs", headers=KEY).json()["jobs"] if j["kind"] == "activate"
    )
    assert activation["params"] == {"version": new_version, "requested_by": job["id"]}
    activation = wait_job(admin, activation["id"], finished)
    assert activation["status"] == "succeeded", activation["error"]
    assert activation["progress"] == {
        "stage": "done",
        "version": new_version,
        "previous": old_version,
        "corpora": 1,
    }
    models = {m["version"]: m for m in admin.get("/admin/models", headers=KEY).json()["models"]}
    assert models[new_version]["is_active"] and not models[old_version]["is_active"]
    assert models[new_version]["source"] == "trained" and models[new_version]["dev_metrics"]["gate"]
    assert models[new_version]["training"]["params"]["epochs"] == 2
    # The trained model was exported, quantized and gated like the configured one, and serves that way.
    assert models[new_version]["encoder"]["backend"] == "openvino"
    assert models[new_version]["encoder"]["precision"] == "int8"
    assert models[new_version]["encoder"]["quality"]["mean_cosine"] >= 0.99
    assert admin.get("/ready").json()["backend"] == "openvino"
    after = admin.post("/v1/corpora/claims/rank", json=query).json()
    assert after["model"] == new_version != old_version
    # Every document is still there and the new index is complete: each claim finds itself first.
    for doc_id, text in CLAIMS:
        top = admin.post("/v1/corpora/claims/rank", json={"query": text, "k": 1}).json()["results"][0]
        assert top["id"] == doc_id and top["score"] == pytest.approx(1.0, abs=1e-4)
    rolled_back = admin.post(f"/admin/models/{old_version}/activate", headers=KEY)
    assert rolled_back.status_code == 202 and rolled_back.json()["kind"] == "activate"
    assert wait_job(admin, rolled_back.json()["id"], finished)["status"] == "succeeded"
    assert admin.post("/v1/corpora/claims/rank", json=query).json() == before
    models = {m["version"]: m for m in admin.get("/admin/models", headers=KEY).json()["models"]}
    assert models[old_version]["is_active"] and not models[new_version]["is_active"]
    assert admin.post("/admin/models/nope@123/activate", headers=KEY).status_code == 404


def test_one_job_at_a_time_and_cancel(admin: TestClient) -> None:
    body = {"corpus": "claims", "epochs": 50, "batch_size": 2}
    job_id = admin.post("/admin/retrain", json=body, headers=KEY).json()["job_id"]
    second = admin.post("/admin/retrain", json=body, headers=KEY)
    assert second.status_code == 409 and job_id in second.json()["detail"]
    wait_job(admin, job_id, trainer_running)
    assert admin.post(f"/admin/jobs/{job_id}/cancel", headers=KEY).status_code == 202
    job = wait_job(admin, job_id, finished)
    assert job["status"] == "cancelled" and job["error"] == "cancelled by an operator"
    assert admin.post(f"/admin/jobs/{job_id}/cancel", headers=KEY).status_code == 409
    assert admin.get("/admin/jobs", headers=KEY).json()["jobs"][0]["id"] == job_id


def test_kill_9_of_the_training_process_fails_the_job(admin: TestClient) -> None:
    job_id = admin.post(
        "/admin/retrain", json={"corpus": "claims", "epochs": 50, "batch_size": 2}, headers=KEY
    ).json()["job_id"]
    wait_job(admin, job_id, trainer_running)
    # The trainer's command line names the job's folder: kill exactly that process, with SIGKILL.
    assert subprocess.run(["pkill", "-9", "-f", f"jobs/{job_id}/config.yaml"], check=False).returncode == 0
    job = wait_job(admin, job_id, finished)
    assert job["status"] == "failed" and "killed by signal 9 (SIGKILL)" in job["error"]
    model = admin.post("/v1/corpora/claims/rank", json={"query": "moon", "k": 1})
    assert model.status_code == 200  # the service is unaffected
    models = admin.get("/admin/models", headers=KEY).json()["models"]
    assert [m["source"] for m in models] == ["configured"]


def test_retrain_validation(admin: TestClient) -> None:
    bad_metric = admin.post(
        "/admin/retrain", json={"corpus": "claims", "gate_metric": "Accuracy"}, headers=KEY
    )
    assert bad_metric.status_code == 422 and "Accuracy" in bad_metric.json()["detail"]
    assert admin.post("/admin/retrain", json={"corpus": "nope"}, headers=KEY).status_code == 404
    admin.post("/v1/corpora", json={"name": "empty", "kind": "answer"})
    no_pairs = admin.post("/admin/retrain", json={"corpus": "empty"}, headers=KEY)
    assert no_pairs.status_code == 409 and "training pairs" in no_pairs.json()["detail"]
    assert (
        admin.post("/admin/retrain", json={"corpus": "claims", "epochs": 0}, headers=KEY).status_code == 422
    )
    assert admin.get("/admin/jobs/nope", headers=KEY).status_code == 404
    # Types are strict, as the schema says: a number is not a boolean, a string not a number.
    for body in ({"auto_activate": 0}, {"epochs": "2"}, {"epochs": True}):
        strict = admin.post("/admin/retrain", json={"corpus": "claims", **body}, headers=KEY)
        assert strict.status_code == 422 and strict.json()["errors"][0]["field"] == next(iter(body))


def test_other_workers_follow_an_activation(
    make_client: ClientFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    worker_a = make_client(admin_api_key="s3cret")
    add_claims(worker_a)
    worker_b = make_client(sync_seconds=0.2)
    other = build_tiny_model(tmp_path_factory.mktemp("other"), seed=3)
    spec = resolve_model(str(other))
    runtime: Runtime = worker_a.app.state.runtime  # type: ignore[attr-defined]
    runtime.serving.registry.register(spec, str(other), "configured")
    assert worker_a.post(f"/admin/models/{spec.version}/activate", headers=KEY).status_code == 202
    deadline = time.monotonic() + 30
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = worker_b.post("/v1/corpora/claims/rank", json={"query": CLAIMS[1][1], "k": 1}).json()
        if body["model"] == spec.version:
            break
        time.sleep(0.1)
    assert body["model"] == spec.version and body["results"][0]["id"] == "c2"
