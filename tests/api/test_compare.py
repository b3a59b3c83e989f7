"""Two rankings side by side: two settings rank exactly as `rank` does; a registered model that is not
active ranks as it will once activated; metrics over the judged queries match the rankings (both
databases)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pairank.models import resolve_model
from tests.api.conftest import ClientFactory, add_claims
from tests.api.test_admin import finished, wait_job
from tests.api.test_security import ADMIN, new_key
from tests.helpers.tiny_model import build_tiny_model

URL = "/v1/corpora/claims/compare"
QUERY = "is the moon landing a studio hoax"
KEY = {"X-API-Key": "s3cret"}


def ranked(client: TestClient, query: str, k: int, **how: object) -> list[tuple[str, float]]:
    """What `rank` answers: (id, score) pairs."""
    body = client.post("/v1/corpora/claims/rank", json={"query": query, "k": k, **how}).json()
    return [(r["id"], r["score"]) for r in body["results"]]


def test_two_settings_rank_as_rank_does(client: TestClient) -> None:
    add_claims(client)
    body = {"query": QUERY, "k": 4, "left": {"mode": "dense"}, "right": {"mode": "hybrid", "alpha": 0.7}}
    response = client.post(URL, json=body)
    assert response.status_code == 200, response.text
    left, right = response.json()["left"], response.json()["right"]
    assert left["ranking"] == {"mode": "dense", "alpha": 0.2, "fusion": "linear"}
    assert right["ranking"] == {"mode": "hybrid", "alpha": 0.7, "fusion": "linear"}
    assert left["model"] == right["model"] == client.get("/ready").json()["model"]
    for side, how in ((left, {"mode": "dense"}), (right, {"mode": "hybrid", "alpha": 0.7})):
        expected = ranked(client, QUERY, 4, **how)
        assert [r["id"] for r in side["results"]] == [i for i, _ in expected]
        assert [r["score"] for r in side["results"]] == pytest.approx([s for _, s in expected], abs=1e-5)
        assert [r["rank"] for r in side["results"]] == [1, 2, 3, 4]
        # The same record as `rank`: the components only where the score is a fusion or BM25.
        components = {"dense_score", "lexical_score"} if how["mode"] != "dense" else set()
        assert all(components | {"text"} <= set(r) for r in side["results"])
        assert all(not ({"dense_score", "lexical_score"} - components) & set(r) for r in side["results"])
    # Left defaults to the corpus's own ranking (a claim corpus: hybrid a=0.2).
    default = client.post(URL, json={"query": QUERY, "right": {"mode": "lexical"}}).json()
    assert default["left"]["ranking"]["mode"] == "hybrid"
    lexical = ranked(client, QUERY, 10, mode="lexical")
    assert [r["id"] for r in default["right"]["results"]] == [i for i, _ in lexical]


def test_compare_errors(client: TestClient) -> None:
    add_claims(client)
    assert client.post(URL, json={"query": QUERY}).status_code == 422  # `right` is required
    deep = client.post(URL, json={"query": QUERY, "k": 101, "right": {}})
    assert deep.status_code == 422 and deep.json()["errors"][0]["field"] == "k"
    alpha = client.post(URL, json={"query": QUERY, "right": {"mode": "hybrid", "alpha": 2}})
    assert alpha.status_code == 422 and alpha.json()["errors"][0]["field"] == "right.alpha"
    assert client.post("/v1/corpora/nope/compare", json={"query": QUERY, "right": {}}).status_code == 404
    metrics = client.post(f"{URL}/metrics", json={"right": {"mode": "lexical"}})
    assert metrics.status_code == 409 and metrics.json()["field"] == "pairs"  # nothing judged yet
    client.put("/v1/corpora/claims/pairs/judgement", json={"query": QUERY, "document_id": "c1", "label": 1})
    unknown = client.post(f"{URL}/metrics", json={"right": {}, "metrics": ["Accuracy"]})
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "metrics[0]"
    assert "HasPositive@k" in unknown.json()["detail"]  # the message names the metrics there are


def test_metrics_over_the_judged_queries(client: TestClient) -> None:
    add_claims(client)
    judgements = [
        ("moon landing hoax studio", "c1", 1),
        ("moon landing hoax studio", "c4", 0),
        ("bleach covid cure", "c2", 1),
        ("sharks on highways", "c5", 1),
        ("sharks on highways", "c3", 1),
        ("vaccines", "c3", 0),  # no relevant document: not a judged query for the metrics
    ]
    for query, doc_id, label in judgements:
        judged = client.put(
            "/v1/corpora/claims/pairs/judgement", json={"query": query, "document_id": doc_id, "label": label}
        )
        assert judged.status_code == 200
    body = {"left": {"mode": "dense"}, "right": {"mode": "lexical"}, "metrics": ["MRR", "HasPositive@1"]}
    response = client.post(f"{URL}/metrics", json=body)
    assert response.status_code == 200, response.text
    report = response.json()
    assert (
        report["metrics"] == ["MRR", "HasPositive@1"] and report["queries"] == report["judged_queries"] == 3
    )
    rows = {row["query"]: row for row in report["per_query"]}
    assert list(rows) == ["sharks on highways", "bleach covid cure", "moon landing hoax studio"]  # newest
    assert rows["sharks on highways"]["relevant"] == 2
    relevant = {
        "moon landing hoax studio": {"c1"},
        "bleach covid cure": {"c2"},
        "sharks on highways": {"c3", "c5"},
    }
    for side, mode in (("left", "dense"), ("right", "lexical")):
        values = []
        for query, positives in relevant.items():
            order = [doc_id for doc_id, _ in ranked(client, query, 100, mode=mode)]
            first = next((rank for rank, d in enumerate(order, start=1) if d in positives), None)
            mrr = 1 / first if first else 0.0
            assert rows[query][side]["MRR"] == pytest.approx(mrr)
            assert rows[query][side]["HasPositive@1"] == (1.0 if first == 1 else 0.0)
            values.append(mrr)
        assert report[side]["means"]["MRR"] == pytest.approx(sum(values) / 3)
        assert report[side]["ranking"]["mode"] == mode
    limited = client.post(f"{URL}/metrics", json={**body, "limit": 1}).json()
    assert limited["queries"] == 1 and limited["judged_queries"] == 3
    assert limited["per_query"][0]["query"] == "sharks on highways"


def test_a_registered_model_ranks_as_it_will_once_active(make_client: ClientFactory, tmp_path: Path) -> None:
    admin = make_client(admin_api_key="s3cret")
    add_claims(admin)
    other = build_tiny_model(tmp_path / "other-model", seed=7)
    spec = resolve_model(str(other))
    admin.app.state.runtime.serving.registry.register(spec, str(other), "configured")
    serving = admin.get("/ready").json()["model"]
    body = {
        "query": QUERY,
        "k": 5,
        "left": {"mode": "dense"},
        "right": {"mode": "dense", "model": spec.version},
    }
    refused = admin.post(
        URL, json=body
    )  # auth disabled: open to anyone, but naming a model needs an admin key
    assert refused.status_code == 403 and refused.json()["field"] == "right.model"
    compared = admin.post(URL, json=body, headers=KEY).json()
    assert compared["left"]["model"] == serving and compared["right"]["model"] == spec.version
    assert [r["id"] for r in compared["left"]["results"]] == [
        i for i, _ in ranked(admin, QUERY, 5, mode="dense")
    ]
    missing = admin.post(URL, json={**body, "right": {"model": "nope@123"}}, headers=KEY)
    assert missing.status_code == 404 and missing.json()["field"] == "right.model"
    # Activated, the other model ranks the five claims as the comparison said it would.
    job = admin.post(f"/admin/models/{spec.version}/activate", headers=KEY).json()
    assert wait_job(admin, job["id"], finished)["status"] == "succeeded"
    after = ranked(admin, QUERY, 5, mode="dense")
    assert [r["id"] for r in compared["right"]["results"]] == [i for i, _ in after]
    assert [r["score"] for r in compared["right"]["results"]] == pytest.approx(
        [s for _, s in after], abs=1e-4
    )


def test_a_read_key_compares_settings_but_not_models(make_client: ClientFactory) -> None:
    client = make_client(auth="required", admin_api_key="admin-from-env")
    client.headers.update(ADMIN)
    add_claims(client)
    del client.headers["Authorization"]
    reader = new_key(client, "read", ["claims"])
    settings = {"query": QUERY, "left": {"mode": "dense"}, "right": {"mode": "lexical"}}
    assert client.post(URL, json=settings, headers=reader).status_code == 200
    models = {**settings, "right": {"model": "any@1"}}
    refused = client.post(URL, json=models, headers=reader)
    assert refused.status_code == 403 and refused.json()["field"] == "right.model"
    assert client.post(URL, json=models, headers=ADMIN).status_code == 404
