"""Query sets: saved per corpus, scored on demand and again after a ranking change, with each run's
metrics and what changed since the run before (both databases)."""

from __future__ import annotations

import time
from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import add_claims

SETS = "/v1/corpora/claims/query-sets"
MOON = "was the moon landing filmed in a studio?"
BLEACH = "does drinking bleach cure covid?"


def finished_runs(client: TestClient, name: str, count: int) -> list[dict[str, Any]]:
    """The set's runs once `count` of them have ended."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs: list[dict[str, Any]] = client.get(f"{SETS}/{name}").json()["runs"]
        if len(runs) >= count and all(r["status"] in ("succeeded", "failed") for r in runs):
            return runs
        time.sleep(0.1)
    raise AssertionError(f"runs did not finish: {client.get(f'{SETS}/{name}').json()}")


def test_a_query_set_is_scored_on_demand_and_after_a_ranking_change(client: TestClient) -> None:
    add_claims(client)
    for query, doc in ((MOON, "c1"), (BLEACH, "c2")):
        judged = client.put(
            "/v1/corpora/claims/pairs/judgement", json={"query": query, "document_id": doc, "label": 1}
        )
        assert judged.status_code == 200
    body = {"name": "hard claims", "queries": [MOON, BLEACH, "never judged", MOON]}
    created = client.post(SETS, json=body)
    assert created.status_code == 201, created.text
    assert created.json()["queries"] == [MOON, BLEACH, "never judged"] and created.json()["last_run"] is None
    queued = client.post(f"{SETS}/hard claims/runs")
    assert (
        queued.status_code == 202
        and queued.json()["status"] == "queued"
        and queued.json()["trigger"] == "manual"
    )
    (first,) = finished_runs(client, "hard claims", 1)
    assert first["status"] == "succeeded", first
    assert set(first["per_query"]) == {MOON, BLEACH}  # the unjudged query is not scored
    assert 0 < first["metrics"]["MRR"] <= 1 and "nDCG@10" in first["metrics"] and first["model"]
    assert first["changes"] == []
    # A ranking change scores every set of the corpus again.
    assert client.put("/v1/corpora/claims/ranking", json={"mode": "lexical"}).status_code == 200
    runs = finished_runs(client, "hard claims", 2)
    assert [r["trigger"] for r in runs] == ["manual", "ranking change"]
    second = runs[1]
    moved = {c["query"]: (c["before"], c["after"]) for c in second["changes"]}
    for query, values in second["per_query"].items():
        before = first["per_query"][query]["MRR"]
        assert (query in moved) == (values["MRR"] != before)
    listed = client.get(SETS).json()["query_sets"]
    assert [(s["name"], s["last_run"]["trigger"]) for s in listed] == [("hard claims", "ranking change")]
    # So does a ranking calibration (the corpus ranks as it chose from then on).
    calibrated = client.post("/v1/corpora/claims/calibrate-ranking", json={"metric": "MRR", "folds": 2})
    assert calibrated.status_code == 200, calibrated.text
    assert [r["trigger"] for r in finished_runs(client, "hard claims", 3)][2] == "ranking change"


def test_query_set_errors(client: TestClient) -> None:
    add_claims(client)
    assert client.post(SETS, json={"name": "a", "queries": ["q"]}).status_code == 201
    taken = client.post(SETS, json={"name": "a", "queries": ["q"]})
    assert taken.status_code == 409 and taken.json()["field"] == "name"
    blank = client.post(SETS, json={"name": "b", "queries": ["  "]})
    assert blank.status_code == 422 and blank.json()["errors"][0]["field"].startswith("queries")
    too_many = client.post(SETS, json={"name": "b", "queries": [f"q{i}" for i in range(1001)]})
    assert too_many.status_code == 422 and too_many.json()["errors"][0]["field"] == "queries"
    missing = client.post(f"{SETS}/nope/runs")
    assert missing.status_code == 404 and missing.json()["field"] == "query_set"
    nothing = client.post(f"{SETS}/a/runs")
    assert nothing.status_code == 202
    (run,) = finished_runs(client, "a", 1)
    assert run["status"] == "succeeded" and run["metrics"] == {} and "judge" in run["error"]
    assert client.delete(f"{SETS}/a").status_code == 204
    assert client.get(f"{SETS}/a").status_code == 404
