"""The evaluation API end to end: queue, run in the background, report per-query metrics; its 4xx cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.control.recovery import recover_interrupted_work
from app.db.engine import transaction
from app.db.repositories.evaluations import EvaluationRepository
from app.db.repositories.jobs import JobRepository
from app.serving.runtime import Runtime
from tests.api.conftest import CLAIMS, ClientFactory, add_claims, wait_for

QUERIES = [{"id": f"q{i}", "text": text} for i, (_, text) in enumerate(CLAIMS)]
QRELS = [{"query_id": f"q{i}", "document_id": doc_id, "relevance": 1} for i, (doc_id, _) in enumerate(CLAIMS)]


def test_corpus_retrieval_evaluation(client: TestClient) -> None:
    add_claims(client)
    created = client.post(
        "/v1/evaluations", json={"name": "self", "corpus": "claims", "queries": QUERIES, "qrels": QRELS}
    )
    assert created.status_code == 202 and created.json()["status"] in ("queued", "running", "succeeded")
    body = wait_for(client, created.json()["id"])
    assert body["status"] == "succeeded", body["error"]
    assert body["metrics"]["MRR"] == 1.0 and body["metrics"]["HasPositive@1"] == 1.0
    assert body["metrics"]["P@5"] == pytest.approx(0.2) and "SemEval-MAP@10" in body["metrics"]
    assert set(body["per_query"]) == {q["id"] for q in QUERIES} and body["per_query"]["q3"]["MAP"] == 1.0
    assert body["model"].startswith("tiny-model") and body["duration_seconds"] >= 0
    assert body["query_count"] == 5 and body["name"] == "self" and body["corpus"] == "claims"
    listed = client.get("/v1/evaluations").json()["evaluations"]
    assert [e["id"] for e in listed] == [body["id"]] and listed[0]["per_query"] is None


def test_rerank_with_inline_documents_and_chosen_metrics(client: TestClient) -> None:
    # The query is identical to a document judged non-relevant, so the relevant one comes second.
    documents = [
        {"id": "same", "text": "The moon landing was staged."},
        {"id": "rel", "text": "Sharks swim."},
    ]
    request = {
        "documents": documents + [{"id": "other", "text": "Vaccines cause autism."}],
        "queries": [{"id": "q", "text": "The moon landing was staged."}],
        "qrels": [
            {"query_id": "q", "document_id": "same", "relevance": 0},
            {"query_id": "q", "document_id": "rel", "relevance": 2},
        ],
        "mode": "rerank",
        "metrics": ["MRR", "MAP", "HasPositive@1", "nDCG@3"],
        "relevance_level": 2,
    }
    body = wait_for(client, client.post("/v1/evaluations", json=request).json()["id"])
    assert body["status"] == "succeeded", body["error"]
    assert set(body["metrics"]) == {"MRR", "MAP", "HasPositive@1", "nDCG@3"}
    assert body["metrics"]["MRR"] == 0.5 and body["metrics"]["MAP"] == 0.5
    assert body["metrics"]["HasPositive@1"] == 0.0 and body["mode"] == "rerank"


def test_evaluation_errors(make_client: ClientFactory) -> None:
    client = make_client(max_evaluation_queries=5)
    add_claims(client)
    base = {"corpus": "claims", "queries": QUERIES, "qrels": QRELS}

    def post(**changes: Any) -> Any:
        return client.post("/v1/evaluations", json={**base, **changes})

    unknown_doc = post(qrels=[*QRELS, {"query_id": "q0", "document_id": "nope", "relevance": 1}])
    assert unknown_doc.status_code == 422 and "nope" in unknown_doc.json()["detail"]
    unknown_query = post(qrels=[{"query_id": "zz", "document_id": "c1", "relevance": 1}])
    assert unknown_query.status_code == 422 and "zz" in unknown_query.json()["detail"]
    empty = post(qrels=[])
    assert empty.status_code == 422 and empty.json()["errors"][0]["field"] == "qrels"
    bad_metric = post(metrics=["MRR", "Accuracy@3"])
    assert bad_metric.status_code == 422 and "Accuracy@3" in bad_metric.json()["detail"]
    both = post(documents=[{"id": "c1", "text": "x"}])
    assert both.status_code == 422 and "exactly one" in both.json()["detail"]
    assert post(corpus="nope").status_code == 404
    too_many = post(queries=[*QUERIES, {"id": "q9", "text": "x"}])
    assert too_many.status_code == 413 and too_many.json()["field"] == "queries"
    assert client.get("/v1/evaluations/does-not-exist").status_code == 404
    assert client.get("/v1/evaluations").json()["evaluations"] == []


def test_only_evaluations_of_lost_workers_are_failed(client: TestClient) -> None:
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    now = datetime.now(UTC)
    with transaction(runtime.sessions) as session:
        for evaluation_id, lease in (
            ("e-lost", now - timedelta(seconds=5)),
            ("e-alive", now + timedelta(60)),
        ):
            EvaluationRepository(session).add(evaluation_id, None, "claims", "retrieval", {"qrels": []})
            JobRepository(session).add(
                f"job-{evaluation_id}", "evaluate", "claims", {"evaluation_id": evaluation_id}
            )
            JobRepository(session).update(
                f"job-{evaluation_id}", status="running", owner="other-host:1:x", lease_expires_at=lease
            )
    assert recover_interrupted_work(runtime.sessions) in ([], ["job-e-lost"])  # the embedded worker may win
    lost = client.get("/v1/evaluations/e-lost").json()
    assert (
        lost["status"] == "failed" and "stopped renewing its lease" in lost["error"] and lost["finished_at"]
    )
    # A live worker's evaluation (fresh lease, maybe on another replica) is left alone.
    assert client.get("/v1/evaluations/e-alive").json()["status"] == "queued"
    with runtime.sessions() as session:
        alive = JobRepository(session).get("job-e-alive")
        assert alive is not None and alive.status == "running"


def test_calibrate_stores_threshold_used_by_duplicates(client: TestClient) -> None:
    add_claims(client)
    pairs = [
        {"text": CLAIMS[0][1], "document_id": "c1", "label": 1},
        {"text": CLAIMS[1][1], "document": CLAIMS[1][1], "label": 1},
        {"text": CLAIMS[0][1], "document_id": "c4", "label": 0},
        {"text": CLAIMS[2][1], "document_id": "c5", "label": 0},
    ]
    calibrated = client.post("/v1/corpora/claims/calibrate", json={"pairs": pairs})
    assert calibrated.status_code == 200, calibrated.text
    body = calibrated.json()
    assert body["f1"] == 1.0 and body["precision"] == 1.0 and body["pair_count"] == 4
    assert body["threshold"] == pytest.approx(1.0, abs=1e-5)
    corpus = client.get("/v1/corpora/claims").json()
    assert corpus["duplicate_threshold"] == body["threshold"] and corpus["threshold_model"] == body["model"]
    duplicates = client.post("/v1/corpora/claims/duplicates", json={"text": CLAIMS[2][1]}).json()
    assert duplicates["threshold"] == body["threshold"] and duplicates["threshold_source"] == "corpus"
    # The threshold sits at the positives' cosine (~1.0): only the exact text can reach it.
    assert {d["id"] for d in duplicates["results"][0]["duplicates"]} <= {"c3"}
    assert all(d["score"] >= body["threshold"] for d in duplicates["results"][0]["duplicates"])
    explicit = client.post("/v1/corpora/claims/duplicates", json={"text": "x", "threshold": 0.1}).json()
    assert explicit["threshold_source"] == "request"


def test_calibrate_errors(client: TestClient) -> None:
    add_claims(client)
    url = "/v1/corpora/claims/calibrate"
    one_class = [{"text": "a", "document": "b", "label": 1}, {"text": "c", "document": "d", "label": 1}]
    response = client.post(url, json={"pairs": one_class})
    assert response.status_code == 422 and "non-duplicate" in response.json()["detail"]
    unknown = [{"text": "a", "document_id": "zz", "label": 1}, {"text": "c", "document": "d", "label": 0}]
    assert client.post(url, json={"pairs": unknown}).status_code == 404
    both = [{"text": "a", "document_id": "c1", "document": "b", "label": 1}] * 2
    assert client.post(url, json={"pairs": both}).status_code == 422
    bad_label = [{"text": "a", "document": "b", "label": 2}] * 2
    assert client.post(url, json={"pairs": bad_label}).status_code == 422
    assert client.post("/v1/corpora/nope/calibrate", json={"pairs": one_class}).status_code == 422


def test_lexical_and_hybrid_evaluations_rank_as_the_service_does(client: TestClient) -> None:
    add_claims(client)
    # Queries that share a rare word with their claim: BM25 finds every one first.
    queries = [{"id": "q1", "text": "staged moon"}, {"id": "q5", "text": "flooded highway shark"}]
    qrels = [
        {"query_id": "q1", "document_id": "c1", "relevance": 1},
        {"query_id": "q5", "document_id": "c5", "relevance": 1},
    ]
    for ranking, extra in (("lexical", {}), ("hybrid", {"alpha": 1.0})):
        request = {"corpus": "claims", "queries": queries, "qrels": qrels, "ranking": ranking, **extra}
        body = wait_for(client, client.post("/v1/evaluations", json=request).json()["id"])
        assert body["status"] == "succeeded", body["error"]
        assert body["metrics"]["MRR"] == 1.0, (ranking, body["per_query"])
    inline = {
        "documents": [{"id": d, "text": t} for d, t in CLAIMS],
        "queries": queries,
        "qrels": qrels,
        "ranking": "hybrid",
        "alpha": 1.0,
        "fusion": "linear",
    }
    body = wait_for(client, client.post("/v1/evaluations", json=inline).json()["id"])
    assert body["status"] == "succeeded" and body["metrics"]["MRR"] == 1.0
    bad = client.post("/v1/evaluations", json={**inline, "alpha": 2})
    assert bad.status_code == 422 and "alpha" in bad.text
