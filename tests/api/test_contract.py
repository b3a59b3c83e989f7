"""Regression tests for the contract failures a fuzzer found: no client input gets a 5xx or loses data."""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory, add_claims

pytestmark = pytest.mark.postgres
SURROGATE = '"abc \\ud800"'  # valid JSON, but not a valid Unicode string
RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def raw_post(client: TestClient, url: str, body: str) -> httpx.Response:
    """POST a body exactly as written (the JSON encoder would refuse to write a lone surrogate)."""
    return client.post(url, content=body.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/v1/corpora/claims/rank", f'{{"query": {SURROGATE}}}', "query"),
        (
            "/v1/corpora/claims/documents",
            '{"documents": [{"id": "d", "text": "nul \\u0000 inside"}]}',
            "documents[0].text",
        ),
        ("/v1/rank", f'{{"query": "q", "documents": ["ok", {SURROGATE}]}}', "documents[1]"),
        ("/v1/similarity", f'{{"pairs": [{{"a": {SURROGATE}, "b": "x"}}]}}', "pairs[0].a"),
        ("/v1/corpora/claims/duplicates", f'{{"text": {SURROGATE}}}', "text"),
        (
            "/v1/corpora/claims/documents",
            f'{{"documents": [{{"id": "d", "text": {SURROGATE}}}]}}',
            "documents[0].text",
        ),
        (
            "/v1/corpora/claims/documents",
            f'{{"documents": [{{"id": "d", "text": "t", "metadata": {{"k": {SURROGATE}}}}}]}}',
            "documents[0].metadata.k",
        ),
        (
            "/v1/corpora/claims/documents",
            '{"documents": [{"id": "d", "text": "t", "metadata": {"\\udc80key": 1}}]}',
            "documents[0].metadata.\\udc80key",
        ),
        (
            "/v1/evaluations",
            f'{{"corpus": "claims", "queries": [{{"id": "q", "text": {SURROGATE}}}], '
            '"qrels": [{"query_id": "q", "document_id": "c1", "relevance": 1}]}',
            "queries[0].text",
        ),
        (
            "/v1/corpora/claims/documents",
            '{"documents": [{"id": "d", "text": "t", "metadata": {"score": NaN}}]}',
            "documents[0].metadata.score",
        ),
        (
            "/v1/corpora/claims/documents",
            '{"documents": [{"id": "d", "text": "t", "metadata": {"n": 99999999999999999999}}]}',
            "documents[0].metadata.n",
        ),
    ],
)
def test_unstorable_input_is_refused_with_422_naming_the_field(
    client: TestClient, url: str, body: str, field: str
) -> None:
    add_claims(client)
    response = raw_post(client, url, body)
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field and response.json()["detail"].startswith(field)
    assert client.get("/v1/corpora/claims").json()["document_count"] == 5  # nothing was written


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"query": "caf\xe9"}', "not valid UTF-8"),
        (b"[" * 1000 + b"]" * 1000, "nested deeper than"),
        (b'{"query": "x", "k": ' + b"9" * 5000 + b"}", "integer outside the 64-bit range"),
        (b'{"query": ', "malformed JSON"),
    ],
    ids=["invalid-utf8", "deep-nesting", "huge-number", "truncated"],
)
def test_malformed_bodies_get_422_with_the_problem_named(
    client: TestClient, body: bytes, message: str
) -> None:
    add_claims(client)
    response = client.post(
        "/v1/corpora/claims/rank", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422 and message in response.json()["detail"]
    assert response.json()["errors"][0]["field"]


def test_integers_beyond_64_bits_in_paths_and_queries_get_422(client: TestClient) -> None:
    add_claims(client)
    assert client.delete("/v1/corpora/claims/pairs/99999999999999999999").status_code == 422
    assert client.get("/v1/corpora/claims/pairs?offset=9223372036854775808").status_code == 422
    assert client.get("/v1/corpora/claims/pairs?offset=9223372036854775807").status_code == 200


def test_no_write_is_ever_redirected_and_a_corpus_delete_needs_confirmation(client: TestClient) -> None:
    add_claims(client)
    # Clients rewrite `.../documents/..` to `.../claims/` (curl) or `.../claims` (httpx).
    assert client.delete("/v1/corpora/claims/", follow_redirects=True).status_code == 404
    refused = client.delete("/v1/corpora/claims")
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "confirm"
    mismatch = client.delete("/v1/corpora/claims?confirm=other")
    assert mismatch.status_code == 409 and mismatch.json()["field"] == "confirm"
    assert client.get("/v1/corpora/claims").json()["document_count"] == 5


@pytest.mark.parametrize("doc_id", [" lead", "tail ", "a\nb", "\x00"])
def test_ids_outside_the_alphabet_get_422(client: TestClient, doc_id: str) -> None:
    add_claims(client)
    body = {"documents": [{"id": doc_id, "text": "t"}]}
    response = client.post("/v1/corpora/claims/documents", json=body)
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "documents[0].id"


def test_timestamps_are_rfc3339_utc_everywhere(make_client: ClientFactory) -> None:
    client = make_client()
    created = client.post("/v1/corpora", json={"name": "c", "kind": "claim"}).json()
    fetched = client.get("/v1/corpora/c").json()
    listed = client.get("/v1/corpora").json()["corpora"][0]
    for body in (created, fetched, listed):
        assert RFC3339_UTC.match(body["created_at"]) and RFC3339_UTC.match(body["updated_at"]), body


def test_405_lists_every_allowed_method(client: TestClient) -> None:
    response = client.put("/v1/corpora/anything")
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == {"GET", "DELETE"}
    assert "allowed: DELETE, GET" in response.json()["detail"]


def test_oversized_bodies_get_413_even_when_chunked(make_client: ClientFactory) -> None:
    client = make_client(max_request_bytes=2048)

    def chunks() -> object:
        yield b'{"query": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}'

    response = client.post(
        "/v1/corpora/c/rank", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413 and response.json()["limit"] == 2048
