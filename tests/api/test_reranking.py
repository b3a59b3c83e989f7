"""Re-ranking over HTTP: setting a corpus's stage, per-query choices, every 4xx naming its field and
limit, which keys may name a re-ranker, kinds in the registry, and 429 with Retry-After when the
re-ranker's queue is full (every database)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.serving.runtime import Runtime
from app.usecases.model_admin import ModelAdminService
from tests.api.conftest import CLAIMS, ClientFactory, add_claims, wait_for

KEY = {"X-API-Key": "s3cret"}
DENSE = {"mode": "dense", "alpha": 0.2, "fusion": "linear"}
QUERY = "is it true that a shark swam on a flooded highway?"


def runtime_of(client: TestClient) -> Runtime:
    """The app's runtime."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    return runtime


def register(client: TestClient, folder: Path) -> str:
    """Register a folder as `pairank models register` does; its version."""
    return ModelAdminService(runtime_of(client)).register(str(folder)).version


def rank(client: TestClient, **body: Any) -> dict[str, Any]:
    """A corpus rank call's body (asserting a 200)."""
    response = client.post("/v1/corpora/claims/rank", json={"query": QUERY, "k": 5, **body}, headers=KEY)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


@pytest.fixture
def admin(make_client: ClientFactory, tiny_reranker_dir: Path) -> tuple[TestClient, str]:
    """A ready client (an admin key), the five claims ranked dense, the tiny re-ranker registered."""
    client = make_client(admin_api_key="s3cret")
    add_claims(client)
    assert client.put("/v1/corpora/claims/ranking", json=DENSE).status_code == 200
    return client, register(client, tiny_reranker_dir)


def test_a_corpus_stage_reranks_only_the_top_k_and_says_so(admin: tuple[TestClient, str]) -> None:
    client, version = admin
    first = rank(client)
    assert "rerank" not in first["ranking"] and all("rerank_score" not in r for r in first["results"])
    stage = {"model": version, "k": 3, "weight": 1.0}
    response = client.put("/v1/corpora/claims/ranking", json={**DENSE, "rerank": stage}, headers=KEY)
    assert response.status_code == 200, response.text
    assert response.json()["ranking"] == {**DENSE, "rerank": stage}
    assert client.get("/v1/corpora/claims").json()["ranking"]["rerank"] == stage
    reranked = rank(client)
    assert reranked["ranking"] == {**DENSE, "rerank": stage} and reranked["model"] == first["model"]
    ids, before = [r["id"] for r in reranked["results"]], [r["id"] for r in first["results"]]
    assert ids[3:] == before[3:] and set(ids[:3]) == set(before[:3])
    head = [r["rerank_score"] for r in reranked["results"][:3]]
    assert head == sorted(head, reverse=True) and all(
        "rerank_score" not in r for r in reranked["results"][3:]
    )
    assert [r["score"] for r in reranked["results"]] == [
        {r["id"]: r["score"] for r in first["results"]}[i] for i in ids
    ]  # `score` stays the first stage's
    off = rank(client, rerank={"enabled": False})
    assert "rerank" not in off["ranking"] and [r["id"] for r in off["results"]] == before
    timing = client.post("/v1/corpora/claims/rank", json={"query": QUERY}).headers["server-timing"]
    assert "rerank;dur=" in timing


@pytest.mark.parametrize(
    ("rerank", "field", "limit"),
    [
        ({"model": "m", "k": 0}, "rerank.k", "greater than or equal to 1"),
        ({"model": "m", "k": 101}, "rerank.k", "less than or equal to 100"),
        ({"model": "m", "weight": 1.5}, "rerank.weight", "less than or equal to 1"),
        ({"model": "m", "k": "20"}, "rerank.k", "integer"),
        ({"model": ""}, "rerank.model", "at least 1 character"),
        ({"k": 20}, "rerank.model", "Field required"),
        ({"model": "m", "depth": 20}, "rerank.depth", "Extra inputs"),
    ],
)
def test_bad_stages_are_422_naming_the_field_and_the_limit(
    admin: tuple[TestClient, str], rerank: dict[str, Any], field: str, limit: str
) -> None:
    client, _ = admin
    response = client.put("/v1/corpora/claims/ranking", json={**DENSE, "rerank": rerank}, headers=KEY)
    assert response.status_code == 422, response.text
    assert {e["field"] for e in response.json()["errors"]} == {field} and limit in response.text
    per_query = {k: v for k, v in rerank.items() if k != "model"} if field != "rerank.model" else None
    if per_query:  # the same bounds on a rank call's own choices
        ranked = client.post("/v1/corpora/claims/rank", json={"query": QUERY, "rerank": per_query})
        assert ranked.status_code == 422 and field in ranked.text and limit in ranked.text


