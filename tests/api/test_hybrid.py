"""Lexical and hybrid ranking over HTTP: validation, fusion, and a BM25 index that follows every write."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.db.engine import transaction
from app.db.repositories.corpora import CorpusRepository
from indexes.lexical import LexicalIndex
from tests.api.conftest import CLAIMS, ClientFactory, add_claims


def rank(client: TestClient, **body: object) -> list[dict]:
    """The results of a corpus rank call (asserting a 200)."""
    response = client.post("/v1/corpora/claims/rank", json={"k": 5, **body})
    assert response.status_code == 200, response.text
    return list(response.json()["results"])


def used_ranking(client: TestClient, **body: object) -> dict:
    """The ranking a corpus rank call reports it used."""
    response = client.post("/v1/corpora/claims/rank", json={"k": 5, **body})
    assert response.status_code == 200, response.text
    return dict(response.json()["ranking"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"mode": "sparse"}, "mode"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": -0.1}, "alpha"),
        ({"fusion": "max"}, "fusion"),
    ],
)
def test_unknown_modes_and_weights_are_422_naming_the_field(
    make_client: ClientFactory, body: dict, field: str
) -> None:
    client = make_client()
    add_claims(client)
    response = client.post("/v1/corpora/claims/rank", json={"query": "shark", **body})
    assert response.status_code == 422, response.text
    assert field in response.text
    duplicates = client.post("/v1/corpora/claims/duplicates", json={"text": "shark", **body})
    assert duplicates.status_code == 422 and field in duplicates.text


def test_lexical_mode_is_bm25_over_the_corpus(make_client: ClientFactory) -> None:
    client = make_client()
    add_claims(client)
    expected = LexicalIndex()
    expected.apply([(int(doc_id[1:]), text) for doc_id, text in CLAIMS])
    results = rank(client, query="a shark on the flooded highway", mode="lexical")
    assert [r["id"] for r in results] == [
        f"c{d}" for d, _ in expected.search("a shark on the flooded highway", 5)
    ]
    assert results[0]["id"] == "c5" and results[0]["score"] == pytest.approx(results[0]["lexical_score"])
    assert all("dense_score" in r for r in results)


def test_alpha_moves_hybrid_from_the_dense_order_to_the_lexical_one(make_client: ClientFactory) -> None:
    client = make_client()
    add_claims(client)
    query = "vaccines in the studio"  # shares words with c3 and c1 only
    dense = rank(client, query=query, mode="dense")
    only_dense = rank(client, query=query, mode="hybrid", alpha=0.0)
    assert [r["id"] for r in only_dense] == [r["id"] for r in dense]
    cosine = {r["id"]: r["score"] for r in dense}
    assert all(r["dense_score"] == pytest.approx(cosine[r["id"]], abs=1e-5) for r in only_dense)
    only_lexical = rank(client, query=query, mode="hybrid", alpha=1.0)
    matched = [r["id"] for r in only_lexical if r["lexical_score"] > 0]
    assert set(matched) == {"c1", "c3"} and [r["id"] for r in only_lexical][:2] == matched
    fused = rank(client, query=query, mode="hybrid", alpha=0.5, fusion="rrf")
    assert {r["id"] for r in fused} == {r["id"] for r in dense}


def test_the_lexical_index_follows_writes_deletes_and_restarts(make_client: ClientFactory) -> None:
    client = make_client(checkpoint_changes=1, checkpoint_seconds=0.1)
    add_claims(client)
    documents = client.post(
        "/v1/corpora/claims/documents",
        json={"documents": [{"id": "z", "text": "A zebra crossed the highway."}]},
    )
    assert documents.status_code == 200
    assert [r["id"] for r in rank(client, query="zebra", mode="lexical")] == ["z"]
    client.post("/v1/corpora/claims/documents", json={"documents": [{"id": "z", "text": "A horse crossed."}]})
    assert rank(client, query="zebra", mode="lexical") == []
    assert [r["id"] for r in rank(client, query="horse", mode="lexical")] == ["z"]
    assert client.delete("/v1/corpora/claims/documents/c5").status_code == 204
    assert rank(client, query="shark", mode="lexical") == []
    client.app.state.runtime.close()  # type: ignore[attr-defined]  # checkpoints what changed
    again = make_client()
    assert [r["id"] for r in rank(again, query="horse", mode="lexical")] == ["z"]
    assert rank(again, query="shark", mode="lexical") == []
    status = again.get("/v1/corpora/claims/index").json()
    assert (
        status["lexical"]["documents"] == 5
        and status["lexical"]["high_water_mark"] == status["high_water_mark"]
    )


def test_hybrid_duplicates_keep_the_cosine_threshold(make_client: ClientFactory) -> None:
    client = make_client()
    add_claims(client)
    body = {"text": CLAIMS[4][1], "mode": "hybrid", "alpha": 0.5, "threshold": 0.99}
    response = client.post("/v1/corpora/claims/duplicates", json=body)
    assert response.status_code == 200, response.text
    duplicates = response.json()["results"][0]["duplicates"]
    assert [d["id"] for d in duplicates] == ["c5"] and duplicates[0]["dense_score"] >= 0.99


def test_ranking_calibration_chooses_on_stored_pairs_and_becomes_the_default(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    add_claims(client)
    empty = client.post("/v1/corpora/claims/calibrate-ranking", json={})
    assert empty.status_code == 409 and "pairs" in empty.text
    pairs = [
        {"query": query, "document_id": doc_id, "label": 1}
        for doc_id, query in [
            ("c1", "was the moon landing staged"),
            ("c2", "does bleach cure coronavirus"),
            ("c3", "do vaccines cause autism"),
            ("c4", "is the earth flat"),
            ("c5", "shark photographed on a flooded highway"),
        ]
    ]
    assert client.post("/v1/corpora/claims/pairs", json={"pairs": pairs}).status_code == 201
    for body, field in (({"folds": 1}, "folds"), ({"metric": "Precision@x"}, "metric")):
        response = client.post("/v1/corpora/claims/calibrate-ranking", json=body)
        assert response.status_code == 422 and field in response.text
    response = client.post("/v1/corpora/claims/calibrate-ranking", json={"folds": 3})
    assert response.status_code == 200, response.text
    calibration = response.json()
    assert (
        calibration["metric"] == "MRR" and calibration["task"] == "retrieval" and calibration["queries"] == 5
    )
    assert calibration["value"] == max(calibration["settings"].values())
    assert len(calibration["chosen_per_fold"]) == 3 and 0 <= calibration["cv_mean"] <= 1
    # Queries that share their claim's words: BM25 ranks each claim first, so the best setting is perfect.
    assert calibration["settings"]["lexical"] == 1.0 and calibration["value"] == 1.0
    default = rank(client, query="is the earth flat")  # no mode: the calibrated one
    assert ("lexical_score" in default[0]) == (calibration["mode"] != "dense")
    assert used_ranking(client, query="is the earth flat")["mode"] == calibration["mode"]

    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    # A calibration holds only for the model it was made with; else the claim corpus's default, hybrid.
    for model, expected in ((calibration["model"], "lexical"), ("another-model@0", "hybrid")):
        with transaction(runtime.sessions) as session:
            corpus = CorpusRepository(session).get("claims")
            assert corpus is not None
            corpus.ranking_calibration = {**calibration, "model": model, "mode": "lexical"}
        assert used_ranking(client, query="is the earth flat")["mode"] == expected


def test_a_new_claim_corpus_ranks_hybrid_until_calibrated_other_kinds_dense(client: TestClient) -> None:
    add_claims(client)
    hybrid = {"mode": "hybrid", "alpha": 0.2, "fusion": "linear"}
    assert client.get("/v1/corpora/claims").json()["ranking"] == hybrid
    results = rank(client, query="is the earth flat")
    assert used_ranking(client, query="is the earth flat") == hybrid
    assert all("dense_score" in r and "lexical_score" in r for r in results)
    assert results == rank(client, query="is the earth flat", mode="hybrid", alpha=0.2)
    for kind in ("answer", "question"):
        add_claims(client, corpus=f"{kind}s", kind=kind)
        assert client.get(f"/v1/corpora/{kind}s").json()["ranking"] is None
        response = client.post(f"/v1/corpora/{kind}s/rank", json={"query": "is the earth flat"}).json()
        assert response["ranking"]["mode"] == "dense" and "lexical_score" not in response["results"][0]


def test_a_corpus_created_with_its_own_ranking_keeps_it(client: TestClient) -> None:
    for name, ranking in (("dense", {"mode": "dense"}), ("rrf", {"mode": "hybrid", "fusion": "rrf"})):
        body = {"name": name, "kind": "claim", "ranking": ranking}
        assert client.post("/v1/corpora", json=body).status_code == 201
        stored = client.get(f"/v1/corpora/{name}").json()["ranking"]
        assert stored == {"alpha": 0.2, "fusion": "linear", **ranking}
        documents = [{"id": i, "text": t} for i, t in CLAIMS]
        assert client.post(f"/v1/corpora/{name}/documents", json={"documents": documents}).status_code == 200
        used = client.post(f"/v1/corpora/{name}/rank", json={"query": "flat earth"}).json()["ranking"]
        assert used == stored
    # Corpora made before default rankings existed (null) rank dense, as they did.
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    add_claims(client)
    with transaction(runtime.sessions) as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        corpus.default_ranking = None
    assert used_ranking(client, query="flat earth")["mode"] == "dense"


@pytest.mark.parametrize(
    ("ranking", "field"),
    [({"mode": "sparse"}, "ranking.mode"), ({"mode": "hybrid", "alpha": 1.5}, "ranking.alpha"),
     ({"alpha": 0.3}, "ranking.mode"), ({"mode": "hybrid", "fusion": "max"}, "ranking.fusion")],
)  # fmt: skip
def test_a_bad_corpus_ranking_is_422_naming_the_field(client: TestClient, ranking: dict, field: str) -> None:
    response = client.post("/v1/corpora", json={"name": "bad", "kind": "claim", "ranking": ranking})
    assert response.status_code == 422 and field in [e["field"] for e in response.json()["errors"]]
    assert client.get("/v1/corpora/bad").status_code == 404
