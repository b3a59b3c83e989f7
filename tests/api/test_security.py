"""Keys, scopes, corpus limits and rate limits over HTTP, with auth required, on both databases."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.usecases.api_keys import ApiKeyService
from tests.api.conftest import ClientFactory, add_claims

ADMIN = {"Authorization": "Bearer admin-from-env"}
PUBLIC = {("GET", "/health"), ("GET", "/ready")}
# Operations that only read although they are POSTs: ranking is what a read key is for.
READ_POSTS = {
    "/v1/corpora/{name}/rank",
    "/v1/rank",
    "/v1/corpora/{name}/duplicates",
    "/v1/corpora/{name}/match",
    "/v1/similarity",
    "/v1/corpora/{name}/compare",
    "/v1/corpora/{name}/compare/metrics",
}


def expected_scope(method: str, path: str) -> str:
    """The scope the issue assigns: admin under /admin, read for GETs and ranking, write otherwise."""
    if path.startswith("/admin"):
        return "admin"
    return "read" if method == "GET" or path in READ_POSTS else "write"


@pytest.fixture
def secured(make_client: ClientFactory) -> TestClient:
    """Auth required, an environment admin key, corpora `claims` (five claims) and `other`."""
    client = make_client(auth="required", admin_api_key="admin-from-env")
    client.headers.update(ADMIN)
    add_claims(client)
    assert client.post("/v1/corpora", json={"name": "other", "kind": "claim"}).status_code == 201
    del client.headers["Authorization"]
    return client


def new_key(client: TestClient, scope: str, corpora: list[str] | None = None) -> dict[str, str]:
    """Create a key through the admin API; returns the headers that send it."""
    body: dict[str, Any] = {"scope": scope, **({"corpora": corpora} if corpora else {})}
    response = client.post("/admin/keys", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['key']}"}


def operations(client: TestClient) -> list[tuple[str, str, dict[str, Any]]]:
    """Every operation of the served schema: (method, path, operation)."""
    paths = client.get("/openapi.json").json()["paths"]
    return [(method.upper(), path, op) for path, ops in paths.items() for method, op in ops.items()]


def concrete(path: str) -> str:
    """A path template with its parameters filled (claims, an unknown id)."""
    return (
        path.replace("{name}", "claims")
        .replace("{version}", "m")
        .replace("{key_id}", "abc")
        .format(
            doc_id="c1",
            job_id="x1",
            evaluation_id="x1",
            pair_id="1",
            judgement_id="1",
            set_name="s1",
            cluster_id="1",
        )
    )


def test_every_operation_declares_the_scope_it_needs(secured: TestClient) -> None:
    # A route added without READ/WRITE/ADMIN has no security requirement and fails here.
    seen = 0
    for method, path, operation in operations(secured):
        if (method, path) in PUBLIC:
            assert "security" not in operation
            continue
        assert operation.get("x-pairank-scope") == expected_scope(method, path), (method, path)
        requirement = operation["security"]
        assert {"HTTPBearer", "APIKeyHeader"} == {name for each in requirement for name in each}
        assert {"401", "403", "429"} <= set(operation["responses"]), (method, path)
        seen += 1
    assert seen >= 35
    schemes = secured.get("/openapi.json").json()["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer" and schemes["APIKeyHeader"]["name"] == "X-API-Key"


def test_every_operation_enforces_its_scope(secured: TestClient) -> None:
    # The schema's claim, checked against behaviour: no key -> 401; the scope below -> 403.
    below = {"write": new_key(secured, "read"), "admin": new_key(secured, "write")}
    for method, path, _ in operations(secured):
        if (method, path) in PUBLIC:
            continue
        url = concrete(path) + (
            "?confirm=claims" if method == "DELETE" and path == "/v1/corpora/{name}" else ""
        )
        body = {"json": {}} if method == "POST" else {}
        anonymous = secured.request(method, url, **body)
        assert anonymous.status_code == 401, (method, path, anonymous.text)
        assert anonymous.json()["field"] == "Authorization"
        assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")
        scope = expected_scope(method, path)
        if scope in below:
            refused = secured.request(method, url, headers=below[scope], **body)
            assert refused.status_code == 403, (method, path, refused.text)
            assert refused.json()["field"] == "scope" and repr(scope) in refused.json()["detail"]
    assert secured.get("/v1/corpora/claims").status_code == 401  # nothing above changed anything
    assert secured.get("/v1/corpora/claims", headers=ADMIN).json()["document_count"] == 5


def test_scopes_nest(secured: TestClient) -> None:
    reader, writer = new_key(secured, "read"), new_key(secured, "write")
    document = {"documents": [{"id": "c9", "text": "Onions in socks cure the flu."}]}
    query = {"query": "moon landing staged", "k": 1}
    assert secured.post("/v1/corpora/claims/rank", json=query, headers=reader).status_code == 200
    assert secured.get("/v1/corpora/claims/documents/c1", headers=reader).status_code == 200
    refused = secured.post("/v1/corpora/claims/documents", json=document, headers=reader)
    assert refused.status_code == 403 and "'write'" in refused.json()["detail"]
    assert secured.post("/v1/corpora/claims/documents", json=document, headers=writer).status_code == 200
    assert secured.post("/v1/corpora/claims/rank", json=query, headers=writer).status_code == 200
    assert secured.get("/admin/jobs", headers=writer).status_code == 403
    admin = new_key(secured, "admin")
    assert secured.get("/admin/jobs", headers=admin).status_code == 200
    assert secured.post("/v1/corpora/claims/rank", json=query, headers=admin).status_code == 200
    # X-API-Key keeps working.
    key = writer["Authorization"].removeprefix("Bearer ")
    assert secured.get("/v1/corpora", headers={"X-API-Key": key}).status_code == 200


def test_corpus_limited_keys(secured: TestClient) -> None:
    limited = new_key(secured, "write", ["claims"])
    query = {"query": "moon landing staged", "k": 1}
    assert secured.post("/v1/corpora/claims/rank", json=query, headers=limited).status_code == 200
    refused = secured.post("/v1/corpora/other/rank", json=query, headers=limited)
    assert refused.status_code == 403 and refused.json()["field"] == "corpus"
    assert "'other'" in refused.json()["detail"]
    # Corpora named in bodies and listings obey the same limit.
    assert [c["name"] for c in secured.get("/v1/corpora", headers=limited).json()["corpora"]] == ["claims"]
    created = secured.post("/v1/corpora", json={"name": "third", "kind": "claim"}, headers=limited)
    assert created.status_code == 403 and created.json()["field"] == "corpus"
    evaluation = {"corpus": "other", "queries": [{"id": "q", "text": "x"}],
                  "qrels": [{"query_id": "q", "document_id": "c1", "relevance": 1}]}  # fmt: skip
    assert secured.post("/v1/evaluations", json=evaluation, headers=limited).status_code == 403
    assert secured.delete("/v1/corpora/other?confirm=other", headers=limited).status_code == 403
    assert secured.get("/v1/corpora/other", headers=ADMIN).status_code == 200


def test_unknown_malformed_and_revoked_keys_get_401(secured: TestClient) -> None:
    writer = new_key(secured, "write")
    for headers in (
        {"Authorization": "Bearer prk_nope"},
        {"X-API-Key": "wrong"},
        {"Authorization": "Basic eA=="},
    ):
        response = secured.get("/v1/corpora", headers=headers)
        assert response.status_code == 401 and response.json()["field"] == "Authorization", headers
    key_id = writer["Authorization"].split("_")[1]
    assert secured.get("/v1/corpora", headers=writer).status_code == 200
    revoked = secured.delete(f"/admin/keys/{key_id}", headers=ADMIN)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    response = secured.get("/v1/corpora", headers=writer)
    assert response.status_code == 401 and "revoked" in response.json()["detail"]
    listed = secured.get("/admin/keys", headers=ADMIN).json()["keys"]
    assert all("key" not in k and "key_hash" not in k and "salt" not in k for k in listed)
    assert secured.delete("/admin/keys/ffffffffffff", headers=ADMIN).status_code == 404


def test_revocation_reaches_another_worker_within_its_key_cache_window(make_client: ClientFactory) -> None:
    first = make_client(auth="required", admin_api_key="admin-from-env")
    second = make_client(auth="required", admin_api_key="admin-from-env", key_cache_seconds=1.0)
    writer = new_key(first, "write")
    assert second.get("/v1/corpora", headers=writer).status_code == 200
    first.delete(f"/admin/keys/{writer['Authorization'].split('_')[1]}", headers=ADMIN)
    assert first.get("/v1/corpora", headers=writer).status_code == 401  # revoked through it: at once
    assert second.get("/v1/corpora", headers=writer).status_code == 200  # remembered, for 1 s at most
    time.sleep(1.1)
    assert second.get("/v1/corpora", headers=writer).status_code == 401


def test_without_a_key_cache_revocation_reaches_another_worker_at_once(make_client: ClientFactory) -> None:
    first = make_client(auth="required", admin_api_key="admin-from-env")
    second = make_client(auth="required", admin_api_key="admin-from-env", key_cache_seconds=0)
    writer = new_key(first, "write")
    assert second.get("/v1/corpora", headers=writer).status_code == 200
    first.delete(f"/admin/keys/{writer['Authorization'].split('_')[1]}", headers=ADMIN)
    assert second.get("/v1/corpora", headers=writer).status_code == 401


def test_rate_limit_per_key(make_client: ClientFactory) -> None:
    client = make_client(auth="required", admin_api_key="admin-from-env", rate_limit=0.5, rate_burst=3)
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    _, first_key = ApiKeyService(runtime.sessions).create("read")
    _, second_key = ApiKeyService(runtime.sessions).create("read")
    first, second = ({"Authorization": f"Bearer {k}"} for k in (first_key, second_key))
    assert [client.get("/v1/corpora", headers=first).status_code for _ in range(3)] == [200, 200, 200]
    limited = client.get("/v1/corpora", headers=first)
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 2
    assert limited.json()["limit"] == 3 and limited.json()["field"] == "PAIRANK_RATE_LIMIT"
    assert client.get("/v1/corpora", headers=second).status_code == 200  # each key has its own bucket
    assert client.get("/health").status_code == 200  # probes are never limited


def test_rate_limit_per_address_without_auth(make_client: ClientFactory) -> None:
    client = make_client(rate_limit=0.5, rate_burst=2)
    assert [client.get("/v1/corpora").status_code for _ in range(3)] == [200, 200, 429]


def test_admin_keys_api_shows_the_key_once(secured: TestClient) -> None:
    created = secured.post("/admin/keys", json={"scope": "read", "name": "dashboard"}, headers=ADMIN).json()
    assert created["key"].startswith(f"prk_{created['id']}_") and created["scope"] == "read"
    listed = {k["id"]: k for k in secured.get("/admin/keys", headers=ADMIN).json()["keys"]}
    assert listed[created["id"]]["name"] == "dashboard" and "key" not in listed[created["id"]]
    bad = secured.post("/admin/keys", json={"scope": "root"}, headers=ADMIN)
    assert bad.status_code == 422 and "scope" in bad.json()["detail"]
