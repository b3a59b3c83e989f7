"""Judgements by several judges: one row per (pair, judge), the aggregate every reader uses, listing with
filters and cursors, editing and deleting your own, the scale, and agreement (both databases)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory, add_claims
from tests.api.test_security import ADMIN, new_key

URL = "/v1/corpora/claims/pairs/judgement"
LIST = "/v1/corpora/claims/judgements"
QUERY = "was the moon landing filmed in a studio?"


def team(
    make_client: ClientFactory, scale: str = "binary"
) -> tuple[TestClient, dict[str, str], dict[str, str]]:
    """A client with auth, a claims corpus on `scale`, and two judges' write keys."""
    client = make_client(auth="required", admin_api_key="admin-from-env")
    client.headers.update(ADMIN)
    assert (
        client.post(
            "/v1/corpora", json={"name": "claims", "kind": "claim", "judgement_scale": scale}
        ).status_code
        == 201
    )
    add_documents = {
        "documents": [{"id": f"c{i}", "text": f"claim number {i} about the moon"} for i in range(1, 6)]
    }
    assert client.post("/v1/corpora/claims/documents", json=add_documents).status_code == 200
    del client.headers["Authorization"]
    return client, new_key(client, "write", ["claims"]), new_key(client, "write", ["claims"])


def key_id(headers: dict[str, str]) -> str:
    """The key id of an Authorization header."""
    return headers["Authorization"].split("_")[1]


def judge(client: TestClient, who: dict[str, str], doc: str, label: Any, **extra: Any) -> dict[str, Any]:
    """PUT a judgement as `who`; returns the body (asserting 200)."""
    response = client.put(
        URL, json={"query": QUERY, "document_id": doc, "label": label, **extra}, headers=who
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_two_judges_on_one_pair_are_both_kept_and_aggregated(make_client: ClientFactory) -> None:
    client, ana, ben = team(make_client)
    first = judge(client, ana, "c1", 1, note="same claim, other words")
    assert first["created"] and first["judgement"]["judged_by"] == key_id(ana)
    assert first["judgement"]["note"] == "same claim, other words"
    second = judge(client, ben, "c1", 0)
    assert not second["created"] and second["pair"]["id"] == first["pair"]["id"]
    # A tie takes the lower grade and is flagged.
    assert second["pair"]["label"] == 0 and second["pair"]["disagreement"] is True
    rows = client.get(LIST, headers=ana).json()
    assert [(j["judged_by"], j["grade"]) for j in rows["judgements"]] == [(key_id(ana), 1), (key_id(ben), 0)]
    assert rows["next_cursor"] is None
    # GET pairs shows the one pair with its aggregate.
    pairs = client.get("/v1/corpora/claims/pairs", headers=ana).json()
    assert [(p["label"], p["disagreement"]) for p in pairs["pairs"]] == [(0, True)]
    # A third vote makes a majority; unsure gives no vote.
    admin = judge(client, ADMIN, "c1", 1)
    assert admin["pair"]["label"] == 1 and admin["pair"]["disagreement"] is True
    unsure = judge(client, ADMIN, "c2", None, unsure=True)
    assert unsure["judgement"]["unsure"] is True and unsure["pair"]["label"] is None
    listed = client.get("/v1/corpora/claims/pairs", headers=ana).json()
    assert listed["counts"]["total"] == 1  # the pair every judge was unsure of is not a training pair
    # Filters and cursors.
    assert len(client.get(LIST, params={"judged_by": key_id(ben)}, headers=ana).json()["judgements"]) == 1
    assert len(client.get(LIST, params={"disagreement": True}, headers=ana).json()["judgements"]) == 3
    assert len(client.get(LIST, params={"unsure": True}, headers=ana).json()["judgements"]) == 1
    assert len(client.get(LIST, params={"grade": 1}, headers=ana).json()["judgements"]) == 2
    page = client.get(LIST, params={"limit": 3}, headers=ana).json()
    rest = client.get(LIST, params={"limit": 3, "cursor": page["next_cursor"]}, headers=ana).json()
    assert len(page["judgements"]) == 3 and len(rest["judgements"]) == 1 and rest["next_cursor"] is None
    assert client.get(LIST, params={"limit": 501}, headers=ana).json()["errors"][0]["field"] == "limit"
    bad = client.get(LIST, params={"cursor": "x"}, headers=ana)
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "cursor"


def test_edit_and_delete_only_your_own(make_client: ClientFactory) -> None:
    client, ana, ben = team(make_client)
    mine = judge(client, ana, "c1", 1)["judgement"]
    judge(client, ben, "c1", 1)
    theirs = client.patch(f"{LIST}/{mine['id']}", json={"label": 0}, headers=ben)
    assert theirs.status_code == 403 and theirs.json()["field"] == "judged_by"
    assert client.delete(f"{LIST}/{mine['id']}", headers=ben).status_code == 403
    edited = client.patch(f"{LIST}/{mine['id']}", json={"label": 0, "note": "on reflection"}, headers=ana)
    assert edited.status_code == 200, edited.text
    assert edited.json()["grade"] == 0 and edited.json()["note"] == "on reflection"
    assert edited.json()["aggregate"] == 0 and edited.json()["disagreement"] is True
    off_scale = client.patch(f"{LIST}/{mine['id']}", json={"label": 2}, headers=ana)
    assert off_scale.status_code == 422 and off_scale.json()["field"] == "label"
    assert "binary" in off_scale.json()["detail"]
    assert client.delete(f"{LIST}/{mine['id']}", headers=ana).status_code == 204
    pairs = client.get("/v1/corpora/claims/pairs", headers=ana).json()["pairs"]
    assert [(p["label"], p["disagreement"]) for p in pairs] == [(1, False)]
    assert client.get(LIST, headers=ana).json()["judgements"][0]["judged_by"] == key_id(ben)
    assert client.patch(f"{LIST}/999999", json={"label": 1}, headers=ana).status_code == 404
    # The last judgement of a pair takes the pair with it.
    only = client.get(LIST, headers=ben).json()["judgements"][0]
    assert client.delete(f"{LIST}/{only['id']}", headers=ben).status_code == 204
    assert client.get("/v1/corpora/claims/pairs", headers=ana).json()["counts"]["total"] == 0


def test_grades_follow_the_corpus_scale(make_client: ClientFactory) -> None:
    client, ana, ben = team(make_client, scale="graded")
    assert client.get("/v1/corpora/claims", headers=ana).json()["judgement_scale"] == "graded"
    judge(client, ana, "c1", 3)
    judge(client, ben, "c1", 2)
    assert client.get("/v1/corpora/claims/pairs", headers=ana).json()["pairs"][0]["label"] == 2
    refused = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 4}, headers=ana)
    assert refused.status_code == 422 and refused.json()["field"] == "label"
    assert "0, 1, 2, 3" in refused.json()["detail"]
    missing = client.put(URL, json={"query": QUERY, "document_id": "c1"}, headers=ana)
    assert missing.status_code == 422 and missing.json()["field"] == "label"


