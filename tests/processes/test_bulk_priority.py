"""The priority benchmark's short variant (benchmarks/serving/priority.py runs 50,000 documents on the default
model): clients keep ranking while an import runs through the job worker into the same corpus and its
index is checkpointed; every call is answered and the import completes. (The latency target lives in
the benchmark; the scheduling rules behind it are tested in tests/encoders/test_batcher.py.)"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.helpers.processes import ServerFactory

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "benchmarks" / d) for d in ("serving", "")]
from traffic import Load, summary  # noqa: E402

QUERIES = [f"is it true that the {w} was faked" for w in ("moon landing", "tower", "flood", "vaccine")]


def test_queries_are_answered_while_an_import_and_checkpoints_run(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    server = start_server(checkpoint_seconds="1", checkpoint_changes="500", log_file=tmp_path / "server.log")
    http = server.http
    assert http.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    seed = [{"id": f"c{i}", "text": f"claim {i}: {QUERIES[i % 4]}"} for i in range(200)]
    assert http.post("/v1/corpora/claims/documents", json={"documents": seed}).status_code == 200
    upload = tmp_path / "import.jsonl"
    upload.write_text(
        "".join(json.dumps({"id": f"a{i}", "text": f"archived claim {i} about the {i % 97} towers"}) + "\n"
                for i in range(3000))
    )  # fmt: skip
    load = Load(
        server.port,
        lambda rng: ("rank", "POST", "/v1/corpora/claims/rank", {"query": rng.choice(QUERIES), "k": 10}),
        clients=4,
    )
    time.sleep(2)
    with upload.open("rb") as body:
        started = http.post(
            "/v1/corpora/claims/imports", content=body, headers={"content-type": "application/x-ndjson"}
        )
    assert started.status_code == 202, started.text
    job_id, began = started.json()["id"], time.monotonic() - load.origin
    deadline = time.monotonic() + 300
    while (job := http.get(f"/v1/corpora/claims/imports/{job_id}").json())["status"] not in (
        "succeeded", "failed", "cancelled",
    ):  # fmt: skip
        assert time.monotonic() < deadline, job
        time.sleep(0.5)
    ended = time.monotonic() - load.origin
    calls = load.stop()
    assert job["status"] == "succeeded" and job["progress"]["inserted"] == 3000, job
    during = summary([c for c in calls if began <= c.at < ended])
    failed = [c for c in calls if not 200 <= c.status < 300]
    assert not failed, failed[:10]
    assert during["ok"] >= 20  # queries were served all along, not only before and after
    index = http.get("/v1/corpora/claims/index").json()
    assert index["size"] == 3200 and index["last_checkpoint"] is not None
