"""Jobs across real processes: two API servers and `pairank worker`s on one database (both databases).

One submission wins the model slot, a worker claims the job, recovery leaves a live worker's job alone,
a cancel sent to the other API process stops it, a worker killed with -9 loses its job to lease
expiry (failed by another worker, never run twice), and a worker stopped with SIGTERM hands its job
back to the queue for another worker.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.api.conftest import CLAIMS
from tests.helpers.processes import ServerFactory, Worker

KEY = {"X-API-Key": "k"}
RETRAIN = {"corpus": "claims", "epochs": 50, "batch_size": 2}


def wait_for(
    http: httpx.Client, job_id: str, check: Callable[[dict[str, Any]], bool], timeout: float = 90
) -> dict[str, Any]:
    """Poll a job until `check(job)` holds."""
    deadline = time.monotonic() + timeout
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = http.get(f"/admin/jobs/{job_id}", headers=KEY).json()
        if check(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job never reached the expected state: {job}")


def training(job: dict[str, Any]) -> bool:
    """Running, with the trainer reporting."""
    return job["status"] == "running" and (job["progress"] or {}).get("stage") == "training"


def test_jobs_across_processes(
    start_server: ServerFactory, start_worker: Callable[..., Worker], service_env: dict[str, str]
) -> None:
    first = start_server(embedded_worker="false")
    second = start_server(embedded_worker="false")
    http = first.http
    assert http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    documents = [{"id": i, "text": t} for i, t in CLAIMS]
    assert http.post("/v1/corpora/claims/documents", json={"documents": documents}).status_code == 200
    pairs = [{"query": f"is it so that {t.lower()}", "document_id": i, "label": 1} for i, t in CLAIMS]
    assert http.post("/v1/corpora/claims/pairs", json={"pairs": pairs * 2}).status_code == 201

    # Two retraining requests at once, through two processes: the database lets exactly one in.
    answers: list[httpx.Response] = []
    barrier = threading.Barrier(2)

    def submit(server_http: httpx.Client) -> None:
        barrier.wait()
        answers.append(server_http.post("/admin/retrain", json=RETRAIN, headers=KEY))

    threads = [threading.Thread(target=submit, args=(s.http,)) for s in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.status_code for a in answers) == [202, 409], [a.text for a in answers]
    job_id = next(a.json()["job_id"] for a in answers if a.status_code == 202)
    assert http.get(f"/admin/jobs/{job_id}", headers=KEY).json()["status"] == "queued"  # no worker yet

    worker = start_worker(job_lease_seconds="3")
    job = wait_for(http, job_id, training)
    assert job["owner"].split(":")[1] == str(worker.pid)
    # Start-up recovery (what every `pairank migrate` runs) leaves a live worker's job alone.
    migrate = subprocess.run([sys.executable, "-m", "pairank.cli", "migrate"], env=service_env, check=False)
    assert migrate.returncode == 0
    time.sleep(4)  # longer than the lease: it is being renewed
    assert http.get(f"/admin/jobs/{job_id}", headers=KEY).json()["status"] == "running"

    # A cancel sent to the other API process reaches the worker.
    assert second.http.post(f"/admin/jobs/{job_id}/cancel", headers=KEY).status_code == 202
    cancelled = wait_for(http, job_id, lambda j: j["status"] != "running", timeout=30)
    assert cancelled["status"] == "cancelled" and cancelled["error"] == "cancelled by an operator"

    # kill -9 of the worker running a job: its lease runs out and another worker fails the job.
    next_id = http.post("/admin/retrain", json=RETRAIN, headers=KEY).json()["job_id"]
    lost_owner = wait_for(http, next_id, training)["owner"]
    worker.kill()
    other = start_worker(job_lease_seconds="3")
    lost = wait_for(http, next_id, lambda j: j["status"] != "running", timeout=60)
    assert lost["status"] == "failed" and f"{lost_owner} stopped renewing its lease" in lost["error"]
    assert lost["owner"] == lost_owner  # never claimed again, so never run twice
    assert "running retrain job " + next_id not in other.log_file.read_text()
    # SIGTERM of a worker running a job (a deploy, a scale-down): the job goes back to the queue and
    # another worker runs it, instead of being cancelled.
    handed_id = http.post("/admin/retrain", json=RETRAIN, headers=KEY).json()["job_id"]
    stopping_owner = wait_for(http, handed_id, training)["owner"]
    other.kill(signal.SIGTERM)
    assert other.process.returncode == 0
    assert "queued again" in other.log_file.read_text()
    third = start_worker(job_lease_seconds="3")
    handed = wait_for(http, handed_id, lambda j: j["status"] == "running" and j["owner"] != stopping_owner)
    assert handed["owner"].split(":")[1] == str(third.pid)
    assert second.http.post(f"/admin/jobs/{handed_id}/cancel", headers=KEY).status_code == 202
    wait_for(http, handed_id, lambda j: j["status"] == "cancelled", timeout=30)
    # The slot is free again, and the service kept serving throughout.
    assert second.http.post("/v1/corpora/claims/rank", json={"query": "moon", "k": 1}).status_code == 200
