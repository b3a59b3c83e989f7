"""Corpora and documents endpoints, including every error case and all-or-nothing upserts."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import CLAIMS, ClientFactory, add_claims


def test_create_list_get_delete_corpus(client: TestClient) -> None:
    created = client.post(
        "/v1/corpora", json={"name": "snopes", "kind": "claim", "description": "fact checks"}
    )
    assert created.status_code == 201
    assert created.json()["name"] == "snopes" and created.json()["document_count"] == 0
    assert [c["name"] for c in client.get("/v1/corpora").json()["corpora"]] == ["snopes"]
    assert client.get("/v1/corpora/snopes").json()["description"] == "fact checks"
    assert client.delete("/v1/corpora/snopes?confirm=snopes").status_code == 204
    missing = client.get("/v1/corpora/snopes")
    assert missing.status_code == 404 and "snopes" in missing.json()["detail"]


def test_corpus_errors(client: TestClient) -> None:
    assert client.post("/v1/corpora", json={"name": "a", "kind": "claim"}).status_code == 201
    taken = client.post("/v1/corpora", json={"name": "a", "kind": "answer"})
    assert taken.status_code == 409 and "already exists" in taken.json()["detail"]
    bad_kind = client.post("/v1/corpora", json={"name": "b", "kind": "tweet"})
    assert bad_kind.status_code == 422 and "kind" in bad_kind.json()["detail"]
    bad_name = client.post("/v1/corpora", json={"name": "has space", "kind": "claim"})
    assert bad_name.status_code == 422 and bad_name.json()["errors"][0]["field"] == "name"
    assert client.delete("/v1/corpora/nope?confirm=nope").status_code == 404


def test_index_storage_is_vector_halfvec_or_bit(client: TestClient) -> None:
    for storage in ("halfvec", "bit"):
        spec = {"name": storage, "kind": "claim", "index": {"type": "hnsw", "storage": storage}}
        assert client.post("/v1/corpora", json=spec).status_code == 201
        assert client.get(f"/v1/corpora/{storage}").json()["index"]["storage"] == storage
    bad_storage = {"name": "b", "kind": "claim", "index": {"type": "auto", "storage": "int8"}}
    bad = client.post("/v1/corpora", json=bad_storage)
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "index.auto.storage"


def test_upsert_counts_and_document_round_trip(client: TestClient) -> None:
    add_claims(client)
    body = {
        "documents": [
            {"id": "c1", "text": CLAIMS[0][1]},
            {"id": "c2", "text": "An edited claim about bleach.", "metadata": {"verdict": "false"}},
            {"id": "c9", "text": "A brand new claim about carrots."},
        ]
    }
    counts = client.post("/v1/corpora/claims/documents", json=body).json()
    assert (counts["inserted"], counts["updated"], counts["unchanged"]) == (1, 1, 1)
    assert counts["document_count"] == 6 and counts["model"]
    document = client.get("/v1/corpora/claims/documents/c2").json()
    assert document["text"] == "An edited claim about bleach." and document["metadata"] == {
        "verdict": "false"
    }
    assert client.get("/v1/corpora/claims").json()["document_count"] == 6
    assert client.delete("/v1/corpora/claims/documents/c2").status_code == 204
    assert client.get("/v1/corpora/claims/documents/c2").status_code == 404
    assert client.delete("/v1/corpora/claims/documents/c2").status_code == 404
    assert client.get("/v1/corpora/claims").json()["document_count"] == 5


def test_document_errors(client: TestClient) -> None:
    add_claims(client)
    url = "/v1/corpora/claims/documents"
    unknown = client.post("/v1/corpora/nope/documents", json={"documents": [{"id": "x", "text": "t"}]})
    assert unknown.status_code == 404
    empty = client.post(url, json={"documents": [{"id": "x", "text": "   "}]})
    assert empty.status_code == 422 and empty.json()["errors"][0]["field"] == "documents[0].text"
    assert client.post(url, json={"documents": []}).status_code == 422
    # An id given twice in one request: the later occurrence wins.
    twice = client.post(url, json={"documents": [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}]})
    assert twice.status_code == 200 and twice.json()["inserted"] == 1
    assert client.get(f"{url}/x").json()["text"] == "b"
    assert client.get("/v1/corpora/claims/documents/unknown").status_code == 404


def test_limits_give_413_and_change_nothing(make_client: ClientFactory) -> None:
    client = make_client(max_text_chars=100, max_documents_per_request=3)
    assert client.post("/v1/corpora", json={"name": "claims", "kind": "claim"}).status_code == 201
    url = "/v1/corpora/claims/documents"
    assert (
        client.post(url, json={"documents": [{"id": i, "text": t} for i, t in CLAIMS[:3]]}).status_code == 200
    )
    too_long = client.post(
        url, json={"documents": [{"id": "new", "text": "ok"}, {"id": "c1", "text": "x" * 101}]}
    )
    assert too_long.status_code == 413
    assert too_long.json()["field"] == "documents[1].text" and too_long.json()["limit"] == 100
    too_many = client.post(url, json={"documents": [{"id": f"d{i}", "text": "t"} for i in range(4)]})
    assert too_many.status_code == 413 and "limit of 3 documents" in too_many.json()["detail"]
    # All or nothing: neither the short new document nor the edit of c1 was stored.
    assert client.get("/v1/corpora/claims/documents/new").status_code == 404
    assert client.get("/v1/corpora/claims/documents/c1").json()["text"] == CLAIMS[0][1]
    assert client.get("/v1/corpora/claims").json()["document_count"] == 3


def test_request_body_limit(make_client: ClientFactory) -> None:
    client = make_client(max_request_bytes=2048)
    response = client.post("/v1/rank", json={"query": "q", "documents": ["x" * 4000]})
    assert response.status_code == 413 and response.json()["field"] == "body"


def test_malformed_json_is_422(client: TestClient) -> None:
    response = client.post("/v1/corpora", content=b'{"name": ', headers={"content-type": "application/json"})
    assert response.status_code == 422 and "malformed JSON" in response.json()["detail"]
