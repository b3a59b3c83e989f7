"""`halfvec` and `bit` corpora on pgvector >= 0.7: their float16 or binary-quantized HNSW graph is used,
and re-scoring the candidates from the float32 rows ranks like exact search."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from app.db.engine import transaction
from app.db.repositories.vectors import VectorRepository, copy_rows, hnsw_index_name
from app.db.vector_schema import build_hnsw, graph_operand
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from tests.helpers.runtime import RuntimeFactory, serve

pytestmark = pytest.mark.parametrize("database_url", ["pgvector"], indirect=True)
ROWS, QUERIES, K = 2000, 40, 10


@pytest.fixture
def runtime(make_runtime: RuntimeFactory) -> Runtime:
    """A serving runtime on a pgvector with halfvec (skipped on older ones, e.g. the pgserver wheel's 0.6)."""
    runtime = make_runtime()
    serve(runtime)
    if not runtime.serving.state().store.quantized_graphs:
        pytest.skip("pgvector < 0.7 has no halfvec or bit graphs: set TEST_PGVECTOR_URL to a newer server")
    return runtime


# Binary quantization keeps one bit of 384 floats: its Hamming order is coarse, so it needs more candidates.
@pytest.mark.parametrize(("storage", "ef_search"), [("halfvec", 40), ("bit", 200)])
def test_a_compact_graph_is_searched_and_ranks_like_exact_search(
    runtime: Runtime, storage: str, ef_search: int
) -> None:
    service = CorpusService(runtime)
    service.create_corpus("half", "claim", None, {"type": "hnsw", "storage": storage})
    for start in range(0, ROWS, 1000):  # the API's batch limit
        batch = range(start, start + 1000)
        service.upsert_documents("half", [(f"d{i}", f"document {i}", None, False) for i in batch])
    opened = runtime.serving.state().store.get("half")
    space = opened.space
    # Clustered synthetic vectors in place of the tiny model's: near neighbours that float16 must keep apart.
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(20, space.dimension))
    vectors = centres[rng.integers(0, 20, ROWS)] + 0.3 * rng.normal(size=(ROWS, space.dimension))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    with transaction(runtime.sessions) as session:
        rows = text("SELECT document_id, text_sha256 FROM document_vectors WHERE space_id = :s ORDER BY 1")
        ids = [(int(d), str(h)) for d, h in session.execute(rows, {"s": space.id})]
        copy_rows(session, space, [(d, h, v) for (d, h), v in zip(ids, vectors, strict=True)])
    build_hnsw(runtime.serving.state().store.engine, space, 16, 64, storage)
    with transaction(runtime.sessions) as session:
        session.execute(text("ANALYZE document_vectors"))  # the planner's row count, as a live table has
    queries = vectors[rng.choice(ROWS, QUERIES, replace=False)] + 0.05 * rng.normal(
        size=(QUERIES, space.dimension)
    )
    with runtime.sessions() as session:
        repository = VectorRepository(session)
        approximate = repository.search(space, queries, K, ef_search, storage)
        exact = repository.search(space, queries, K, None)
    graph = graph_operand(storage, space.dimension)
    with runtime.sessions() as session:
        VectorRepository(session)  # registers the vector type for the query parameter
        session.execute(text("SET LOCAL hnsw.ef_search = 40"))
        plan = "\n".join(
            str(row[0])
            for row in session.execute(
                text(
                    f"EXPLAIN SELECT document_id FROM document_vectors WHERE space_id = {space.id} "
                    f"ORDER BY {graph.expression} {graph.distance} {graph.query} LIMIT 40"
                ),
                {"q": queries[0].astype(np.float32)},
            )
        )
    # The graph's expression and operator match the index (at 200 of 2,000 rows the planner may sort
    # instead: a seq scan of the sign bits, the same candidates as an exhaustive graph walk).
    assert hnsw_index_name(space) in plan
    recall = np.mean(
        [len({d for d, _ in a} & {d for d, _ in e}) / K for a, e in zip(approximate, exact, strict=True)]
    )
    assert recall >= 0.95
    # Scores are re-computed from the float32 rows: a hit found by both has the same cosine.
    for found, truth in zip(approximate, exact, strict=True):
        true_scores = dict(truth)
        assert all(s == pytest.approx(true_scores[d], abs=1e-6) for d, s in found if d in true_scores)
