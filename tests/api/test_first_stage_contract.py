"""One first stage: what evaluations, compare/metrics and the retraining gate score is the list `rank` serves.

For every ranking (dense, lexical, hybrid linear at the corpus's own alpha, hybrid rrf), with and without
a metadata filter and given candidates, on SQLite/Faiss, PostgreSQL/Faiss and pgvector, each query's
reciprocal rank and average precision from `POST /v1/evaluations`, from `.../compare/metrics` and from
the gate's scoring of the active model equal those of the list `/rank` returns at the same depth. The
corpus holds more than 100 documents (so each side's pool is a real cut) and queries whose relevant
document shares no word with them (so lexical rankings leave it out: BM25 is 0 there).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.control.gate import GateDataset, mode_report, served_candidates
from app.control.pair_export import ExportedPair
from evaluation.judgements import judge_pairs
from evaluation.metrics import evaluate_ranking, order_scores
from tests.api.conftest import wait_for

NAME = "claims"
DEPTH = 100  # compare/metrics and the gate rank to the pool's depth
ALPHA = 0.4  # the corpus's own hybrid weight (not the request default, 0.2)
METRICS = ["MRR", "MAP"]
SETTINGS: dict[str, dict[str, Any]] = {
    "dense": {"mode": "dense"},
    "lexical": {"mode": "lexical"},
    f"hybrid a={ALPHA:g}": {"mode": "hybrid"},  # no alpha: the corpus's, as `rank` resolves it
    "hybrid rrf": {"mode": "hybrid", "fusion": "rrf"},
}
SUBJECTS = ["minister", "celebrity", "doctor", "farmer", "teacher", "senator", "actor", "pilot", "chef"]
VERBS = ["denied", "announced", "invented", "banned", "sold", "hid", "praised", "stole", "tested"]
OBJECTS = ["vaccines", "bananas", "towers", "elections", "sharks", "bleach", "masks", "gold", "water"]
PLACES = ["Kenya", "Brazil", "Texas", "Paris", "Manila", "Lagos", "Ohio", "Lima", "Delhi"]


def corpus() -> list[dict[str, Any]]:
    """150 claims from a fixed vocabulary, each with a `source` and a `year` to filter on."""
    rng = random.Random(7)
    texts = {
        f"The {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} in {rng.choice(PLACES)}."
        for _ in range(400)
    }
    chosen = sorted(texts)[:146]
    # Claims no query shares a word with (their queries say the same in other words).
    chosen += [
        "Moon landing footage was fabricated.",
        "Garlic prevents influenza infections.",
        "Microchips hidden inside injections.",
        "Windmills poison nearby livestock.",
    ]
    return [
        {
            "id": f"c{i:03d}",
            "text": text,
            "metadata": {"source": "a" if i % 3 else "b", "year": 2000 + i % 20},
        }
        for i, text in enumerate(chosen)
    ]


def judged(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs: word-sharing queries about 12 claims, paraphrases of the 4 with no shared word, and one
    judged non-match per query (so the given-candidates task has something to order)."""
    pairs = []
    for doc in documents[:146:12]:
        words = doc["text"].rstrip(".").split()
        pairs.append(
            {"query": f"did a {words[1]} {words[2]} {words[3]}", "document_id": doc["id"], "label": 1}
        )
    paraphrases = ["astronauts never went, the film was faked", "does a clove stop flu",
                   "tracking devices in vaccine shots", "turbines kill cows"]  # fmt: skip
    for doc, query in zip(documents[146:], paraphrases, strict=True):
        pairs.append({"query": query, "document_id": doc["id"], "label": 1})
    negatives = [
        {"query": p["query"], "document_id": documents[(i * 7 + 3) % 146]["id"], "label": 0}
        for i, p in enumerate(pairs)
    ]
    return pairs + negatives


def build(client: TestClient) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The corpus at hybrid a=0.4 by default, its documents and its judged pairs."""
    body = {"name": NAME, "kind": "claim", "ranking": {"mode": "hybrid", "alpha": ALPHA}}
    assert client.post("/v1/corpora", json=body).status_code == 201
    documents = corpus()
    response = client.post(f"/v1/corpora/{NAME}/documents", json={"documents": documents})
    assert response.status_code == 200, response.text
    pairs = judged(documents)
    assert client.post(f"/v1/corpora/{NAME}/pairs", json={"pairs": pairs}).status_code == 201
    return documents, pairs


def qrels_of(pairs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Query text -> {document id: grade}."""
    qrels: dict[str, dict[str, int]] = {}
    for pair in pairs:
        qrels.setdefault(pair["query"], {})[pair["document_id"]] = int(pair["label"])
    return qrels


def served(
    client: TestClient, query: str, how: dict[str, Any], extra: dict[str, Any], qrels: dict[str, int]
) -> dict[str, float]:
    """MRR and MAP of the list `/rank` returns for the query at DEPTH."""
    body = {"query": query, "k": DEPTH, **how, **extra, "rerank": {"enabled": False}}
    response = client.post(f"/v1/corpora/{NAME}/rank", json=body)
    assert response.status_code == 200, response.text
    run = {"q": order_scores([r["id"] for r in response.json()["results"]])}
    return evaluate_ranking({"q": qrels}, run, metrics=METRICS).per_query["q"]


