"""The tips inbox over HTTP (SQLite and PostgreSQL): inboxes, items, clusters with paging and filters,
triage, and bad input answered with a 4xx naming the field."""

from __future__ import annotations

import re
import time

import pytest
from fastapi.testclient import TestClient

from app.core.errors import InvalidInputError
from app.usecases.calibration.match import calibrate_corpus
from app.usecases.inbox.inboxes import check_url
from app.usecases.inbox.webhooks import SIGNATURE_HEADER, verify
from tests.api.conftest import ClientFactory
from tests.helpers.receiver import Receiver
from tests.usecases.inbox_helpers import check_text, tip


def desk(make_client: ClientFactory, **settings: object) -> TestClient:
    """A client whose corpus `checks` (40 claims) is calibrated, with inbox `tips` on it."""
    client = make_client(inbox_cluster_threshold=0.9999, **settings)
    assert client.post("/v1/corpora", json={"name": "checks", "kind": "claim"}).status_code == 201
    docs = [{"id": f"c{i}", "text": check_text(i)} for i in range(40)]
    assert client.post("/v1/corpora/checks/documents", json={"documents": docs}).status_code == 200
    pairs = [{"query": tip(i, 0), "document_id": f"c{i}", "label": 1} for i in range(30)]
    assert client.post("/v1/corpora/checks/pairs", json={"pairs": pairs}).status_code == 201
    calibrate_corpus(client.app.state.runtime, "checks")  # type: ignore[attr-defined]
    created = client.post("/v1/inboxes", json={"name": "tips", "corpora": ["checks"], "language": "en"})
    assert created.status_code == 201, created.text
    return client


def send(client: TestClient, pairs: list[tuple[int, int]]) -> dict:
    items = [{"id": f"t{i}-{v}", "text": tip(i, v), "source": "sms", "received_at": "2026-11-27T10:15:00Z"}
             for i, v in pairs]  # fmt: skip
    response = client.post("/v1/inboxes/tips/items", json={"items": items})
    assert response.status_code == 200, response.text
    return response.json()


def test_items_clusters_and_triage(make_client: ClientFactory) -> None:
    client = desk(make_client)
    sent = send(client, [(3, 0), (3, 1), (7, 0), (3, 2), (12, 0)])
    assert sent["added"] == 5 and sent["clusters_created"] == 3
    assert send(client, [(3, 0)])["duplicates"] == 1
    page = client.get("/v1/inboxes/tips/clusters", params={"sort": "size", "limit": 2}).json()
    assert [c["size"] for c in page["clusters"]] == [3, 1] and page["next_cursor"]
    rest = client.get("/v1/inboxes/tips/clusters", params={"limit": 2, "cursor": page["next_cursor"]}).json()
    assert len(rest["clusters"]) == 1 and rest["next_cursor"] is None
    big = page["clusters"][0]
    assert big["arrivals_per_hour"] == [{"hour": "2026-11-27T10:00:00Z", "count": 3}]
    assert {i["id"] for i in big["items"]} == {"t3-0", "t3-1", "t3-2"} and big["candidates"][0]["id"] == "c3"
    capped = client.get("/v1/inboxes/tips/clusters", params={"items": 1}).json()["clusters"]
    assert [len(c["items"]) for c in capped] == [1, 1, 1] and capped[0]["items"][0]["id"] == "t3-0"
    one = client.get(f"/v1/inboxes/tips/clusters/{big['id']}").json()
    assert one["size"] == 3 and len(one["items"]) == 3
    confirmed = client.post(f"/v1/inboxes/tips/clusters/{big['id']}/confirm", json={"corpus": "checks",
                            "document_id": "c3"})  # fmt: skip
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["pairs"] == 3 and confirmed.json()["clusters"][0]["status"] == "answered"
    judged = client.get("/v1/corpora/checks/pairs", params={"query": tip(3, 1)}).json()
    assert judged["pairs"][0]["label"] == 1 and judged["pairs"][0]["judged_by"]
    other = rest["clusters"][0]["id"]
    rejected = client.post(f"/v1/inboxes/tips/clusters/{other}/reject", json={"corpus": "checks",
                           "document_id": rest["clusters"][0]["candidates"][0]["id"]})  # fmt: skip
    assert rejected.status_code == 200 and rejected.json()["clusters"][0]["rejected"]
    status = client.put(f"/v1/inboxes/tips/clusters/{other}/status", json={"status": "dismissed"})
    assert status.json()["clusters"][0]["status"] == "dismissed"
    dismissed = client.get("/v1/inboxes/tips/clusters", params={"status": "dismissed"}).json()["clusters"]
    assert [c["id"] for c in dismissed] == [other]
    split = client.post("/v1/inboxes/tips/moves", json={"item_id": "t3-2"})
    assert split.status_code == 200 and [c["size"] for c in split.json()["clusters"]] == [2, 1]
    moved = client.post("/v1/inboxes/tips/moves", json={"item_id": "t3-2", "cluster_id": big["id"]})
    assert [c["size"] for c in moved.json()["clusters"]] == [3]
    assert client.get("/v1/inboxes/tips").json()["items"] == 5
    assert client.delete("/v1/inboxes/tips").status_code == 204
    assert client.get("/v1/inboxes/tips").status_code == 404


