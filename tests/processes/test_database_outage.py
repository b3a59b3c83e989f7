"""PostgreSQL stopped and started again under traffic: 503 with Retry-After meanwhile, recovery by itself.

The test starts a PostgreSQL of its own (the pgserver wheel, in a temp folder), so stopping it disturbs
no other test; a real `pairank serve` process with its job worker runs on it. A writer upserts one
document per request and a reader ranks, throughout: every answer is 200 or 503 with `Retry-After`
(never a 5xx other than 503, never a hang past the client's timeout), `/ready` names the database while
it is down, the first write after the restart succeeds within seconds, and every write acknowledged
before, during or after the outage is stored, each with its own text (nothing half-applied).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import process_model_env
from tests.helpers.postgres import own_postgres as own_postgres_server
from tests.helpers.postgres import psycopg_url, stop_postgres
from tests.helpers.processes import Server

OUTAGE_SECONDS = 6
IMPORT_LINES = 40_000
CLIENT_TIMEOUT = 30  # a request may wait for a connect timeout (10 s), never longer


@pytest.fixture
def own_postgres(tmp_path: Path) -> Iterator[Any]:
    """A PostgreSQL only this test uses (stopped and started at will)."""
    with own_postgres_server(tmp_path / "pg") as server:
        yield server


def traffic(http: httpx.Client, stop_at: threading.Event, record: dict[str, Any]) -> None:
    """Upsert one document per request and rank after it, until told to stop."""
    number = 0
    while not stop_at.is_set():
        number += 1
        doc = {"id": f"d{number}", "text": f"claim number {number} about the flooded highway"}
        try:
            write = http.post("/v1/corpora/claims/documents", json={"documents": [doc]})
            read = http.post("/v1/corpora/claims/rank", json={"query": "flooded highway", "k": 3})
        except httpx.TimeoutException:
            record["hangs"] += 1
            continue
        for response in (write, read):
            record["statuses"][response.status_code] = record["statuses"].get(response.status_code, 0) + 1
            if response.status_code == 503:
                record["retry_after"].add(response.headers.get("retry-after"))
        if write.status_code == 200:
            record["acknowledged"][doc["id"]] = doc["text"]
            record["last_ok"] = time.monotonic()
        time.sleep(0.02)


def start_import(http: httpx.Client) -> str:
    """Queue a bulk import long enough to be running when the database stops; returns its job id."""
    assert http.post("/v1/corpora", json={"name": "bulk", "kind": "claim"}).status_code == 201
    lines = "".join(
        json.dumps({"id": f"b{i}", "text": f"bulk claim {i} on vaccines, towers and floods"}) + "\n"
        for i in range(IMPORT_LINES)
    )
    response = http.post(
        "/v1/corpora/bulk/imports", content=lines.encode(), headers={"content-type": "application/x-ndjson"}
    )
    assert response.status_code == 202, response.text
    job_id = str(response.json()["id"])
    deadline = time.monotonic() + 60
    while http.get(f"/v1/corpora/bulk/imports/{job_id}").json()["status"] != "running":
        assert time.monotonic() < deadline, "the import never started"
        time.sleep(0.1)
    return job_id


def wait_for_job(http: httpx.Client, job_id: str, seconds: float = 180) -> dict[str, Any]:
    """The import job once it has ended."""
    deadline = time.monotonic() + seconds
    while True:
        job = http.get(f"/v1/corpora/bulk/imports/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "cancelled") or time.monotonic() > deadline:
            return dict(job)
        time.sleep(0.5)


def test_a_database_restart_under_traffic_answers_503_and_loses_nothing(
    own_postgres: Any, tmp_path: Path, tiny_model_dir: Path, export_cache_dir: Path
) -> None:
    url = psycopg_url(own_postgres)
    env = {
        **os.environ,
        "PAIRANK_DATA_DIR": str(tmp_path / "data"),
        "PAIRANK_DATABASE_URL": url,
        **process_model_env(tiny_model_dir, export_cache_dir),
        "PAIRANK_AUTH": "disabled",
        "PAIRANK_RATE_LIMIT": "0",
        "PAIRANK_EMBEDDED_WORKER": "true",
    }
    server = Server(env, log_file=tmp_path / "serve.log")
    http = httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=CLIENT_TIMEOUT)
    try:
        assert http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
        record: dict[str, Any] = {"statuses": {}, "retry_after": set(), "acknowledged": {}, "hangs": 0}
        done = threading.Event()
        writer = threading.Thread(target=traffic, args=(http, done, record))
        writer.start()
        job = start_import(http)
        time.sleep(2)
        before = len(record["acknowledged"])
        assert http.get(f"/v1/corpora/bulk/imports/{job}").json()["status"] == "running"
        stop_postgres(own_postgres)
        time.sleep(1)
        ready = http.get("/ready")
        assert ready.status_code == 503 and "database" in ready.text, ready.text
        time.sleep(OUTAGE_SECONDS - 1)
        restarted = time.monotonic()
        own_postgres.ensure_postgres_running()
        deadline = restarted + 30
        while record.get("last_ok", 0) < restarted and time.monotonic() < deadline:
            time.sleep(0.2)
        recovered = record.get("last_ok", 0) - restarted
        time.sleep(2)  # traffic after the recovery too
        done.set()
        writer.join(CLIENT_TIMEOUT * 3)

        summary = f"{before} writes before, {record['statuses']}, recovered in {recovered:.2f} s"
        print(f"outage: {summary}, {len(record['acknowledged'])} acknowledged")
        assert before > 0 and record.get("last_ok", 0) > restarted, record
        assert 0 < recovered < 15, f"the first write after the restart took {recovered:.1f} s"
        assert record["hangs"] == 0
        assert set(record["statuses"]) <= {200, 503}, record["statuses"]
        assert record["statuses"].get(503, 0) > 0  # the outage was seen
        assert record["retry_after"] and None not in record["retry_after"]
        assert http.get("/ready").status_code == 200
        stored = {}
        for doc_id in record["acknowledged"]:
            response = http.get(f"/v1/corpora/claims/documents/{doc_id}")
            assert response.status_code == 200, (doc_id, response.text)
            stored[doc_id] = response.json()["text"]
        assert stored == record["acknowledged"]
        # The import met the outage, went back to the queue and finished with every document.
        imported = wait_for_job(http, job)
        assert imported["status"] == "succeeded", imported
        assert "met a database outage; queued again" in (tmp_path / "serve.log").read_text()
        assert http.get("/v1/corpora/bulk").json()["document_count"] == IMPORT_LINES
    finally:
        http.close()
        server.kill()
