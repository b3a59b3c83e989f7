"""The retraining gate judges the pipeline the corpus serves. On one corpus and one set of judged pairs,
fine-tuning gains where the corpus serves dense; where it serves lexical (BM25, which the model does not
touch) the same candidate ranks every later query exactly as the active model does, and the forward
cross-validated gate, which once scored fold models dense whatever the corpus served, must refuse it.
On both databases."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory
from tests.api.test_admin import KEY, finished, wait_job

NAME = "served"
TOPICS = ["moon", "bleach", "vaccine", "earth", "shark", "router", "python", "flight", "plastic", "carrot"]
# Each claim is asked twice in other words: the first wording of every claim is judged before any
# second one, so forward folds train on first wordings and validate on the second ones.
FIRST = "is it true that the {} story number {} happened"
SECOND = "{} rumour {} checked?"


def build(admin: TestClient, ranking: dict[str, Any]) -> None:
    """A claim corpus served at `ranking`, with 20 judged queries about its 10 claims."""
    created = admin.post("/v1/corpora", json={"name": NAME, "kind": "claim", "ranking": ranking}, headers=KEY)
    assert created.status_code == 201, created.text
    docs = [
        {"id": f"d{i}", "text": f"The {t} claim {i} was rated false by the desk."}
        for i, t in enumerate(TOPICS)
    ]
    assert admin.post(f"/v1/corpora/{NAME}/documents", json={"documents": docs}).status_code == 200
    pairs = [
        {"query": form.format(t, i), "document_id": f"d{i}", "label": 1}
        for form in (FIRST, SECOND)
        for i, t in enumerate(TOPICS)
    ]
    assert admin.post(f"/v1/corpora/{NAME}/pairs", json={"pairs": pairs}).status_code == 201


def retrain(admin: TestClient) -> dict[str, Any]:
    """A forward cross-validated retraining that activates any gain above zero; its finished job."""
    body = {"corpus": NAME, "epochs": 3, "batch_size": 4, "learning_rate": 1e-3, "folds": 2,
            "cross_validation": "always", "min_improvement": 0.0, "require_significant": False,
            "auto_activate": True}  # fmt: skip
    created = admin.post("/admin/retrain", json=body, headers=KEY)
    assert created.status_code == 202, created.text
    job = wait_job(admin, created.json()["job_id"], finished, timeout=300)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    return job


# The control (the gain is real where dense is served) needs one database; the refusal runs on both.
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_gate_passes_a_dense_gain_where_dense_is_served(make_client: ClientFactory) -> None:
    admin = make_client(admin_api_key="s3cret")
    build(admin, {"mode": "dense"})
    gate = retrain(admin)["gate"]
    assert gate["protocol"] == "cross-validation" and gate["ranking"] == "dense"
    assert gate["delta"] > 0 and gate["improved"] and gate["activation"] == "queued"


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_the_gate_refuses_a_candidate_no_better_where_it_is_served(make_client: ClientFactory) -> None:
    admin = make_client(admin_api_key="s3cret")
    build(admin, {"mode": "lexical"})
    job = retrain(admin)
    gate = job["gate"]
    assert gate["protocol"] == "cross-validation" and gate["ranking"] == "lexical"
    # Every fold scored the base model and the candidate through BM25: the same lists, no gain.
    assert gate["per_fold_delta"] == [0.0, 0.0] and gate["candidate"] == gate["active"]
    assert not gate["improved"] and gate["activation"] == "gate not passed"
    active = next(m for m in admin.get("/admin/models", headers=KEY).json()["models"] if m["is_active"])
    assert active["version"] != job["model_version"]
