"""Any valid document id is addressable in a URL once percent-encoded, over real HTTP (uvicorn decodes
a path once; Starlette's TestClient would decode it twice, so this needs a real server)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.helpers.processes import ServerFactory

pytestmark = pytest.mark.postgres
AWKWARD = [
    ".",
    "..",
    "/lead",
    "trail/",
    "a?b#c",
    "%41",
    "a/../b",
    "https://x.org/a?b=1&c",
    "ümlaut é",
    "a+b c",
]


def encoded(doc_id: str) -> str:
    """The docs' rule (concepts/corpora.md): percent-encode everything but letters, digits, `-`, `_`, `~`."""
    return quote(doc_id, safe="").replace(".", "%2E")


def test_awkward_ids_round_trip_through_urls(start_server: ServerFactory) -> None:
    http = start_server().http
    assert http.post("/v1/corpora", json={"name": "c", "kind": "claim"}).status_code == 201
    documents = [
        {"id": doc_id, "text": f"claim number {i} about carrots"} for i, doc_id in enumerate(AWKWARD)
    ]
    assert http.post("/v1/corpora/c/documents", json={"documents": documents}).status_code == 200
    for doc_id in AWKWARD:
        got = http.get(f"/v1/corpora/c/documents/{encoded(doc_id)}")
        assert got.status_code == 200 and got.json()["id"] == doc_id, (doc_id, got.text)
    ranked = http.post("/v1/corpora/c/rank", json={"query": "claim about carrots", "k": len(AWKWARD)}).json()
    assert sorted(r["id"] for r in ranked["results"]) == sorted(AWKWARD)
    for doc_id in AWKWARD:
        assert http.delete(f"/v1/corpora/c/documents/{encoded(doc_id)}").status_code == 204, doc_id
    assert http.get("/v1/corpora/c").json()["document_count"] == 0
    # An unencoded `..` is rewritten by the client to the corpus itself: without `confirm` nothing happens.
    refused = http.delete("/v1/corpora/c/documents/..")
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "confirm"
    assert http.get("/v1/corpora/c").status_code == 200
