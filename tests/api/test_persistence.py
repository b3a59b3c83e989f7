"""Restarts map the newest snapshot and replay only the change log after it; workers follow the log."""

from __future__ import annotations

import logging
import re
import time

import pytest
from fastapi.testclient import TestClient

from app.core.text_hash import text_sha256
from app.db.engine import transaction
from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.documents import DocumentInput, DocumentRepository
from app.db.repositories.model_versions import ModelRepository
from app.serving.runtime import Runtime
from pairank.models import resolve_model
from tests.api.conftest import CLAIMS, ClientFactory, add_claims

pytestmark = pytest.mark.postgres


def runtime_of(client: TestClient) -> Runtime:
    """The runtime behind a test client's app."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    return runtime


def opening_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the index store said when opening corpora, timings removed."""
    messages = [r.getMessage() for r in caplog.records if r.name == "app.stores.faiss_store"]
    return [re.sub(r" \(\d+\.\d+ s\)", "", m) for m in messages if "mapped" in m or "built" in m]


@pytest.mark.usefixtures("faiss_only")
def test_restart_maps_the_snapshot_without_reencoding(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    add_claims(first)
    first.delete("/v1/corpora/claims/documents/c5")
    query = {"query": "vaccines and autism in children", "k": 4}
    before = first.post("/v1/corpora/claims/rank", json=query).json()
    runtime_of(first).close()  # a clean shutdown checkpoints what changed
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.stores.faiss_store"):
        second = make_client()
    assert opening_log(caplog) == ["index claims: snapshot at 6 mapped, 0 changes replayed"]
    assert second.post("/v1/corpora/claims/rank", json=query).json() == before
    assert second.get("/v1/corpora/claims").json()["document_count"] == 4
    assert second.get("/v1/corpora/claims/documents/c5").status_code == 404
    status = second.get("/v1/corpora/claims/index").json()
    assert status["high_water_mark"] == status["corpus_change_seq"] == 6 and status["size"] == 4
    assert status["structure"] == "flat" and status["mapped_bytes"] == 4 * status["dimension"] * 4


@pytest.mark.usefixtures("faiss_only")
def test_changes_committed_after_the_last_checkpoint_are_replayed(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    add_claims(first)
    runtime = runtime_of(first)
    runtime.close()
    # As if the service died after committing to the database but before any checkpoint:
    text = "Carrots give you perfect night vision."
    with transaction(runtime.sessions) as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        documents = DocumentRepository(session, corpus)
        documents.upsert([DocumentInput("c6", text, text_sha256(text), None)], {})
        gone = documents.get("c1")
        assert gone is not None
        documents.delete(gone)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.stores.faiss_store"):
        second = make_client()
    assert opening_log(caplog) == ["index claims: snapshot at 5 mapped, 2 changes replayed"]
    results = second.post("/v1/corpora/claims/rank", json={"query": text, "k": 10}).json()["results"]
    assert results[0]["id"] == "c6"
    assert "c1" not in [r["id"] for r in results] and len(results) == 5


def test_model_change_rebuilds_indexes(
    make_client: ClientFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from tests.helpers.tiny_model import build_tiny_model

    first = make_client()
    add_claims(first)
    other_model = build_tiny_model(tmp_path_factory.mktemp("other"), seed=7)
    second = make_client(model=str(other_model))
    body = second.post("/v1/corpora/claims/rank", json={"query": CLAIMS[3][1], "k": 1}).json()
    assert body["model"].startswith("other") and body["results"][0]["id"] == "c4"


def test_deleted_corpus_stays_deleted(make_client: ClientFactory) -> None:
    first = make_client()
    add_claims(first)
    assert first.delete("/v1/corpora/claims?confirm=claims").status_code == 204
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


def test_a_corpus_another_worker_created_is_opened_not_answered_empty(make_client: ClientFactory) -> None:
    reader = make_client()  # started before the corpus exists, and never syncing (sync_seconds=0)
    writer = make_client()
    add_claims(writer)
    results = reader.post("/v1/corpora/claims/rank", json={"query": CLAIMS[1][1], "k": 3}).json()["results"]
    assert [r["id"] for r in results][:1] == ["c2"] and len(results) == 3


@pytest.mark.usefixtures("faiss_only")
def test_names_that_slugify_alike_keep_their_own_snapshots(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    for name in ("claims", "claims_", "claims."):
        add_claims(first, corpus=name)
    assert first.delete("/v1/corpora/claims_?confirm=claims_").status_code == 204
    runtime_of(first).close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.stores.faiss_store"):
        second = make_client()
    # Sequence numbers are global: the marks differ; what matters is that nothing was rebuilt.
    assert sorted(re.sub(r"at \d+", "at N", m) for m in opening_log(caplog)) == [
        "index claims.: snapshot at N mapped, 0 changes replayed",
        "index claims: snapshot at N mapped, 0 changes replayed",
    ]
    for name in ("claims", "claims."):
        top = second.post(f"/v1/corpora/{name}/rank", json={"query": CLAIMS[0][1], "k": 1}).json()
        assert top["results"][0]["id"] == "c1"


def test_a_follower_switches_models_without_writing_the_registry(
    make_client: ClientFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from tests.helpers.tiny_model import build_tiny_model

    leader, follower = make_client(), make_client()
    other = build_tiny_model(tmp_path_factory.mktemp("other"), seed=7)
    runtime = runtime_of(leader)
    spec = resolve_model(str(other))
    runtime.serving.registry.register(spec, str(other), "configured")
    runtime.serving.swap(runtime.serving.build_state(spec))
    with runtime.sessions() as session:
        active = ModelRepository(session).active()
        assert active is not None
        version, activated_at = active.version, active.activated_at
    runtime_of(follower).follower.follow_once()
    assert runtime_of(follower).serving.state().model_version == version
    with runtime.sessions() as session:
        after = ModelRepository(session).active()
        assert after is not None and after.version == version
        assert after.activated_at == activated_at  # the follower did not activate it again


def test_a_snapshot_ahead_of_a_restored_database_is_rebuilt(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    add_claims(first)
    runtime = runtime_of(first)
    runtime.close()  # the snapshot now holds c1..c5 at the corpus's mark
    # As if the database were restored from a backup taken after the second claim was written:
    with transaction(runtime.sessions) as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        documents = DocumentRepository(session, corpus)
        for doc_id in ("c3", "c4", "c5"):
            row = documents.get(doc_id)
            assert row is not None
            session.delete(row)
        corpus.document_count = 2
        corpus.change_seq = int(corpus.change_seq) - 3
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.stores.faiss_store"):
        second = make_client()
    assert any("ahead of the database" in r.getMessage() for r in caplog.records)
    results = second.post("/v1/corpora/claims/rank", json={"query": CLAIMS[2][1], "k": 10}).json()["results"]
    assert sorted(r["id"] for r in results) == ["c1", "c2"]
