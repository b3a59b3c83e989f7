"""What only the pgvector store promises: vectors in the writer's transaction, stateless replicas,
replay for another model, HNSW above a size, retirement of old models, and clear set-up errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.db.repositories.corpora import CorpusRepository
from app.db.repositories.vectors import VectorRepository
from app.serving.runtime import Runtime
from app.stores import pgvector_maintenance
from app.usecases.corpora import CorpusService
from app.usecases.ranking import RankingService
from pairank.models import resolve_model
from tests.helpers.runtime import RuntimeFactory, serve
from tests.helpers.tiny_model import build_tiny_model

pytestmark = pytest.mark.parametrize("database_url", ["pgvector"], indirect=True)
CLAIMS = {"c1": "5G towers spread the coronavirus", "c2": "Drinking bleach cures covid"}


def upsert(runtime: Runtime, documents: dict[str, str], corpus: str = "claims") -> None:
    """Upsert (id, text) documents into `corpus`."""
    CorpusService(runtime).upsert_documents(corpus, [(d, t, None, False) for d, t in documents.items()])


def space_rows(runtime: Runtime, version: str) -> tuple[int, int, int]:
    """(vector rows, the space's mark, the corpus's mark) as stored in the database."""
    with runtime.sessions() as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        repository = VectorRepository(session)
        space = repository.space(corpus.id, version)
        assert space is not None
        return repository.count(space), space.hwm, int(corpus.change_seq)


@pytest.fixture
def writer(make_runtime: RuntimeFactory) -> Runtime:
    """A serving runtime with an empty `claims` corpus."""
    runtime = make_runtime()
    serve(runtime)
    CorpusService(runtime).create_corpus("claims", "claim", None)
    return runtime


def test_a_write_stores_its_vectors_and_mark_in_its_own_transaction(writer: Runtime) -> None:
    upsert(writer, CLAIMS)
    rows, space_mark, corpus_mark = space_rows(writer, writer.serving.version())
    assert rows == 2 and space_mark == corpus_mark == 2
    CorpusService(writer).delete_document("claims", "c1")
    rows, space_mark, corpus_mark = space_rows(writer, writer.serving.version())
    assert rows == 1 and space_mark == corpus_mark == 3  # the vector went with its document


def test_a_replica_sees_a_write_with_no_sync_at_all(writer: Runtime, make_runtime: RuntimeFactory) -> None:
    replica = make_runtime()
    serve(replica)
    RankingService(replica).rank_corpus("claims", "anything", 5, None)  # opened while empty
    upsert(writer, CLAIMS)
    results = RankingService(replica).rank_corpus("claims", CLAIMS["c2"], 1, None).results
    assert [item.id for item in results] == ["c2"]  # no follow(), no sync interval


def test_a_process_serving_another_model_replays_only_what_it_lacks(writer: Runtime, tmp_path: Path) -> None:
    upsert(writer, CLAIMS)
    other = resolve_model(str(build_tiny_model(tmp_path / "other", seed=7)))
    state = writer.serving.build_state(other)  # builds the other model's space from the documents
    assert space_rows(writer, other.version)[:2] == (2, 2)
    upsert(writer, {"c3": "The moon landing was staged"})  # written with the serving model only
    assert space_rows(writer, other.version)[:2] == (2, 2)
    opened = state.store.get("claims")  # a request on the other model catches up first
    assert space_rows(writer, other.version)[:2] == (3, 3)
    query = state.encoder.encode(["moon landing staged"])[0]
    hits = dict(opened.search_one(query, 3))
    expected = state.encoder.encode(["The moon landing was staged"])[0] @ query
    assert max(hits.values()) == pytest.approx(float(expected), abs=1e-4)


@pytest.mark.parametrize("storage", ["vector", "halfvec", "bit"])
def test_a_large_space_gets_its_hnsw_graph_and_answers_like_exact_search(
    writer: Runtime, monkeypatch: pytest.MonkeyPatch, storage: str
) -> None:
    monkeypatch.setattr(pgvector_maintenance, "HNSW_FROM_ROWS", 30)
    CorpusService(writer).create_corpus("graph", "claim", None, {"type": "hnsw", "storage": storage})
    documents = {f"d{i}": f"claim number {i} about topic {i % 7} and place {i % 11}" for i in range(60)}
    upsert(writer, documents, "graph")
    store = writer.serving.state().store
    opened = store.get("graph")
    assert opened in store.due(10_000, 3600.0)
    assert store.checkpoint(opened)
    status = CorpusService(writer).index_status("graph")
    # pgvector before 0.7 has neither halfvec nor bit graphs: such a corpus gets a float32 graph, and says so.
    assert status["structure"] == "hnsw" and status["storage"] == (
        storage if store.quantized_graphs else "vector"
    )
    queries = writer.serving.state().encoder.encode(["topic 3 place 5", "claim number 42"])
    with_graph = opened.search(queries, 5)
    opened.hnsw = False  # the same space searched exactly
    exact = opened.search(queries, 5)
    for approximate, truth in zip(with_graph, exact, strict=True):
        assert len({d for d, _ in approximate} & {d for d, _ in truth}) >= 4


def test_an_activation_keeps_the_previous_model_and_drops_older_ones(writer: Runtime) -> None:
    upsert(writer, CLAIMS)
    with writer.sessions.begin() as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        for version in ("retired-model", "previous-model"):
            VectorRepository(session).create_space(corpus.id, version, 8)
    writer.serving.state().store.activated("previous-model")
    with writer.sessions() as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        repository = VectorRepository(session)
        assert repository.space(corpus.id, "retired-model") is None
        assert repository.space(corpus.id, "previous-model") is not None
        assert repository.space(corpus.id, writer.serving.version()) is not None


def test_search_results_are_cosines_of_unit_vectors(writer: Runtime) -> None:
    upsert(writer, CLAIMS)
    opened = writer.serving.state().store.get("claims")
    matrix = writer.serving.state().store.vectors_of(
        opened, [d for d, _ in opened.search_one(np.ones(32), 2)]
    )
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_copy_rows_works_on_a_connection_no_repository_has_touched(writer: Runtime) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.orm import Session

    from app.db.engine import transaction
    from app.db.repositories.vectors import copy_rows

    upsert(writer, {"c1": "5G towers spread the coronavirus"})
    with writer.sessions() as session:
        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        space = VectorRepository(session).space(corpus.id, writer.serving.state().model_version)
        assert space is not None
        document_id = session.execute(text("SELECT id FROM documents WHERE external_id = 'c1'")).scalar_one()
    # A fresh engine: its first connection has never registered pgvector's types.
    engine = create_engine(writer.settings.resolved_database_url)
    try:
        with transaction(lambda: Session(engine)) as session:
            assert copy_rows(session, space, [(document_id, "x" * 64, np.ones(space.dimension))]) == 1
    finally:
        engine.dispose()
