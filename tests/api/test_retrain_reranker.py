"""A retraining job that trains a cross-encoder beside the bi-encoder: both trained on the same pairs, the
gate comparing {active, new bi-encoder, new bi-encoder + new re-ranker} on the same dev queries, the
winner activated as one unit, a rollback taking both back. On both databases.

The answer corpus is built so that only the re-ranker can help: it serves BM25, each question's bad
comments echo its words and its good answer shares none, so BM25 (and any bi-encoder, which BM25 does
not use) ranks the good answer last; a cross-encoder learns from the earlier threads what a good answer
reads like, and ranks it first on the later ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory
from tests.api.test_admin import KEY, finished, wait_job
from tests.helpers.reranker import build_reranker_base

NAME = "threads"
TOPICS = ["moon", "bleach", "vaccine", "earth", "shark", "router", "python", "flight", "plastic"]
WORDINGS = ["{} really", "{} true or not", "{} any proof"]
GOOD = [
    "Official sources confirm this was rated false by independent fact checkers, report {n}.",
    "According to the published investigation {n}, experts found no evidence at all.",
    "The agency's statement number {n} explains in detail why it never happened.",
]
BAD = ["{t} haha nice one friend", "{t} lol me too", "thanks for sharing the {t} thing buddy"]
STACK = "new bi-encoder + new re-ranker"


@pytest.fixture(scope="module")
def reranker_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The weights the job's cross-encoder starts from: the bundled MiniLM cut to two layers."""
    return build_reranker_base(tmp_path_factory.mktemp("reranker-base") / "base")


def build(admin: TestClient | httpx.Client) -> list[tuple[str, str]]:
    """27 threads judged in order (the last 9 are the dev queries); returns (question, good answer id)."""
    body = {"name": NAME, "kind": "answer", "ranking": {"mode": "lexical"}}
    assert admin.post("/v1/corpora", json=body).status_code == 201
    documents, pairs, questions = [], [], []
    for n, (wording, topic) in enumerate((w, t) for w in WORDINGS for t in TOPICS):
        question, good = wording.format(topic), f"good{n}"
        # The bad comments first: BM25's ties and the store's order never favour the good answer.
        for b, text in enumerate(BAD):
            documents.append({"id": f"bad{n}-{b}", "text": text.format(t=topic)})
            pairs.append({"query": question, "document_id": f"bad{n}-{b}", "label": 0})
        documents.append({"id": good, "text": GOOD[n % len(GOOD)].format(n=n)})
        pairs.append({"query": question, "document_id": good, "label": 1})
        questions.append((question, good))
    assert admin.post(f"/v1/corpora/{NAME}/documents", json={"documents": documents}).status_code == 200
    assert admin.post(f"/v1/corpora/{NAME}/pairs", json={"pairs": pairs}).status_code == 201
    return questions


def two_model_request(base: Path) -> dict[str, Any]:
    """A retraining request that trains a re-ranker from `base` too, activating whatever passes."""
    return {
        "corpus": NAME, "epochs": 1, "batch_size": 8, "dev": {"fraction": 0.34},
        "min_improvement": 0.0, "require_significant": False, "auto_activate": True,
        "reranker": {"base_model": str(base), "epochs": 8, "learning_rate": 5e-4, "negatives": 3,
                     "weight": 1.0},
    }  # fmt: skip


def retrain(admin: TestClient, base: Path) -> dict[str, Any]:
    """The two-model job; its finished job."""
    created = admin.post("/admin/retrain", json=two_model_request(base), headers=KEY)
    assert created.status_code == 202, created.text
    job = wait_job(admin, created.json()["job_id"], finished, timeout=600)
    assert job["status"] == "succeeded", (job["error"], job["log_tail"])
    return job


def activate(admin: TestClient, version: str) -> None:
    """Activate a version (a rollback, for an older one) and wait until it serves."""
    created = admin.post(f"/admin/models/{version}/activate", headers=KEY)
    assert created.status_code == 202, created.text
    assert wait_job(admin, created.json()["id"], finished, timeout=300)["status"] == "succeeded"


