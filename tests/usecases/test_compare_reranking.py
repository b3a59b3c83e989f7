"""Compare with a re-ranking stage, without HTTP: each side re-ranks exactly as `rank` does (the
corpus's stage unless the side says otherwise), and the metrics over the judged queries score the
re-ranked order (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.errors import ConflictError
from app.search.ranked import Ranking
from app.search.ranking_setting import RankingRequest, RerankRequest
from app.serving.runtime import Runtime
from app.usecases.compare import CompareService, Side
from app.usecases.corpora import CorpusService
from app.usecases.pairs import PairInput, PairService
from app.usecases.ranking import RankingService
from evaluation.metrics import evaluate_ranking
from tests.helpers.runtime import RuntimeFactory
from tests.helpers.tiny_model import TINY_CORPUS
from tests.usecases.reranking_helpers import DENSE, QUERY, ranked_ids, serving

# Judged queries about the tiny corpus: each with one relevant claim and one judged not relevant.
JUDGED = {
    QUERY: ("t6", "t0"),
    "did the moon landing really happen": ("t0", "t3"),
    "bleach coronavirus fact check": ("t1", "t2"),
}


@pytest.fixture
def runtime(make_runtime: RuntimeFactory, tiny_reranker_dir: Path) -> Runtime:
    """The tiny corpus (dense) with the tiny re-ranker registered and three queries judged."""
    runtime = serving(make_runtime, tiny_reranker_dir)
    pairs = [
        PairInput(query, doc, None, label)
        for query, (relevant, other) in JUDGED.items()
        for doc, label in ((relevant, 1.0), (other, 0.0))
    ]
    PairService(runtime).add_pairs("claims", pairs)
    return runtime


def rank(runtime: Runtime, query: str = QUERY, rerank: RerankRequest | None = None) -> Ranking:
    """What a rank call of every document answers."""
    return RankingService(runtime).rank_corpus(
        "claims", query, len(TINY_CORPUS), None, requested=RankingRequest(rerank=rerank)
    )


def side(rerank: RerankRequest | None = None) -> Side:
    """A side ranked as the corpus ranks, with these re-ranking choices."""
    return Side(ranking=RankingRequest(rerank=rerank))


def test_a_side_reranks_exactly_as_rank_does(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    stage = RerankRequest(model=version, k=5)
    left, right = CompareService(runtime).compare_query("claims", QUERY, 10, side(), side(stage))
    assert left.rerank is None and ranked_ids(left) == ranked_ids(rank(runtime))
    expected = rank(runtime, rerank=stage)
    assert right.rerank is not None and (right.rerank.model, right.rerank.k) == (version, 5)
    assert ranked_ids(right) == ranked_ids(expected) != ranked_ids(left)
    scores = [r.rerank_score for r in expected.results]
    assert [r.rerank_score for r in right.results] == pytest.approx(scores)
    assert [r.rank for r in right.results] == list(range(1, len(TINY_CORPUS) + 1))


def test_the_corpus_stage_is_the_default_side_and_a_side_can_turn_it_off(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    CorpusService(runtime).set_ranking("claims", {**DENSE, "rerank": {"model": version, "k": 4}})
    left, right = CompareService(runtime).compare_query(
        "claims", QUERY, 10, Side(), side(RerankRequest(enabled=False))
    )
    assert left.rerank is not None and ranked_ids(left) == ranked_ids(rank(runtime))
    assert right.rerank is None
    assert ranked_ids(right) == ranked_ids(rank(runtime, rerank=RerankRequest(enabled=False)))


def test_metrics_score_the_reranked_order(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    stage = RerankRequest(model=version, k=6)
    report = CompareService(runtime).compare_metrics("claims", side(), side(stage), ["MRR", "MAP"], 10)
    assert report.left.rerank is None and report.right.rerank is not None
    assert report.right.rerank.k == 6
    qrels = {q: {relevant: 1, other: 0} for q, (relevant, other) in JUDGED.items()}
    for which, rerank in ((report.left, None), (report.right, stage)):
        run = {}
        for query in report.queries:
            ids = ranked_ids(rank(runtime, query, rerank))
            run[query] = {str(i): float(len(ids) - r) for r, i in enumerate(ids)}
        expected = evaluate_ranking({q: qrels[q] for q in report.queries}, run, metrics=["MRR", "MAP"])
        assert which.means == pytest.approx(expected.means)
        for got, query in zip(which.per_query, report.queries, strict=True):
            assert got == pytest.approx(expected.per_query[query])


def test_a_side_asking_for_a_stage_names_its_own_field(runtime: Runtime) -> None:
    compare = CompareService(runtime)
    with pytest.raises(ConflictError) as no_stage:
        compare.compare_query("claims", QUERY, 5, side(), side(RerankRequest(k=3)))
    assert no_stage.value.field == "right.rerank.model"
    bi_encoder = runtime.serving.state().model_version
    with pytest.raises(ConflictError) as wrong_kind:
        compare.compare_metrics("claims", side(RerankRequest(model=bi_encoder)), side(), None, 10)
    assert wrong_kind.value.field == "left.rerank.model"