def test_which_model_may_rerank_and_who_may_name_it(admin: tuple[TestClient, str]) -> None:
    client, version = admin
    bi_encoder = client.get("/ready").json().get("model") or runtime_of(client).serving.state().model_version
    stage = {"model": version, "k": 3}
    refused = client.put("/v1/corpora/claims/ranking", json={**DENSE, "rerank": stage})  # no admin key
    assert refused.status_code == 403 and refused.json()["field"] == "rerank.model"
    created = client.post(
        "/v1/corpora", json={"name": "other", "kind": "claim", "ranking": {**DENSE, "rerank": stage}}
    )
    assert created.status_code == 403 and created.json()["field"] == "ranking.rerank.model"
    unknown = client.put(
        "/v1/corpora/claims/ranking", json={**DENSE, "rerank": {"model": "no@1"}}, headers=KEY
    )
    assert unknown.status_code == 404 and unknown.json()["field"] == "rerank.model"
    wrong = client.put(
        "/v1/corpora/claims/ranking", json={**DENSE, "rerank": {"model": bi_encoder}}, headers=KEY
    )
    assert wrong.status_code == 409 and "bi-encoder" in wrong.json()["detail"]
    asked = client.post("/v1/corpora/claims/rank", json={"query": QUERY, "rerank": {"model": version}})
    assert asked.status_code == 403 and asked.json()["field"] == "rerank.model"
    nothing = client.post("/v1/corpora/claims/rank", json={"query": QUERY, "rerank": {"k": 3}})
    assert nothing.status_code == 409 and nothing.json()["field"] == "rerank.model"
    named = rank(client, rerank={"model": version, "k": 2, "weight": 0.5})
    assert named["ranking"]["rerank"] == {"model": version, "k": 2, "weight": 0.5}


def test_compare_sides_rerank_as_rank_does_and_name_their_fields(admin: tuple[TestClient, str]) -> None:
    client, version = admin
    stage = {"model": version, "k": 3, "weight": 1.0}
    body = {"query": QUERY, "k": 5, "left": {"rerank": {"enabled": False}}, "right": {"rerank": stage}}
    refused = client.post("/v1/corpora/claims/compare", json=body)  # naming a model needs an admin key
    assert refused.status_code == 403 and refused.json()["field"] == "right.rerank.model"
    compared = client.post("/v1/corpora/claims/compare", json=body, headers=KEY)
    assert compared.status_code == 200, compared.text
    left, right = compared.json()["left"], compared.json()["right"]
    assert "rerank" not in left["ranking"] and right["ranking"]["rerank"] == stage
    assert [r["id"] for r in left["results"]] == [r["id"] for r in rank(client)["results"]]
    assert [r["id"] for r in right["results"]] == [r["id"] for r in rank(client, rerank=stage)["results"]]
    assert all("rerank_score" in r for r in right["results"][:3])
    no_stage = client.post(
        "/v1/corpora/claims/compare", json={"query": QUERY, "right": {"rerank": {"k": 2}}}, headers=KEY
    )
    assert no_stage.status_code == 409 and no_stage.json()["field"] == "right.rerank.model"
    too_deep = client.post(
        "/v1/corpora/claims/compare", json={"query": QUERY, "right": {"rerank": {"k": 101}}}, headers=KEY
    )
    assert too_deep.status_code == 422 and "right.rerank.k" in too_deep.text
    judged = {"pairs": [{"query": QUERY, "document_id": CLAIMS[4][0], "label": 1}]}
    assert client.post("/v1/corpora/claims/pairs", json=judged, headers=KEY).status_code in (200, 201)
    metrics = client.post(
        "/v1/corpora/claims/compare/metrics", json={"right": {"rerank": stage}}, headers=KEY
    ).json()
    assert "rerank" not in metrics["left"]["ranking"] and metrics["right"]["ranking"]["rerank"] == stage


