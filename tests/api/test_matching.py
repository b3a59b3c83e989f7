"""Match decisions over HTTP: calibrate from judged pairs, decide, policy, twins, probabilities on rank
and duplicates, range filters, and what a desk gets wrong (on SQLite, PostgreSQL and pgvector)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.serving.runtime import Runtime
from pairank.models import resolve_model
from tests.api.conftest import ClientFactory, wait_for
from tests.helpers.match_data import claims, judged_pairs
from tests.helpers.tiny_model import build_tiny_model

NAME = "checks"
KEY = {"X-API-Key": "s3cret"}


def build(client: TestClient) -> list[dict[str, Any]]:
    """The corpus and 40 judged queries (a word-sharing question about a claim each; some judged no)."""
    assert client.post("/v1/corpora", json={"name": NAME, "kind": "claim"}).status_code == 201
    docs = claims()
    assert client.post(f"/v1/corpora/{NAME}/documents", json={"documents": docs}).status_code == 200
    pairs = judged_pairs(docs)
    assert client.post(f"/v1/corpora/{NAME}/pairs", json={"pairs": pairs}).status_code == 201
    return docs


def test_an_uncalibrated_corpus_says_what_to_do(client: TestClient) -> None:
    build(client)
    response = client.post(f"/v1/corpora/{NAME}/match", json={"text": "were eggs banned in Oslo?"})
    assert response.status_code == 409
    assert "match/calibrate" in response.json()["detail"]
    assert client.get(f"/v1/corpora/{NAME}/match/calibration").status_code == 404


def test_calibrate_decide_and_explain(client: TestClient) -> None:
    docs = build(client)
    response = client.post(f"/v1/corpora/{NAME}/match/calibrate", json={})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["kind"] in {"cosine", "logistic", "isotonic"} and report["queries"] == 40
    assert set(report["kinds"]) == {"cosine", "logistic", "isotonic"}
    assert 0.0 <= report["thresholds"]["new"] <= report["thresholds"]["match"]
    assert {"match_precision", "match_coverage", "new_precision", "new_coverage", "gold_shown"} <= set(
        report["report"]
    )
    assert report["ranking"] == "hybrid a=0.2" and report["twin_groups"] == 1
    curves = report["curves"]
    assert curves["threshold"][0] == 0.0 and curves["threshold"][-1] == 1.0
    coverage = curves["match_coverage"]  # auto-matching less as its threshold rises
    assert all(a >= b for a, b in zip(coverage, coverage[1:], strict=False))
    assert len(curves["match_precision"]) == len(curves["new_coverage"]) == len(curves["threshold"]) == 21
    assert client.get(f"/v1/corpora/{NAME}/twins").json()["groups"] == [["c07", "c60"]]
    plot = client.get(f"/v1/corpora/{NAME}/match/calibration.png")
    assert plot.status_code == 200 and plot.content.startswith(b"\x89PNG")

    asked = client.post(f"/v1/corpora/{NAME}/match", json={"text": docs[45]["text"]}).json()
    assert asked["decision"] in {"match", "review", "new"}
    assert asked["candidates"] and all(0.0 <= c["probability"] <= 1.0 for c in asked["candidates"])
    assert len(asked["candidates"]) == asked["policy"]["review_candidates"] == 10
    assert asked["candidates"][0]["id"] == "c45"  # the served order: the claim itself first
    best = max(c["probability"] for c in asked["candidates"])
    if asked["decision"] == "match":
        assert asked["match"]["probability"] == best >= asked["policy"]["thresholds"]["match"]
    else:
        assert asked["match"] is None
    batch = client.post(f"/v1/corpora/{NAME}/match", json={"texts": [docs[3]["text"], "zebra crossing"]})
    assert batch.status_code == 200 and len(batch.json()["results"]) == 2
    assert (
        batch.json()["results"][0]["candidates"][0]["probability"]
        == client.post(f"/v1/corpora/{NAME}/match", json={"text": docs[3]["text"]}).json()["candidates"][0][
            "probability"
        ]
    )

    # The same probabilities on `rank` (top 10) and the policy deciding `duplicates`.
    ranked = client.post(f"/v1/corpora/{NAME}/rank", json={"query": docs[45]["text"], "k": 12}).json()
    assert [r.get("probability") is not None for r in ranked["results"]] == [True] * 10 + [False] * 2
    assert ranked["results"][0]["probability"] == asked["candidates"][0]["probability"]
    dupes = client.post(f"/v1/corpora/{NAME}/duplicates", json={"ids": ["c07"]}).json()
    assert dupes["threshold_source"] == "policy" and dupes["threshold_on"] == "probability"
    assert all(d["probability"] >= dupes["threshold"] for d in dupes["results"][0]["duplicates"])


def test_an_open_world_evaluation_scores_the_decisions(client: TestClient) -> None:
    docs = build(client)
    body = {
        "corpus": NAME,
        "queries": [{"id": f"q{i}", "text": docs[i]["text"]} for i in range(40, 60)],
        "qrels": [{"query_id": f"q{i}", "document_id": docs[i]["id"], "relevance": 1} for i in range(40, 60)],
        "open_world": {"share": 0.5, "seed": 3},
    }
    assert client.post("/v1/evaluations", json=body).status_code == 409  # not calibrated yet
    client.post(f"/v1/corpora/{NAME}/match/calibrate", json={})
    response = client.post("/v1/evaluations", json=body)
    assert response.status_code == 202, response.text
    report = wait_for(client, response.json()["id"])
    assert report["status"] == "succeeded", report
    assert {"match_coverage", "new_coverage", "gold_shown"} <= set(report["metrics"])
    absent = [q for q, v in report["per_query"].items() if v["absent"] == 1.0]
    assert 0 < len(absent) < 20  # a random half of the 20 left their claim out
    for values in report["per_query"].values():  # a query whose claim is absent is right only as `new`
        if values["absent"] == 1.0:
            assert values["right"] == values["new"]
    inline = {**body, "documents": [{"id": "x", "text": "y"}]}
    del inline["corpus"]
    assert client.post("/v1/evaluations", json=inline).status_code == 422


def test_the_policy_moves_the_thresholds_without_recalibrating(client: TestClient) -> None:
    build(client)
    first = client.post(f"/v1/corpora/{NAME}/match/calibrate", json={}).json()
    strict = client.put(f"/v1/corpora/{NAME}/match-policy", json={"match_precision": 0.999}).json()
    assert strict["match_precision"] == 0.999 and strict["calibrated_for"] == first["model"]
    assert strict["thresholds"]["match"] >= first["thresholds"]["match"]
    lenient = client.put(f"/v1/corpora/{NAME}/match-policy", json={"match_precision": 0.6}).json()
    assert lenient["thresholds"]["match"] <= strict["thresholds"]["match"]
    assert client.get(f"/v1/corpora/{NAME}/match-policy").json() == lenient


def test_bad_input_is_a_clear_4xx(client: TestClient) -> None:
    build(client)
    client.post(f"/v1/corpora/{NAME}/match/calibrate", json={})
    cases = [
        ("put", "/match-policy", {"match_precision": 1.5}, 422, "match_precision"),
        ("put", "/match-policy", {"recency_days": 30}, 422, "recency_days"),
        ("post", "/match", {"text": "x", "texts": ["y"]}, 422, "text"),
        ("post", "/match", {"texts": ["t"] * 10_000}, 413, "texts"),
        ("post", "/match", {"text": "   "}, 422, "text"),
        ("post", "/match/calibrate", {"new_precision": 0.2}, 422, "new_precision"),
    ]
    for method, path, body, status, field in cases:
        response = getattr(client, method)(f"/v1/corpora/{NAME}{path}", json=body)
        assert response.status_code == status, (path, body, response.text)
        assert field in response.text
    assert client.post("/v1/corpora/nope/match", json={"text": "x"}).status_code == 404


def test_too_few_judged_queries_is_a_conflict(client: TestClient) -> None:
    assert client.post("/v1/corpora", json={"name": "small", "kind": "claim"}).status_code == 201
    docs = [{"id": "a", "text": "Sharks swim in the flooded street."}]
    client.post("/v1/corpora/small/documents", json={"documents": docs})
    client.post(
        "/v1/corpora/small/pairs", json={"pairs": [{"query": "shark street", "document_id": "a", "label": 1}]}
    )
    response = client.post("/v1/corpora/small/match/calibrate", json={})
    assert response.status_code == 409 and "at least" in response.json()["detail"]


def test_range_filters_on_numbers_and_dates(client: TestClient) -> None:
    build(client)
    body = {"query": "banned", "k": 100, "mode": "lexical", "include_metadata": True}
    years = client.post(
        f"/v1/corpora/{NAME}/rank", json={**body, "filter": {"year": {"gte": 2040, "lte": 2045}}}
    )
    assert sorted(r["metadata"]["year"] for r in years.json()["results"]) == list(range(2040, 2046))
    dates = client.post(
        f"/v1/corpora/{NAME}/rank", json={**body, "filter": {"published": {"gte": "2023-01-01"}}}
    )
    assert dates.json()["results"] and all(
        r["metadata"]["published"] >= "2023-01-01" for r in dates.json()["results"]
    )
    mixed = client.post(
        f"/v1/corpora/{NAME}/rank", json={**body, "filter": {"year": {"gte": 1, "lte": "2020-01-01"}}}
    )
    assert mixed.status_code == 422
    empty = client.post(f"/v1/corpora/{NAME}/rank", json={**body, "filter": {"year": {}}})
    assert empty.status_code == 422


def test_a_calibration_is_shared_kept_and_redone_after_an_activation(
    make_client: ClientFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Every process follows the others (as in production: the tests' default is not to).
    first = make_client(admin_api_key="s3cret", sync_seconds=0.2)
    docs = build(first)
    second = make_client(sync_seconds=0.2)  # another process on the same database
    calibrated = first.post(f"/v1/corpora/{NAME}/match/calibrate", json={}).json()
    asked = {"text": docs[12]["text"]}
    deadline = time.monotonic() + 30
    while second.post(f"/v1/corpora/{NAME}/match", json=asked).status_code != 200:
        assert time.monotonic() < deadline, "the other process never saw the calibration"
        time.sleep(0.1)
    assert (
        second.post(f"/v1/corpora/{NAME}/match", json=asked).json()
        == first.post(f"/v1/corpora/{NAME}/match", json=asked).json()
    )
    restarted = make_client(sync_seconds=0.2)  # a fresh process reads it from the database
    assert restarted.get(f"/v1/corpora/{NAME}/match/calibration").json()["model"] == calibrated["model"]

    other = build_tiny_model(tmp_path_factory.mktemp("other"), seed=3)
    spec = resolve_model(str(other))
    runtime: Runtime = first.app.state.runtime  # type: ignore[attr-defined]
    runtime.serving.registry.register(spec, str(other), "configured")
    assert first.post(f"/admin/models/{spec.version}/activate", headers=KEY).status_code == 202
    deadline = time.monotonic() + 180
    while first.get(f"/v1/corpora/{NAME}/match/calibration").json()["model"] != spec.version:
        jobs = first.get("/admin/jobs", headers=KEY).json()["jobs"]
        states = [(j["kind"], j["status"], j["error"]) for j in jobs]
        assert time.monotonic() < deadline, f"no calibration for the activated model: {states}"
        time.sleep(0.2)
    while [j["status"] for j in first.get("/admin/jobs", headers=KEY).json()["jobs"]
           if j["kind"] == "calibrate-match"] != ["succeeded"]:  # fmt: skip
        assert time.monotonic() < deadline, "the calibration job did not end as succeeded"
        time.sleep(0.2)
    while (answer := second.post(f"/v1/corpora/{NAME}/match", json=asked)).json().get(
        "model"
    ) != spec.version:
        assert time.monotonic() < deadline, answer.text  # the other process follows the activation
        time.sleep(0.2)
    assert answer.status_code == 200 and answer.json()["candidates"]