def test_bad_input_names_the_field(make_client: ClientFactory) -> None:
    client = desk(make_client, max_inbox_items_per_request=2)

    def error(response) -> str:  # noqa: ANN001
        assert 400 <= response.status_code < 500, response.text
        return response.text

    assert "missing" in error(client.post("/v1/inboxes", json={"name": "x", "corpora": ["missing"]}))
    assert "webhooks[0].url" in error(client.post("/v1/inboxes", json={"name": "x", "corpora": ["checks"],
                                      "webhooks": [{"url": "file:///etc/passwd"}]}))  # fmt: skip
    # The schema's URL rule and the service agree: what one refuses, the other does too (the contract fuzz).
    for url in (
        "http://[0]/",
        "http://desk.example:99999/",
        "https://h\u0085q/",
        "https://caf\u00e9.example/",
    ):
        hooks = {"name": "x", "corpora": ["checks"], "webhooks": [{"url": url}]}
        assert "webhooks[0].url" in error(client.post("/v1/inboxes", json=hooks)), url
    for url in ("http://[0]", "http://desk.example:70000/hook"):
        with pytest.raises(InvalidInputError, match=re.escape("webhooks[1].url")):
            check_url("webhooks[1].url", url)
    check_url("url", "https://xn--caf-dma.example:8443/hook?q=%20#top")
    assert client.post("/v1/inboxes", json={"name": "tips", "corpora": ["checks"]}).status_code == 409
    assert (
        client.post("/v1/inboxes/none/items", json={"items": [{"id": "a", "text": "b"}]}).status_code == 404
    )
    too_many = client.post(
        "/v1/inboxes/tips/items", json={"items": [{"id": str(i), "text": "t"} for i in range(3)]}
    )
    assert too_many.status_code == 413 and "items" in too_many.text
    assert "text" in error(client.post("/v1/inboxes/tips/items", json={"items": [{"id": "a", "text": "  "}]}))
    assert client.get("/v1/inboxes/tips/clusters/999").status_code == 404
    assert client.get("/v1/inboxes/tips/clusters", params={"sort": "colour"}).status_code == 422
    assert client.post("/v1/inboxes/tips/moves", json={"item_id": "nope"}).status_code == 404


def test_webhook_deliveries_are_listed(make_client: ClientFactory) -> None:
    receiver = Receiver(statuses=[500])
    try:
        client = desk(make_client, webhook_poll_seconds=0.05, webhook_backoff_seconds=0.05)
        created = client.post("/v1/inboxes", json={"name": "hooked", "corpora": ["checks"],
                              "webhooks": [{"url": receiver.url, "secret": "0123456789abcdef"}]})  # fmt: skip
        assert created.status_code == 201 and created.json()["webhooks"][0]["secret"] == "0123456789abcdef"
        assert "secret" not in client.get("/v1/inboxes/hooked").json()["webhooks"][0]
        client.post("/v1/inboxes/hooked/items", json={"items": [{"id": "a", "text": tip(4, 0)}]})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = client.get("/v1/inboxes/hooked/deliveries").json()["deliveries"]
            if found and all(d["status"] == "delivered" for d in found):
                break
            time.sleep(0.1)
        assert found and all(d["status"] == "delivered" for d in found), found
        assert sum(d["attempts"] for d in found) == len(found) + 1
        headers, body, _ = receiver.received[-1]
        assert verify("0123456789abcdef", headers[SIGNATURE_HEADER], body)
    finally:
        receiver.close()
