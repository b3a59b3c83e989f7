"""Judgements (the console's judge buttons): one pair per (query, document), updated in place, with who
judged it and when; the judged-query count; who sent pairs (both databases)."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory, add_claims
from tests.api.test_security import ADMIN, new_key

URL = "/v1/corpora/claims/pairs/judgement"
QUERY = "was the moon landing filmed in a studio?"


def test_a_judgement_is_stored_then_changed_in_place(client: TestClient) -> None:
    add_claims(client)
    first = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 1})
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["created"] is True and body["pair"]["label"] == 1 and body["pair"]["document_id"] == "c1"
    assert body["pair"]["judged_by"] == "anonymous" and body["pair"]["updated_at"] is None
    assert body["counts"]["total"] == 1 and body["counts"]["queries"] == 1
    # Visible at once through the pairs API.
    listed = client.get("/v1/corpora/claims/pairs").json()
    assert [(p["id"], p["label"]) for p in listed["pairs"]] == [(body["pair"]["id"], 1)]

    changed = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 0}).json()
    assert changed["created"] is False and changed["pair"]["id"] == body["pair"]["id"]
    assert changed["pair"]["label"] == 0 and changed["pair"]["updated_at"] is not None
    assert changed["pair"]["created_at"] == body["pair"]["created_at"]  # forward validation's clock
    assert changed["counts"] == {**body["counts"], "positive": 0, "negative": 1}

    other = client.put(URL, json={"query": QUERY, "document_id": "c2", "label": 0}).json()
    assert other["created"] is True and other["counts"]["total"] == 2 and other["counts"]["queries"] == 1
    client.put(URL, json={"query": "bleach cures covid", "document_id": "c2", "label": 1})
    of_query = client.get("/v1/corpora/claims/pairs", params={"query": QUERY}).json()
    assert sorted(p["document_id"] for p in of_query["pairs"]) == ["c1", "c2"]
    assert of_query["counts"]["queries"] == 2 and of_query["counts"]["total"] == 3


def test_judgement_errors_change_nothing(client: TestClient) -> None:
    add_claims(client)
    unknown = client.put(URL, json={"query": QUERY, "document_id": "nope", "label": 1})
    assert unknown.status_code == 404 and unknown.json()["field"] == "document_id"
    assert "nope" in unknown.json()["detail"]
    blank = client.put(URL, json={"query": " ", "document_id": "c1", "label": 1})
    assert blank.status_code == 422 and blank.json()["errors"][0]["field"] == "query"
    missing = client.put(URL, json={"query": QUERY, "label": 1})
    assert missing.status_code == 422 and missing.json()["errors"][0]["field"] == "document_id"
    assert (
        client.put(
            "/v1/corpora/nope/pairs/judgement", json={"query": QUERY, "document_id": "c1", "label": 1}
        ).status_code
        == 404
    )
    assert client.get("/v1/corpora/claims/pairs").json()["counts"]["total"] == 0


def test_concurrent_judgements_of_one_pair_make_one_pair(client: TestClient) -> None:
    add_claims(client)

    def judge(label: int) -> None:
        assert client.put(URL, json={"query": QUERY, "document_id": "c3", "label": label}).status_code == 200

    threads = [threading.Thread(target=judge, args=(n % 2,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert client.get("/v1/corpora/claims/pairs").json()["counts"]["total"] == 1


def test_pairs_record_the_key_that_judged_them(make_client: ClientFactory) -> None:
    client = make_client(auth="required", admin_api_key="admin-from-env")
    client.headers.update(ADMIN)
    add_claims(client)
    del client.headers["Authorization"]
    writer = new_key(client, "write", ["claims"])
    key_id = writer["Authorization"].split("_")[1]
    judged = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 1}, headers=writer).json()
    assert judged["pair"]["judged_by"] == key_id
    again = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 1}, headers=ADMIN).json()
    assert again["pair"]["judged_by"] == "admin-key" and again["pair"]["id"] == judged["pair"]["id"]
    pairs = {"pairs": [{"query": "flat earth", "document_id": "c4", "label": 1}]}
    assert client.post("/v1/corpora/claims/pairs", json=pairs, headers=writer).status_code == 201
    listed = client.get("/v1/corpora/claims/pairs", headers=writer).json()["pairs"]
    assert [p["judged_by"] for p in listed] == ["admin-key", key_id]
    reader = new_key(client, "read")
    refused = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 0}, headers=reader)
    assert refused.status_code == 403 and refused.json()["field"] == "scope"
