"""kill -9 of the service during a retraining job's index build: a restart serves one consistent model."""

from __future__ import annotations

import random
import time
from typing import Any

import httpx
import pytest

from tests.helpers.processes import ServerFactory, wait_lease_lost

KEY = {"X-API-Key": "k"}
_VOCABULARY = "moon landing vaccine autism bleach covid shark highway earth flat carrot vision tower signal"
WORDS = _VOCABULARY.split()


def _text(i: int) -> str:
    return " ".join(random.Random(i).choices(WORDS, k=12))


def _check_consistent(http: httpx.Client, count: int) -> str:
    """Every sampled document finds itself first at cosine 1: index and model belong together."""
    models = set()
    for i in range(0, count, count // 10):
        body: dict[str, Any] = http.post("/v1/corpora/big/rank", json={"query": _text(i), "k": 1}).json()
        models.add(body["model"])
        assert body["results"][0]["id"] == f"d{i}" and body["results"][0]["score"] == pytest.approx(
            1.0, abs=1e-4
        )
    assert len(models) == 1
    return models.pop()


def test_kill_9_during_index_build_then_restart(start_server: ServerFactory) -> None:
    count = 6000
    server = start_server(job_lease_seconds="2")
    http = server.http
    assert http.post("/v1/corpora", json={"name": "big", "kind": "claim"}).status_code == 201
    for start in range(0, count, 1000):
        documents = [{"id": f"d{i}", "text": _text(i)} for i in range(start, start + 1000)]
        assert http.post("/v1/corpora/big/documents", json={"documents": documents}).status_code == 200
    pairs = [
        {"query": f"is it true that {_text(i)[:40]}", "document_id": f"d{i}", "label": 1} for i in range(12)
    ]
    assert http.post("/v1/corpora/big/pairs", json={"pairs": pairs}).status_code == 201
    old_model = _check_consistent(http, count)
    body = {
        "corpus": "big",
        "epochs": 1,
        "batch_size": 4,
        "min_improvement": -1,
        "require_significant": False,
        "cross_validation": "never",  # one training: this test is about the index build
    }
    retrain_id = http.post("/admin/retrain", json=body, headers=KEY).json()["job_id"]
    deadline = time.monotonic() + 180
    stage, job = None, {}
    while time.monotonic() < deadline:
        jobs = http.get("/admin/jobs", headers=KEY).json()["jobs"]
        activations = [j for j in jobs if j["kind"] == "activate"]
        if activations:
            job = activations[0]
            stage = (job["progress"] or {}).get("stage")
            if stage == "indexing" or job["status"] not in ("queued", "running"):
                break
        time.sleep(0.02)
    assert stage == "indexing", f"never saw the index build: {job}"
    assert job["params"]["requested_by"] == retrain_id
    server.kill()

    restarted = start_server(job_lease_seconds="2")
    wait_lease_lost(restarted.http, job["id"], KEY)  # the killed worker's lease runs out (2 s here)
    assert restarted.http.get("/v1/corpora/big").json()["document_count"] == count
    assert _check_consistent(restarted.http, count) == old_model
    models = restarted.http.get("/admin/models", headers=KEY).json()["models"]
    assert [m["version"] for m in models if m["is_active"]] == [old_model]
