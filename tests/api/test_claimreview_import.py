"""ClaimReview imports over the API (SQLite, PostgreSQL, pgvector): each fixture shape, malformed records
refused naming the record and field or skipped and listed, languages kept in `multi` corpora."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.api.test_documents import wait_job

FIXTURES = Path(__file__).parents[1] / "fixtures" / "claimreview"


def upload(client: TestClient, corpus: str, name: str, media: str, **params: str) -> dict[str, Any]:
    """Import a fixture into a corpus and wait for the job to end."""
    started = client.post(
        f"/v1/corpora/{corpus}/imports",
        content=(FIXTURES / name).read_bytes(),
        headers={"content-type": media},
        params=params,
    )
    assert started.status_code == 202, started.text
    return wait_job(client, f"/v1/corpora/{corpus}/imports/{started.json()['id']}")


def documents(client: TestClient, corpus: str) -> list[dict[str, Any]]:
    """Every document of a corpus."""
    return list(client.get(f"/v1/corpora/{corpus}/documents").json()["documents"])


def test_the_schema_org_example_becomes_a_searchable_fact_check(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "checks", "kind": "claim"})
    job = upload(client, "checks", "schema_org_example.json", "application/ld+json")
    assert job["status"] == "succeeded" and job["progress"]["format"] == "claimreview", job
    (document,) = documents(client, "checks")
    assert document["text"] == "The world is flat" and document["metadata"]["verdict"] == "False"
    ranked = client.post("/v1/corpora/checks/rank", json={"query": "is the earth flat?", "k": 1}).json()
    assert ranked["results"][0]["id"] == document["id"]
    again = upload(client, "checks", "schema_org_example.json", "application/json")  # same ids: no duplicate
    assert again["progress"]["unchanged"] == 1 and len(documents(client, "checks")) == 1


def test_malformed_records_are_refused_naming_record_and_field(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "checks", "kind": "claim"})
    job = upload(client, "checks", "reviews.jsonl", "application/ld+json")
    assert job["status"] == "failed", job
    assert "record 3 (line 3): claimReviewed: missing" in job["error"]
    assert "record 4 (line 4): json: not valid JSON" in job["error"]
    assert documents(client, "checks") == []  # nothing written


def test_malformed_records_are_skipped_and_listed_when_asked(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "checks", "kind": "claim"})
    job = upload(client, "checks", "reviews.jsonl", "application/ld+json", on_error="skip")
    assert job["status"] == "succeeded" and job["progress"]["skipped"] == 2, job
    assert [(p["record"], p["field"]) for p in job["progress"]["problems"]] == [
        (3, "claimReviewed"),
        (4, "json"),
    ]
    texts = sorted(d["text"] for d in documents(client, "checks"))
    assert texts == ["A shark was photographed swimming on a flooded highway.",
                     "Drinking bleach cures the coronavirus infection."]  # fmt: skip


def test_a_page_into_a_multi_corpus_keeps_its_language(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "checks", "kind": "claim", "language": "multi"})
    assert upload(client, "checks", "publisher_page.html", "text/html")["status"] == "succeeded"
    assert upload(client, "checks", "factchecktools_claims.json", "application/json")["status"] == "succeeded"
    languages = sorted((d["language"], d["metadata"]["verdict"]) for d in documents(client, "checks"))
    assert languages == [("en", "False"), ("en", "Misleading"), ("es", "Falso"), ("es", "Falso")]


def test_a_corpus_of_one_language_keeps_in_language_as_metadata(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "checks", "kind": "claim", "language": "pt"})
    job = upload(client, "checks", "factchecktools_claims.json", "application/json")
    assert job["status"] == "succeeded" and job["progress"]["done"] == 3, job
    stored = documents(client, "checks")
    assert {d["language"] for d in stored} == {None}  # the corpus's language
    assert sorted(d["metadata"]["in_language"] for d in stored) == ["en", "en", "es"]


def test_an_upload_of_another_type_is_refused(client: TestClient) -> None:
    client.post("/v1/corpora", json={"name": "checks", "kind": "claim"})
    refused = client.post("/v1/corpora/checks/imports", content=b"x", headers={"content-type": "text/plain"})
    assert refused.status_code == 415 and refused.json()["field"] == "content-type"
    bad = client.post(
        "/v1/corpora/checks/imports?on_error=ignore",
        content=b"{}",
        headers={"content-type": "application/json"},
    )
    assert bad.status_code == 422 and "on_error" in bad.text
