"""One contract for both vector stores: Faiss (SQLite, PostgreSQL) and pgvector, through the use cases.

Each test runs once per `database_url` parameter; on the `pgvector` one the runtime serves with
PAIRANK_VECTOR_STORE=pgvector (tests/conftest.py), so the same assertions hold for both adapters.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.search.ranking_setting import RankingRequest
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.ranking import RankingService
from tests.helpers.runtime import RuntimeFactory, serve, serving_claims, upsert_claims

CLAIMS = {
    "c1": "5G towers spread the coronavirus",
    "c2": "Drinking bleach cures covid",
    "c3": "The moon landing was staged in a studio",
    "c4": "Vaccines contain microchips for tracking",
}


def ranked(runtime: Runtime, query: str, k: int = 10) -> list[tuple[str, float]]:
    """(id, cosine) of a dense corpus search, best first (a claim corpus would rank hybrid by default)."""
    dense = RankingRequest(mode="dense")
    results = RankingService(runtime).rank_corpus("claims", query, k, None, requested=dense).results
    return [(str(item.id), item.score) for item in results]


def expected_scores(runtime: Runtime, query: str, documents: dict[str, str]) -> dict[str, float]:
    """Cosines computed directly with the serving encoder: what any store must return."""
    vectors = runtime.serving.state().encoder.encode([query, *documents.values()])
    return dict(zip(documents, (vectors[1:] @ vectors[0]).tolist(), strict=True))


@pytest.fixture
def runtime(make_runtime: RuntimeFactory) -> Runtime:
    """A serving runtime with the four claims."""
    return serving_claims(make_runtime, CLAIMS)


def test_search_returns_every_document_with_its_exact_cosine(runtime: Runtime) -> None:
    query = "are vaccines used to track people"
    found = dict(ranked(runtime, query))
    expected = expected_scores(runtime, query, CLAIMS)
    assert set(found) == set(CLAIMS)
    for doc_id, score in expected.items():
        assert found[doc_id] == pytest.approx(score, abs=1e-4)
    scores = [score for _, score in ranked(runtime, query)]
    assert scores == sorted(scores, reverse=True)


def test_updates_and_deletes_are_searched_at_once(runtime: Runtime) -> None:
    upsert_claims(runtime, {"c2": "Vitamin C megadoses cure cancer"})
    CorpusService(runtime).delete_document("claims", "c3")
    current = {**CLAIMS, "c2": "Vitamin C megadoses cure cancer"}
    del current["c3"]
    query = "vitamin c cures cancer"
    found = dict(ranked(runtime, query))
    assert set(found) == set(current)
    assert found["c2"] == pytest.approx(expected_scores(runtime, query, current)["c2"], abs=1e-4)


def test_stored_vectors_equal_fresh_encodings_and_deleted_ones_are_left_out(runtime: Runtime) -> None:
    state = runtime.serving.state()
    opened = state.store.get("claims")
    with runtime.sessions() as session:
        from app.db.repositories.corpora import CorpusRepository
        from app.db.repositories.documents import DocumentRepository

        corpus = CorpusRepository(session).get("claims")
        assert corpus is not None
        ids = DocumentRepository(session, corpus).ids_of(list(CLAIMS))
    matrix = state.store.vectors_of(opened, [ids["c1"], ids["c4"]])
    fresh = state.encoder.encode([CLAIMS["c1"], CLAIMS["c4"]])
    np.testing.assert_allclose(matrix, fresh, atol=1e-5)
    CorpusService(runtime).delete_document("claims", "c4")
    present, vectors = state.store.present_vectors(opened, [ids["c1"], ids["c4"]])
    assert present == [ids["c1"]] and vectors.shape == (1, fresh.shape[1])
    with pytest.raises(KeyError):
        state.store.vectors_of(opened, [ids["c4"]])


def test_one_query_and_a_batch_agree(runtime: Runtime) -> None:
    state = runtime.serving.state()
    opened = state.store.get("claims")
    queries = state.encoder.encode(["bleach cures covid", "faked moon landing"])
    batch = opened.search(queries, 3)
    for query, hits in zip(queries, batch, strict=True):
        one = opened.search_one(query, 3)
        assert [d for d, _ in one] == [d for d, _ in hits]
        assert [s for _, s in one] == pytest.approx([s for _, s in hits], abs=1e-5)
    assert opened.size() == len(CLAIMS)


def test_another_runtime_sees_the_writes_after_following(
    runtime: Runtime, make_runtime: RuntimeFactory
) -> None:
    reader = make_runtime()
    serve(reader)
    upsert_claims(runtime, {"c5": "Garlic protects against the virus"})
    reader.serving.state().store.follow()
    assert "c5" in dict(ranked(reader, "garlic protects you"))


def test_a_restart_serves_everything_written_before(runtime: Runtime, make_runtime: RuntimeFactory) -> None:
    upsert_claims(runtime, {"c5": "Garlic protects against the virus"})
    runtime.close()
    restarted = make_runtime()
    serve(restarted)
    query = "garlic protects you"
    found = dict(ranked(restarted, query))
    expected = expected_scores(restarted, query, {**CLAIMS, "c5": "Garlic protects against the virus"})
    assert set(found) == set(expected)
    assert found["c5"] == pytest.approx(expected["c5"], abs=1e-4)


def test_index_status_reports_the_store_and_the_marks(runtime: Runtime) -> None:
    status = CorpusService(runtime).index_status("claims")
    assert status["store"] == runtime.settings.vector_store
    assert status["size"] == len(CLAIMS)
    assert status["high_water_mark"] == status["corpus_change_seq"] > 0
    assert status["lexical"]["documents"] == len(CLAIMS)
