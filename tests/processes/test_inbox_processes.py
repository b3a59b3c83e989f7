"""The inbox across real processes on one database: one `pairank serve` takes the items and publishes
checks (never re-matching itself), the other serves the clusters and re-matches them on publish; killed
with -9 while a check is published, the second catches up from the inbox's mark when it starts again."""

from __future__ import annotations

import time

from tests.helpers.processes import Server, ServerFactory
from tests.usecases.inbox_helpers import check_text, tip


def listed(server: Server, cluster_id: int) -> set[str]:
    """Ids of the checks the cluster lists (its match and candidates), as `server` serves it."""
    body = server.http.get(f"/v1/inboxes/tips/clusters/{cluster_id}").json()
    return {c["id"] for c in body["candidates"]} | ({body["match"]["id"]} if body["match"] else set())


def wait_listed(server: Server, cluster_id: int, doc: str, seconds: float = 60) -> float:
    """Seconds until the cluster lists `doc` (AssertionError after `seconds`)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if doc in listed(server, cluster_id):
            return time.monotonic() - started
        time.sleep(0.2)
    raise AssertionError(f"cluster {cluster_id} never listed {doc}: {listed(server, cluster_id)}")


def publish(server: Server, i: int) -> None:
    response = server.http.post("/v1/corpora/checks/documents",
                                json={"documents": [{"id": f"c{i}", "text": check_text(i)}]})  # fmt: skip
    assert response.status_code == 200, response.text


def test_one_takes_items_the_other_serves_and_rematches(start_server: ServerFactory) -> None:
    intake = start_server(inbox_rematch_seconds="0", inbox_cluster_threshold="0.9999")
    http = intake.http
    assert http.post("/v1/corpora", json={"name": "checks", "kind": "claim"}).status_code == 201
    docs = [{"id": f"c{i}", "text": check_text(i)} for i in range(40)]
    assert http.post("/v1/corpora/checks/documents", json={"documents": docs}).status_code == 200
    pairs = [{"query": tip(i, 0), "document_id": f"c{i}", "label": 1} for i in range(30)]
    assert http.post("/v1/corpora/checks/pairs", json={"pairs": pairs}).status_code == 201
    assert http.post("/v1/corpora/checks/match/calibrate", json={}).status_code == 200
    assert http.post("/v1/inboxes", json={"name": "tips", "corpora": ["checks"]}).status_code == 201
    served = start_server(inbox_rematch_seconds="0.2", inbox_cluster_threshold="0.9999")
    items = [{"id": f"t{i}-{v}", "text": tip(i, v)} for i, v in [(45, 0), (45, 1), (46, 0), (3, 0)]]
    taken = http.post("/v1/inboxes/tips/items", json={"items": items}).json()
    assert taken["added"] == 4 and taken["clusters_created"] == 3
    first, second = taken["clusters"]["t45-0"], taken["clusters"]["t46-0"]
    page = served.http.get("/v1/inboxes/tips/clusters").json()  # the other process sees them at once
    assert [c["size"] for c in page["clusters"]] == [2, 1, 1]
    publish(intake, 45)
    assert wait_listed(served, first, "c45") < 60
    served.kill()  # -9: the next check is published while no process re-matches
    publish(intake, 46)
    time.sleep(1.0)
    assert "c46" not in listed(intake, second)
    again = start_server(inbox_rematch_seconds="0.2", inbox_cluster_threshold="0.9999")
    assert wait_listed(again, second, "c46") < 60