def evaluated(client: TestClient, queries: list[str], qrels: dict[str, dict[str, int]], **body: Any) -> dict:
    """Per-query metrics of `POST /v1/evaluations` over the corpus, keyed by query text."""
    request = {
        "corpus": NAME,
        "queries": [{"id": f"q{i}", "text": q} for i, q in enumerate(queries)],
        "qrels": [
            {"query_id": f"q{i}", "document_id": d, "relevance": g}
            for i, q in enumerate(queries)
            for d, g in qrels[q].items()
        ],
        "metrics": METRICS,
        "top_k": DEPTH,
        "rerank": {"enabled": False},
        **body,
    }
    response = client.post("/v1/evaluations", json=request)
    assert response.status_code == 202, response.text
    report = wait_for(client, response.json()["id"])
    assert report["status"] == "succeeded", report
    return {q: report["per_query"][f"q{i}"] for i, q in enumerate(queries)}


def compared(client: TestClient, how: dict[str, Any], extra: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per-query metrics of the left side of `compare/metrics`, keyed by query text."""
    body = {"left": {**how, "rerank": {"enabled": False}}, "right": {"mode": "dense"}, "metrics": METRICS}
    response = client.post(f"/v1/corpora/{NAME}/compare/metrics", json={**body, **extra})
    assert response.status_code == 200, response.text
    return {row["query"]: row["left"] for row in response.json()["per_query"]}


def gated(
    client: TestClient, pairs: list[dict[str, Any]], documents: list[dict[str, Any]], task: str
) -> dict:
    """Per-setting, per-query metrics as the retraining gate scores the active (serving) model."""
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    texts = {d["id"]: d["text"] for d in documents}
    exported = [ExportedPair(p["query"], texts[p["document_id"]], float(p["label"])) for p in pairs]
    gate = GateDataset(judge_pairs(exported, texts, name="gate"), task)  # type: ignore[arg-type]
    report = mode_report(
        served_candidates(runtime.serving.state(), runtime.sessions, NAME, gate), gate, "MRR"
    )
    text_of = gate.dataset.queries
    return {label: {text_of[q]: v for q, v in r.per_query.items()} for label, r in report.reports.items()}


def close(left: dict[str, float], right: dict[str, float]) -> bool:
    """Equal metrics, to 1e-6."""
    return all(left[m] == pytest.approx(right[m], abs=1e-6) for m in METRICS)


def test_every_scored_list_is_the_served_list(client: TestClient) -> None:
    documents, pairs = build(client)
    positives = [p for p in pairs if p["label"] > 0]
    qrels = qrels_of(pairs)
    relevant = qrels_of(positives)
    queries = list(relevant)
    gate_retrieval = gated(client, positives, documents, "retrieval")
    gate_candidates = gated(client, pairs, documents, "rerank")
    mismatches: list[str] = []
    for label, how in SETTINGS.items():
        ranking = {"ranking": how["mode"], **({"fusion": how["fusion"]} if "fusion" in how else {})}
        for case, extra in (("corpus", {}), ("filter", {"filter": {"source": "a"}})):
            by_eval = evaluated(client, queries, relevant, **ranking, **extra)
            by_compare = compared(client, how, extra)
            for query in queries:
                rank = served(client, query, how, extra, relevant[query])
                sources = {"evaluation": by_eval[query], "compare/metrics": by_compare[query]}
                if case == "corpus":
                    sources["gate"] = gate_retrieval[label][query]
                mismatches += [
                    f"{label}, {case}, {source}: {query!r}: {got} != served {rank}"
                    for source, got in sources.items()
                    if not close(got, rank)
                ]
        # Given candidates: the query's judged documents, ranked as `rank` ranks `candidates`.
        by_rerank = evaluated(client, queries, qrels, mode="rerank", **ranking)
        for query in queries:
            extra = {"candidates": sorted(qrels[query])}
            rank = served(client, query, how, extra, relevant[query])
            for source, got in (("evaluation", by_rerank[query]), ("gate", gate_candidates[label][query])):
                if not close(got, rank):
                    mismatches.append(f"{label}, candidates, {source}: {query!r}: {got} != served {rank}")
    assert not mismatches, "\n".join(mismatches)


def test_lexical_rankings_leave_out_what_shares_no_word(client: TestClient) -> None:
    # The paraphrased queries' relevant claims share no word with them: `rank` never lists them
    # lexically, so every scored copy of that list must give them a reciprocal rank of 0.
    documents, pairs = build(client)
    query = "turbines kill cows"
    body = {"query": query, "k": DEPTH, "mode": "lexical"}
    listed = [r["id"] for r in client.post(f"/v1/corpora/{NAME}/rank", json=body).json()["results"]]
    assert documents[-1]["id"] not in listed
    by_eval = evaluated(client, [query], {query: {documents[-1]["id"]: 1}}, ranking="lexical")
    assert by_eval[query]["MRR"] == 0.0
