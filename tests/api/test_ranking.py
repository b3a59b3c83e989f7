"""Ranking, duplicates and similarity endpoints with the tiny model, and their error cases."""

from __future__ import annotations

import math

from fastapi.testclient import TestClient

from tests.api.conftest import CLAIMS, ClientFactory, add_claims


def test_rank_corpus_finds_exact_text_first(client: TestClient) -> None:
    add_claims(client)
    response = client.post("/v1/corpora/claims/rank", json={"query": CLAIMS[2][1], "k": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["model"].startswith("tiny-model")
    assert [r["rank"] for r in body["results"]] == [1, 2, 3]
    assert body["results"][0]["id"] == "c3" and body["results"][0]["text"] == CLAIMS[2][1]
    assert math.isclose(body["results"][0]["score"], 1.0, abs_tol=1e-5)
    scores = [r["score"] for r in body["results"]]
    assert scores == sorted(scores, reverse=True)


def test_rank_default_k_and_k_larger_than_corpus(client: TestClient) -> None:
    add_claims(client)
    assert len(client.post("/v1/corpora/claims/rank", json={"query": "moon"}).json()["results"]) == 5
    assert (
        len(client.post("/v1/corpora/claims/rank", json={"query": "moon", "k": 1000}).json()["results"]) == 5
    )


def test_rank_candidates_only_ranks_those(client: TestClient) -> None:
    add_claims(client)
    body = {"query": CLAIMS[0][1], "candidates": ["c4", "c5", "c1"], "k": 10}
    results = client.post("/v1/corpora/claims/rank", json=body).json()["results"]
    assert sorted(r["id"] for r in results) == ["c1", "c4", "c5"] and results[0]["id"] == "c1"
    missing = client.post("/v1/corpora/claims/rank", json={"query": "q", "candidates": ["c1", "zz"]})
    assert missing.status_code == 404 and "zz" in missing.json()["detail"]


def test_rank_errors(make_client: ClientFactory) -> None:
    client = make_client(max_candidates_per_request=2, max_text_chars=60)
    add_claims(client)
    url = "/v1/corpora/claims/rank"
    assert client.post("/v1/corpora/nope/rank", json={"query": "q"}).status_code == 404
    for k in (0, 1001):
        response = client.post(url, json={"query": "q", "k": k})
        assert response.status_code == 422 and response.json()["errors"][0]["field"] == "k"
    assert client.post(url, json={"query": " \n"}).status_code == 422
    too_many = client.post(url, json={"query": "q", "candidates": ["c1", "c2", "c3"]})
    assert too_many.status_code == 413 and too_many.json()["field"] == "candidates"
    too_long = client.post(url, json={"query": "q" * 61})
    assert too_long.status_code == 413 and too_long.json()["field"] == "query"


def test_rank_inline_documents(make_client: ClientFactory) -> None:
    client = make_client(max_documents_per_request=3)
    texts = ["Vaccines cause autism.", "The moon landing was staged.", "Sharks on highways."]
    body = client.post("/v1/rank", json={"query": "The moon landing was staged.", "documents": texts}).json()
    assert body["results"][0] == {"id": 1, "text": texts[1], "score": body["results"][0]["score"], "rank": 1}
    assert sorted(r["id"] for r in body["results"]) == [0, 1, 2] and body["model"]
    assert (
        len(client.post("/v1/rank", json={"query": "q", "documents": texts, "k": 2}).json()["results"]) == 2
    )
    too_many = client.post("/v1/rank", json={"query": "q", "documents": texts + ["x"]})
    assert too_many.status_code == 413 and too_many.json()["limit"] == 3
    assert client.post("/v1/rank", json={"query": "q", "documents": []}).status_code == 422
    assert client.post("/v1/rank", json={"query": "q", "documents": ["ok", ""]}).status_code == 422


def test_duplicates_threshold_and_self_exclusion(client: TestClient) -> None:
    add_claims(client)
    url = "/v1/corpora/claims/duplicates"
    exact = client.post(url, json={"text": CLAIMS[1][1], "threshold": 0.99}).json()
    assert exact["threshold"] == 0.99 and exact["model"]
    assert [d["id"] for d in exact["results"][0]["duplicates"]] == ["c2"]
    own = client.post(url, json={"texts": [{"id": "c2", "text": CLAIMS[1][1]}], "threshold": 0.99}).json()
    assert own["results"][0]["duplicates"] == []
    by_id = client.post(url, json={"ids": ["c2"], "threshold": -1.0, "k": 10}).json()
    assert "c2" not in [d["id"] for d in by_id["results"][0]["duplicates"]]
    assert len(by_id["results"][0]["duplicates"]) == 4
    default = client.post(url, json={"texts": ["anything at all"]}).json()
    assert default["threshold"] == 0.8
    # A claim corpus ranks hybrid by default; the threshold applies to the cosine (dense_score).
    assert default["ranking"] == {"mode": "hybrid", "alpha": 0.2, "fusion": "linear"}
    assert all(d["dense_score"] >= 0.8 for d in default["results"][0]["duplicates"])


def test_duplicates_errors(client: TestClient) -> None:
    add_claims(client)
    url = "/v1/corpora/claims/duplicates"
    assert client.post(url, json={"text": "x", "threshold": 1.5}).status_code == 422
    assert client.post(url, json={"text": "x", "threshold": -1.01}).status_code == 422
    neither = client.post(url, json={"threshold": 0.5})
    assert neither.status_code == 422 and "exactly one" in neither.json()["detail"]
    assert client.post(url, json={"text": "x", "texts": ["y"]}).status_code == 422
    assert client.post(url, json={"ids": ["zz"]}).status_code == 404
    assert client.post("/v1/corpora/nope/duplicates", json={"text": "x"}).status_code == 404


def test_similarity_pairs_and_targets(make_client: ClientFactory) -> None:
    client = make_client(max_pairs_per_request=2)
    pairs = [{"a": "the moon landing", "b": "the moon landing"}, {"a": "the moon", "b": "sharks"}]
    body = client.post("/v1/similarity", json={"pairs": pairs}).json()
    assert math.isclose(body["scores"][0], 1.0, abs_tol=1e-5) and body["scores"][1] < 1.0 and body["model"]
    swapped = client.post("/v1/similarity", json={"pairs": [{"a": "sharks", "b": "the moon"}]}).json()
    assert math.isclose(swapped["scores"][0], body["scores"][1], abs_tol=1e-6)
    targets = client.post(
        "/v1/similarity", json={"source": "the moon", "targets": ["sharks", "the moon"]}
    ).json()
    assert math.isclose(targets["scores"][0], body["scores"][1], abs_tol=1e-6) and len(targets["scores"]) == 2
    assert client.post("/v1/similarity", json={"pairs": pairs * 2}).status_code == 413
    assert client.post("/v1/similarity", json={"pairs": pairs, "source": "x"}).status_code == 422
    assert client.post("/v1/similarity", json={"source": "x"}).status_code == 422
    assert client.post("/v1/similarity", json={"pairs": [{"a": "", "b": "x"}]}).status_code == 422
