"""Re-ranking end to end across real processes: `pairank models register` stores a trained cross-encoder
in the registry, and a `pairank serve` process re-orders a corpus's top k with it over HTTP (SQLite,
PostgreSQL and pgvector)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.processes import ServerFactory
from tests.helpers.tiny_model import TINY_CORPUS

ADMIN = {"X-API-Key": "k"}  # the service_env fixture's PAIRANK_ADMIN_API_KEY
QUERY = "is it true that vaccines cause autism in young children?"  # one the tiny re-ranker trained on


def models_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`pairank models ...` as an operator runs it."""
    command = [sys.executable, "-m", "pairank.cli", "models", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_served_corpus_reranks_its_top_k_with_a_registered_cross_encoder(
    start_server: ServerFactory, service_env: dict[str, str], tiny_reranker_dir: Path, database_url: str
) -> None:
    registered = models_cli(service_env, "register", str(tiny_reranker_dir))
    assert registered.returncode == 0, registered.stderr
    info = json.loads(registered.stdout)
    assert info["kind"] == "cross-encoder" and info["created"] is True
    again = json.loads(models_cli(service_env, "register", str(tiny_reranker_dir)).stdout)
    assert again == {**info, "created": False}
    missing = models_cli(service_env, "register", str(tiny_reranker_dir / "nope"))
    assert missing.returncode == 1 and "no folder" in missing.stderr

    server = start_server()
    http = server.http
    listed = {m["version"]: m for m in http.get("/admin/models", headers=ADMIN).json()["models"]}
    store = "database" if database_url.startswith("postgresql") else "local"
    assert listed[info["version"]]["kind"] == "cross-encoder"
    assert listed[info["version"]]["artifact_store"] == store  # its files, loadable on any machine

    dense = {"mode": "dense", "alpha": 0.2, "fusion": "linear"}
    assert (
        http.post("/v1/corpora", json={"name": "claims", "kind": "claim", "ranking": dense}).status_code
        == 201
    )
    documents = [{"id": f"t{i}", "text": text} for i, text in enumerate(TINY_CORPUS)]
    assert http.post("/v1/corpora/claims/documents", json={"documents": documents}).status_code == 200

    def rank(**body: Any) -> dict[str, Any]:
        response = http.post("/v1/corpora/claims/rank", json={"query": QUERY, "k": 10, **body})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    first = rank()
    stage = {"model": info["version"], "k": 4, "weight": 1.0}
    put = http.put("/v1/corpora/claims/ranking", json={**dense, "rerank": stage}, headers=ADMIN)
    assert put.status_code == 200, put.text
    reranked = rank()
    assert reranked["ranking"]["rerank"] == stage
    ids, before = [r["id"] for r in reranked["results"]], [r["id"] for r in first["results"]]
    assert ids[4:] == before[4:] and set(ids[:4]) == set(before[:4])  # only the top 4 moved
    head = [r["rerank_score"] for r in reranked["results"][:4]]
    assert head == sorted(head, reverse=True) and all(0 < s < 1 for s in head)
    # Over the whole corpus, the trained re-ranker puts the claim asked about first, wherever the tiny
    # bi-encoder had it; the Server-Timing header shows the stage.
    whole = rank(rerank={"k": 10})
    assert whole["ranking"]["rerank"]["k"] == 10 and whole["results"][0]["id"] == "t2"
    timed = http.post("/v1/corpora/claims/rank", json={"query": QUERY}).headers["server-timing"]
    assert "rerank;dur=" in timed and "rerank_queue;dur=" in timed