def rank(admin: TestClient, question: str, **extra: Any) -> dict[str, Any]:
    """The corpus's ranking of one question, as served."""
    response = admin.post(f"/v1/corpora/{NAME}/rank", json={"query": question, "k": 4, **extra})
    assert response.status_code == 200, response.text
    return dict(response.json())


def latest_activation(admin: TestClient) -> dict[str, Any]:
    """The newest activation job."""
    jobs = admin.get("/admin/jobs", headers=KEY).json()["jobs"]
    return next(j for j in jobs if j["kind"] == "activate")


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
def test_both_models_are_trained_gated_activated_and_rolled_back_together(
    make_client: ClientFactory, reranker_base: Path
) -> None:
    admin = make_client(admin_api_key="s3cret")
    questions = build(admin)
    before = next(m for m in admin.get("/admin/models", headers=KEY).json()["models"] if m["is_active"])[
        "version"
    ]
    question, good = questions[-1]  # a dev query
    thread = [f"bad{len(questions) - 1}-{b}" for b in range(len(BAD))] + [good]
    assert [r["id"] for r in rank(admin, question, candidates=thread)["results"]][-1] == good  # BM25: last

    job = retrain(admin, reranker_base)
    gate = job["gate"]
    assert gate["protocol"] == "dev" and job["params"]["reranker"]["epochs"] == 8
    arms = gate["arms"]
    assert set(arms) == {"active", "new bi-encoder", STACK}
    assert arms["active"]["ranking"] == arms["new bi-encoder"]["ranking"] == "lexical"
    assert arms["active"]["rerank"] is None and arms[STACK]["rerank"]["model"] == gate["reranker_version"]
    # BM25 ranks every dev question's good answer last whatever the bi-encoder: only the stack gains.
    assert arms["active"]["means"]["MAP"] == arms["new bi-encoder"]["means"]["MAP"] == pytest.approx(0.25)
    assert arms[STACK]["means"]["MAP"] > 0.5 and gate["chosen"] == STACK and gate["improved"]
    assert gate["calibration"]["rerank"] == arms[STACK]["rerank"]

    models = {m["version"]: m for m in admin.get("/admin/models", headers=KEY).json()["models"]}
    reranker, bi_encoder = models[gate["reranker_version"]], models[job["model_version"]]
    assert reranker["kind"] == "cross-encoder" and bi_encoder["kind"] == "bi-encoder"
    assert reranker["job_id"] == bi_encoder["job_id"] == job["id"]

    activation = wait_job(admin, latest_activation(admin)["id"], finished, timeout=300)
    assert activation["status"] == "succeeded" and activation["params"]["requested_by"] == job["id"]
    served = rank(admin, question)
    assert served["model"] == job["model_version"] and "rerank_score" in served["results"][0]
    assert served["ranking"]["rerank"]["model"] == gate["reranker_version"]
    given = rank(admin, question, candidates=thread)
    assert given["ranking"]["rerank"]["model"] == gate["reranker_version"]
    assert given["results"][0]["id"] == good

    activate(admin, before)  # the rollback: the re-ranker goes with the bi-encoder it was gated with
    rolled_back = rank(admin, question, candidates=thread)
    assert rolled_back["model"] == before and "rerank" not in rolled_back["ranking"]
    assert rolled_back["results"][-1]["id"] == good
    activate(admin, job["model_version"])  # and forward again: both come back
    assert rank(admin, question)["ranking"]["rerank"]["model"] == gate["reranker_version"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_reranker_job_is_gated_on_the_dev_set(make_client: ClientFactory) -> None:
    admin = make_client(admin_api_key="s3cret")
    build(admin)
    body = {"corpus": NAME, "reranker": {}, "cross_validation": "always"}
    refused = admin.post("/admin/retrain", json=body, headers=KEY)
    assert refused.status_code == 422 and refused.json()["field"] == "cross_validation", refused.text
    assert "re-ranker" in refused.json()["detail"]
    bad = admin.post("/admin/retrain", json={"corpus": NAME, "reranker": {"weight": 1.5}}, headers=KEY)
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "reranker.weight", bad.text
