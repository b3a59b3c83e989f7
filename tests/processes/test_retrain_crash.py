"""kill -9 of the service while a two-model retraining job trains its re-ranker: a restart finds the job
failed and neither model registered (they are registered together, after both are trained and gated),
the active model serving as before."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.api.test_retrain_reranker import build, two_model_request
from tests.helpers.processes import ServerFactory, wait_lease_lost
from tests.helpers.reranker import build_reranker_base

KEY = {"X-API-Key": "k"}


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_kill_9_while_the_reranker_trains_leaves_neither_model(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    server = start_server(job_lease_seconds="2")
    http = server.http
    build(http)
    before = http.get("/admin/models", headers=KEY).json()["models"]
    body = {**two_model_request(build_reranker_base(tmp_path / "base")), "auto_activate": True}
    body["reranker"] = {**body["reranker"], "epochs": 20}  # long enough to be caught training
    job_id = http.post("/admin/retrain", json=body, headers=KEY).json()["job_id"]
    deadline, job = time.monotonic() + 300, {}
    while time.monotonic() < deadline:
        job = http.get(f"/admin/jobs/{job_id}", headers=KEY).json()
        if (job["progress"] or {}).get("stage") == "training_reranker" or job["status"] not in (
            "queued",
            "running",
        ):
            break
        time.sleep(0.05)
    stage = (job["progress"] or {}).get("stage")
    assert stage == "training_reranker", f"never saw the re-ranker train: {job}"
    server.kill()

    restarted = start_server(job_lease_seconds="2")
    wait_lease_lost(restarted.http, job_id, KEY)  # the killed worker's lease runs out (2 s here)
    after = restarted.http.get("/admin/models", headers=KEY).json()["models"]
    assert [m["version"] for m in after] == [m["version"] for m in before]  # neither was registered
    assert [m["version"] for m in after if m["is_active"]] == [m["version"] for m in before if m["is_active"]]
