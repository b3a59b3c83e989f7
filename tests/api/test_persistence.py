"""Documents and indexes survive a restart without re-encoding; a crash before the index save heals."""

from __future__ import annotations

import logging
import time

import pytest

from app.db.engine import transaction
from app.db.repository import CorpusRepository, DocumentInput, DocumentRepository
from app.services.encoder import text_sha256
from app.services.runtime import Runtime
from tests.api.conftest import CLAIMS, ClientFactory, add_claims


def _index_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "app.services.index_store" and "re-encoded" in r.message
    ]


def test_restart_keeps_documents_and_results_without_reencoding(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    add_claims(first)
    first.delete("/v1/corpora/claims/documents/c5")
    query = {"query": "vaccines and autism in children", "k": 4}
    before = first.post("/v1/corpora/claims/rank", json=query).json()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.services.index_store"):
        second = make_client()
    assert _index_log(caplog) == ["index claims: 4 documents (loaded, 0 re-encoded)"]
    after = second.post("/v1/corpora/claims/rank", json=query).json()
    assert after == before
    assert second.get("/v1/corpora/claims").json()["document_count"] == 4
    assert second.get("/v1/corpora/claims/documents/c5").status_code == 404


def test_changes_made_while_index_was_not_saved_are_reconciled(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    add_claims(first)
    runtime: Runtime = first.app.state.runtime  # type: ignore[attr-defined]
    # As if the service died after committing to the database but before saving the index bundle:
    with transaction(runtime.sessions) as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        documents = DocumentRepository(session, corpus)
        text = "Carrots give you perfect night vision."
        documents.upsert([DocumentInput("c6", text, text_sha256(text), None)], {})
        gone = documents.get("c1")
        assert gone is not None
        documents.delete(gone)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.services.index_store"):
        second = make_client()
    assert _index_log(caplog) == ["index claims: 5 documents (loaded, 2 re-encoded)"]
    results = second.post("/v1/corpora/claims/rank", json={"query": text, "k": 10}).json()["results"]
    assert results[0]["id"] == "c6"
    assert "c1" not in [r["id"] for r in results] and len(results) == 5


def test_model_change_rebuilds_indexes(
    make_client: ClientFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from pairank.tiny import build_tiny_model

    first = make_client()
    add_claims(first)
    other_model = build_tiny_model(tmp_path_factory.mktemp("other"), seed=7)
    second = make_client(model=str(other_model))
    body = second.post("/v1/corpora/claims/rank", json={"query": CLAIMS[3][1], "k": 1}).json()
    assert body["model"].startswith("other") and body["results"][0]["id"] == "c4"


def test_deleted_corpus_stays_deleted(make_client: ClientFactory) -> None:
    first = make_client()
    add_claims(first)
    assert first.delete("/v1/corpora/claims").status_code == 204
    second = make_client()
    assert second.get("/v1/corpora/claims").status_code == 404
    add_claims(second)
    assert second.get("/v1/corpora/claims").json()["document_count"] == len(CLAIMS)


def test_writes_of_another_worker_become_visible(make_client: ClientFactory) -> None:
    writer = make_client()
    add_claims(writer)
    reader = make_client(sync_seconds=0.1)
    text = "Carrots give you perfect night vision."
    writer.post("/v1/corpora/claims/documents", json={"documents": [{"id": "c6", "text": text}]})
    writer.delete("/v1/corpora/claims/documents/c1")
    deadline = time.monotonic() + 20
    ids: list[str] = []
    while time.monotonic() < deadline:
        results = reader.post("/v1/corpora/claims/rank", json={"query": text, "k": 10}).json()["results"]
        ids = [r["id"] for r in results]
        if ids and ids[0] == "c6" and "c1" not in ids:
            break
        time.sleep(0.05)
    assert ids[0] == "c6" and "c1" not in ids and len(ids) == 5