def test_evaluations_run_the_corpus_stage_unless_told_and_record_it(admin: tuple[TestClient, str]) -> None:
    client, version = admin
    shark = CLAIMS[4][0]
    request = {
        "corpus": "claims",
        "queries": [{"id": "q", "text": QUERY}],
        "qrels": [{"query_id": "q", "document_id": shark, "relevance": 1}],
        "metrics": ["MRR"],
    }

    def evaluated(**changes: Any) -> dict[str, Any]:
        created = client.post("/v1/evaluations", json={**request, **changes}, headers=KEY)
        assert created.status_code == 202, created.text
        body = wait_for(client, created.json()["id"], KEY)
        assert body["status"] == "succeeded", body["error"]
        return body

    def mrr(ranked: dict[str, Any]) -> float:
        return 1 / (1 + [r["id"] for r in ranked["results"]].index(shark))

    nothing = client.post("/v1/evaluations", json={**request, "rerank": {"k": 2}}, headers=KEY)
    assert nothing.status_code == 409 and nothing.json()["field"] == "rerank.model"
    assert evaluated()["rerank"] is None
    stage = {"model": version, "k": 3, "weight": 1.0}
    assert (
        client.put("/v1/corpora/claims/ranking", json={**DENSE, "rerank": stage}, headers=KEY).status_code
        == 200
    )
    with_stage = evaluated()
    assert with_stage["rerank"] == stage and with_stage["metrics"]["MRR"] == pytest.approx(mrr(rank(client)))
    without = evaluated(rerank={"enabled": False})
    first = rank(client, rerank={"enabled": False})
    assert without["rerank"] is None and without["metrics"]["MRR"] == pytest.approx(mrr(first))
    inline = {key: value for key, value in request.items() if key != "corpus"}
    inline["documents"] = [{"id": i, "text": t} for i, t in CLAIMS]
    refused = client.post("/v1/evaluations", json={**inline, "rerank": {"model": version}})  # no admin key
    assert refused.status_code == 403 and refused.json()["field"] == "rerank.model"
    named = client.post("/v1/evaluations", json={**inline, "rerank": {"model": version, "k": 5}}, headers=KEY)
    assert named.status_code == 202, named.text
    assert wait_for(client, named.json()["id"], KEY)["rerank"] == {"model": version, "k": 5, "weight": 1.0}


def test_the_registry_knows_kinds_and_never_activates_a_cross_encoder(admin: tuple[TestClient, str]) -> None:
    client, version = admin
    listed = {m["version"]: m for m in client.get("/admin/models", headers=KEY).json()["models"]}
    assert listed[version]["kind"] == "cross-encoder" and listed[version]["source"] == "registered"
    assert {m["kind"] for v, m in listed.items() if v != version} == {"bi-encoder"}
    assert listed[version]["training"]["kind"] == "cross-encoder" and listed[version]["artifact_files"] > 0
    refused = client.post(f"/admin/models/{version}/activate", headers=KEY)
    assert refused.status_code == 409 and "cross-encoder" in refused.json()["detail"]
    compared = client.post("/v1/corpora/claims/compare", headers=KEY,
                           json={"query": QUERY, "left": {}, "right": {"model": version}})  # fmt: skip
    assert compared.status_code == 409 and compared.json()["field"] == "right.model"
    client.put("/v1/corpora/claims/ranking", json={**DENSE, "rerank": {"model": version}}, headers=KEY)
    in_use = client.delete(f"/admin/models/{version}", headers=KEY)
    assert in_use.status_code == 409 and "claims" in in_use.json()["detail"]


def test_a_full_reranker_queue_answers_429_with_retry_after(
    make_client: ClientFactory, tiny_reranker_dir: Path
) -> None:
    client = make_client(admin_api_key="s3cret", rerank_max_queued_pairs=1, rerank_batch_pairs=16)
    add_claims(client)
    version = register(client, tiny_reranker_dir)
    stage = {"model": version, "k": 5}
    assert (
        client.put("/v1/corpora/claims/ranking", json={**DENSE, "rerank": stage}, headers=KEY).status_code
        == 200
    )
    reranker = runtime_of(client).serving.rerankers.get(version)
    # Another caller's long re-ranking holds the queue (chunks of 16 pairs wait behind each pass).
    texts = [
        text for _, text in CLAIMS
    ] * 60  # about a second of scoring: the request comes in well within it
    occupant = threading.Thread(target=reranker.score, args=(QUERY, texts))
    occupant.start()
    deadline = time.monotonic() + 10
    while reranker.batcher.queued_texts == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    response = client.post("/v1/corpora/claims/rank", json={"query": QUERY})
    occupant.join()
    assert response.status_code == 429, response.text
    assert int(response.headers["retry-after"]) >= 1
    body = response.json()
    assert body["field"] == "PAIRANK_RERANK_MAX_QUEUED_PAIRS" and body["limit"] == 1
    assert client.post("/v1/corpora/claims/rank", json={"query": QUERY}).status_code == 200  # drained
