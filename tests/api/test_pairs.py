"""Training pairs: store (all or nothing), list with counts, deterministic split, delete."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory, add_claims

PAIRS = [
    {"query": "was the moon landing fake", "document_id": "c1", "label": 1},
    {"query": "bleach and covid", "document_id": "c2", "label": 1},
    {"query": "bleach and covid", "document_id": "c3", "label": 0},
    {"query": "flat earth", "document": "The earth is flat and NASA hides it.", "label": 1, "split": "dev"},
]


def test_add_list_split_delete(client: TestClient) -> None:
    add_claims(client)
    added = client.post("/v1/corpora/claims/pairs", json={"pairs": PAIRS})
    assert added.status_code == 201
    assert added.json() == {
        "added": 4,
        "total": 4,
        "queries": 3,
        "positive": 3,
        "negative": 1,
        "train": 0,
        "dev": 1,
        "unsplit": 3,
    }
    listed = client.get("/v1/corpora/claims/pairs").json()
    assert [p["query"] for p in listed["pairs"]] == [p["query"] for p in PAIRS]
    assert (
        listed["pairs"][3]["document"].startswith("The earth") and listed["pairs"][0]["document_id"] == "c1"
    )
    assert [p["split"] for p in client.get("/v1/corpora/claims/pairs?split=dev").json()["pairs"]] == ["dev"]
    split = client.post("/v1/corpora/claims/pairs/split", json={"dev_fraction": 0.5, "seed": 3}).json()
    assert split["unsplit"] == 0 and split["train"] + split["dev"] == 4
    again = client.post("/v1/corpora/claims/pairs/split", json={"dev_fraction": 0.5, "seed": 3}).json()
    assert again == split
    by_query = {p["query"]: p["split"] for p in client.get("/v1/corpora/claims/pairs").json()["pairs"]}
    assert len(set(by_query.values())) >= 1 and len(by_query) == 3  # both bleach pairs share one side
    pair_id = listed["pairs"][0]["id"]
    assert client.delete(f"/v1/corpora/claims/pairs/{pair_id}").status_code == 204
    assert client.delete(f"/v1/corpora/claims/pairs/{pair_id}").status_code == 404
    assert client.get("/v1/corpora/claims/pairs").json()["counts"]["total"] == 3


def test_pair_errors(make_client: ClientFactory) -> None:
    client = make_client(max_pairs_per_request=4)
    add_claims(client)
    url = "/v1/corpora/claims/pairs"
    unknown = client.post(url, json={"pairs": [*PAIRS[:1], {"query": "q", "document_id": "zz", "label": 1}]})
    assert unknown.status_code == 404 and "zz" in unknown.json()["detail"]
    both = client.post(
        url, json={"pairs": [{"query": "q", "document_id": "c1", "document": "x", "label": 1}]}
    )
    assert both.status_code == 422 and "exactly one" in both.json()["detail"]
    assert (
        client.post(url, json={"pairs": [{"query": " ", "document_id": "c1", "label": 1}]}).status_code == 422
    )
    assert client.post(url, json={"pairs": PAIRS + PAIRS[:1]}).status_code == 413
    assert client.post("/v1/corpora/nope/pairs", json={"pairs": PAIRS}).status_code == 404
    assert client.get(url).json()["counts"]["total"] == 0  # nothing from the failed requests was stored
    assert client.post(f"{url}/split", json={"dev_fraction": 1.5}).status_code == 422
