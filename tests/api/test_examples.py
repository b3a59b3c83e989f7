"""Every request body in the schema has an example, and every example is accepted by a live app."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.schemas.admin import PairsCreate
from app.schemas.examples import REQUEST_EXAMPLES
from tests.api.conftest import ClientFactory, add_claims

ADMIN = {"X-API-Key": "k"}
# Sent for real below, in an order where each finds what it needs; a retraining job is only validated.
# A match needs a calibration, a calibration 20 judged queries: validated only (tests/api/test_matching.py).
NOT_SENT = {
    ("POST", "/admin/retrain"),
    ("POST", "/v1/corpora/{name}/match"),
    ("POST", "/v1/corpora/{name}/match/calibrate"),
    # A cluster's triage needs its id; tests/api/test_inbox.py sends them.
    ("POST", "/v1/inboxes/{name}/clusters/{cluster_id}/confirm"),
    ("POST", "/v1/inboxes/{name}/clusters/{cluster_id}/reject"),
    ("PUT", "/v1/inboxes/{name}/clusters/{cluster_id}/status"),
}


def test_every_request_body_has_an_example_and_it_is_accepted(make_client: ClientFactory) -> None:
    client: TestClient = make_client(admin_api_key="k")
    add_claims(client)
    # calibrate-ranking comes before /pairs in the schema and needs stored pairs to choose on.
    assert client.post("/v1/corpora/claims/pairs", json=REQUEST_EXAMPLES[PairsCreate]).status_code == 201
    # PATCH .../judgements/{id} edits the sender's own judgement.
    judged = {"query": "flat earth", "document_id": "c4", "label": 1}
    mine = client.put("/v1/corpora/claims/pairs/judgement", json=judged, headers=ADMIN).json()["judgement"]
    schema = client.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    sent = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody")
            if body is None:
                continue
            ((media_type, content),) = body["content"].items()
            if "example" in content:
                example = content["example"]
            else:
                examples = components[content["schema"]["$ref"].rsplit("/", 1)[1]].get("examples")
                assert examples, f"{method.upper()} {path}: its request body has no example"
                example = examples[0]
            if (method.upper(), path) in NOT_SENT:
                continue
            url = path.replace("{name}", "claims").replace("{judgement_id}", str(mine["id"]))
            if path == "/v1/corpora":
                example = {**example, "name": "claims-2"}  # `claims` exists already
            if path == "/v1/inboxes":
                example = {**example, "name": "claims"}  # the paths below name their inbox `claims` too
            send = {"content": example} if isinstance(example, str) else {"json": example}
            response = client.request(
                method.upper(), url, headers={**ADMIN, "content-type": media_type}, **send
            )
            assert response.status_code in (200, 201, 202), (method, path, response.text)
            sent += 1
    assert sent >= 11
    for model, example in REQUEST_EXAMPLES.items():
        model.model_validate(example)


def test_every_configured_limit_is_a_bound_json_schema_enforces(make_client: ClientFactory) -> None:
    """A limit on a list is maxItems, on a string maxLength; an optional field's on its non-null branch
    (JSON Schema ignores maxLength on an array: `candidates` once had one)."""
    schema = make_client().get("/openapi.json").json()
    bounded = 0

    def check(node: Any) -> None:
        nonlocal bounded
        if isinstance(node, dict):
            if "x-pairank-limit" in node:
                for target in [b for b in node.get("anyOf", []) if b.get("type") != "null"] or [node]:
                    key = "maxItems" if target.get("type") == "array" else "maxLength"
                    assert key in target, node
                    assert ({"maxItems", "maxLength"} - {key}).isdisjoint(target), node
                    bounded += 1
            for value in node.values():
                check(value)
        elif isinstance(node, list):
            for value in node:
                check(value)

    check(schema["components"]["schemas"])
    candidates = schema["components"]["schemas"]["CorpusRankRequest"]["properties"]["candidates"]
    assert {"type": "array", "maxItems": 1000}.items() <= candidates["anyOf"][0].items()
    assert bounded >= 10