def test_binary_scale_refuses_other_grades(client: TestClient) -> None:
    add_claims(client)
    refused = client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 0.5})
    assert refused.status_code == 422 and refused.json()["field"] == "label"
    assert client.get("/v1/corpora/claims/pairs").json()["counts"]["total"] == 0


def test_agreement_is_cohens_kappa_by_hand(make_client: ClientFactory) -> None:
    client, ana, ben = team(make_client)
    empty = client.get(f"{LIST}/agreement", headers=ana).json()
    assert empty["alpha"] is None and empty["pairs"] == [] and empty["shared_pairs"] == 0
    # Ana: 1 1 0 0, Ben: 1 0 0 0. Observed agreement 3/4; chance (1/2)(1/4) + (1/2)(3/4) = 1/2;
    # kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2.
    for doc, a, b in (("c1", 1, 1), ("c2", 1, 0), ("c3", 0, 0), ("c4", 0, 0)):
        judge(client, ana, doc, a)
        judge(client, ben, doc, b)
    judge(client, ADMIN, "c5", 1)  # the admin judges alone: no overlap with anyone
    body = client.get(f"{LIST}/agreement", headers=ana).json()
    by_pair = {tuple(p["judges"]): p for p in body["pairs"]}
    pair = by_pair[tuple(sorted((key_id(ana), key_id(ben))))]
    assert pair["overlap"] == 4 and abs(pair["kappa"] - 0.5) < 1e-9
    assert all(p["kappa"] is None and p["overlap"] == 0 for k, p in by_pair.items() if "admin-key" in k)
    assert body["graded_pairs"] == 5 and body["shared_pairs"] == 4 and body["disagreements"] == 1
    assert body["scale"] == "binary" and 0 < body["alpha"] < 1
    assert len(body["judges"]) == 3


def test_changing_the_scale_keeps_every_judgement_on_it(client: TestClient) -> None:
    add_claims(client)
    scale = "/v1/corpora/claims/judgements/scale"
    assert client.put(scale, json={"judgement_scale": "graded"}).json() == {"judgement_scale": "graded"}
    assert client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 3}).status_code == 200
    refused = client.put(scale, json={"judgement_scale": "binary"})
    assert refused.status_code == 409 and refused.json()["field"] == "judgement_scale"
    assert "1 judgements" in refused.json()["detail"]
    assert client.put(URL, json={"query": QUERY, "document_id": "c1", "label": 1}).status_code == 200
    assert client.put(scale, json={"judgement_scale": "binary"}).status_code == 200
    assert client.get("/v1/corpora/claims").json()["judgement_scale"] == "binary"
    bad = client.put(scale, json={"judgement_scale": "stars"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "judgement_scale"
