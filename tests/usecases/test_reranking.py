"""The re-ranking stage without HTTP: only the top k moves, the blend, the request's choices, the checks
on which model may re-rank or serve, and the queue's limit (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from app.control.activation import enqueue_activation
from app.core.errors import (
    ConfigurationError,
    ConflictError,
    NotFoundError,
    RetryLaterError,
)
from app.search.ranked import Ranking
from app.search.ranking_setting import RankingRequest, RerankRequest
from app.serving.reranker import QUEUE_SETTING
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from app.usecases.model_admin import ModelAdminService
from app.usecases.ranking import RankingService
from indexes.fusion import minmax
from tests.helpers.runtime import RuntimeFactory
from tests.helpers.tiny_model import TINY_CORPUS
from tests.usecases.reranking_helpers import DENSE, QUERY, ranked_ids, serving


@pytest.fixture
def runtime(make_runtime: RuntimeFactory, tiny_reranker_dir: Path) -> Runtime:
    """The tiny corpus and re-ranker with the default settings."""
    return serving(make_runtime, tiny_reranker_dir)


def rank(runtime: Runtime, k: int = 10, rerank: RerankRequest | None = None) -> Ranking:
    """Rank the tiny corpus for QUERY (dense first stage)."""
    return RankingService(runtime).rank_corpus(
        "claims", QUERY, k, None, requested=RankingRequest(rerank=rerank)
    )


def test_only_the_top_k_moves_by_the_cross_encoders_score(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    first = rank(runtime)
    assert first.rerank is None and all(item.rerank_score is None for item in first.results)
    reranked = rank(runtime, rerank=RerankRequest(model=version, k=4))
    assert reranked.rerank is not None and reranked.rerank.model == version and reranked.rerank.k == 4
    assert ranked_ids(reranked)[4:] == ranked_ids(first)[4:]  # below k nothing moves
    assert [item.score for item in reranked.results[4:]] == [item.score for item in first.results[4:]]
    assert set(ranked_ids(reranked)[:4]) == set(ranked_ids(first)[:4])  # the top k keeps its members
    scores = [item.rerank_score for item in reranked.results[:4]]
    assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert all(item.rerank_score is None for item in reranked.results[4:])
    assert [item.rank for item in reranked.results] == list(range(1, 11))
    # The scores are the cross-encoder's own: its sigmoid of (query, document).
    reranker = runtime.serving.rerankers.get(version)
    direct = reranker.score(QUERY, [item.text for item in reranked.results[:4]])
    assert np.allclose(direct, scores, atol=1e-6)


def test_fewer_results_than_the_depth_still_rerank_the_whole_depth(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    deep = rank(runtime, k=6, rerank=RerankRequest(model=version, k=6))
    shallow = rank(runtime, k=2, rerank=RerankRequest(model=version, k=6))
    assert ranked_ids(shallow) == ranked_ids(deep)[:2]  # the first stage ranked 6 for the re-ranker


def test_the_blend_weighs_both_stages_min_max_scaled(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    first = rank(runtime, k=5)
    only_first = rank(runtime, k=5, rerank=RerankRequest(model=version, k=5, weight=0.0))
    assert ranked_ids(only_first) == ranked_ids(first)
    blended = rank(runtime, k=5, rerank=RerankRequest(model=version, k=5, weight=0.5))
    by_id = {item.id: item for item in only_first.results}
    ids = ranked_ids(first)
    cross = minmax(np.array([by_id[i].rerank_score for i in ids], dtype=np.float64))
    dense = minmax(np.array([by_id[i].score for i in ids], dtype=np.float64))
    mixed = 0.5 * cross + 0.5 * dense
    expected = [ids[i] for i in sorted(range(5), key=lambda i: (-mixed[i], i))]
    assert ranked_ids(blended) == expected


def test_the_corpus_stage_serves_every_rank_and_a_request_can_turn_it_off(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    corpora = CorpusService(runtime)
    corpus = corpora.set_ranking("claims", {**DENSE, "rerank": {"model": version, "k": 3, "weight": 1.0}})
    assert corpus.default_ranking == {**DENSE, "rerank": {"model": version, "k": 3, "weight": 1.0}}
    stage = rank(runtime).rerank  # this process serves the new setting at once
    assert stage is not None and (stage.model, stage.k, stage.weight) == (version, 3, 1.0)
    deeper = rank(runtime, rerank=RerankRequest(k=5)).rerank  # the request's depth, the corpus's model
    assert deeper is not None and (deeper.model, deeper.k) == (version, 5)
    assert rank(runtime, rerank=RerankRequest(enabled=False)).rerank is None
    corpora.set_ranking("claims", DENSE)  # omitted: no stage
    assert rank(runtime).rerank is None


def test_a_rerank_request_without_a_stage_or_model_names_the_field(runtime: Runtime) -> None:
    with pytest.raises(ConflictError) as refused:
        rank(runtime, rerank=RerankRequest(k=5))
    assert refused.value.field == "rerank.model"


def test_only_a_registered_cross_encoder_may_rerank(runtime: Runtime, tiny_model_dir: Path) -> None:
    corpora = CorpusService(runtime)
    bi_encoder = runtime.serving.state().model_version
    with pytest.raises(ConflictError) as bi:
        corpora.set_ranking("claims", {**DENSE, "rerank": {"model": bi_encoder, "k": 3, "weight": 1.0}})
    assert bi.value.field == "rerank.model" and "bi-encoder" in bi.value.message
    with pytest.raises(NotFoundError) as unknown:
        rank(runtime, rerank=RerankRequest(model="no-such@000000000000"))
    assert unknown.value.field == "rerank.model"
    with pytest.raises(ConflictError):
        rank(runtime, rerank=RerankRequest(model=bi_encoder))
    with pytest.raises(ConflictError) as at_creation:
        corpora.create_corpus(
            "other", "claim", None, ranking={**DENSE, "rerank": {"model": bi_encoder, "k": 3}}
        )
    assert at_creation.value.field == "ranking.rerank.model"


def test_a_cross_encoder_is_never_activated_and_not_deleted_while_a_corpus_uses_it(runtime: Runtime) -> None:
    version = runtime.reranker_version  # type: ignore[attr-defined]
    with pytest.raises(ConflictError) as activation:
        enqueue_activation(runtime.sessions, version)
    assert "cross-encoder" in activation.value.message
    with pytest.raises(ConflictError):
        runtime.serving.registry.spec(version, "bi-encoder")
    CorpusService(runtime).set_ranking(
        "claims", {**DENSE, "rerank": {"model": version, "k": 3, "weight": 1.0}}
    )
    admin = ModelAdminService(runtime)
    with pytest.raises(ConflictError) as deletion:
        admin.delete(version)
    assert "claims" in deletion.value.message
    CorpusService(runtime).set_ranking("claims", DENSE)
    assert admin.delete(version).version == version
    listed = {m.version: m.kind for m in admin.list_models().models}
    assert version not in listed and set(listed.values()) == {"bi-encoder"}


def test_a_full_queue_refuses_with_retry_after_naming_the_setting(
    make_runtime: RuntimeFactory, tiny_reranker_dir: Path
) -> None:
    runtime = serving(make_runtime, tiny_reranker_dir, rerank_max_queued_pairs=1, rerank_batch_pairs=16)
    reranker = runtime.serving.rerankers.get(runtime.reranker_version)  # type: ignore[attr-defined]
    # A long re-ranking holds the queue (accepted: the queue was empty): its chunks of 16 pairs wait
    # while the first passes run, and the next call, over the limit of 1 waiting pair, is refused.
    occupant = threading.Thread(target=reranker.score, args=(QUERY, list(TINY_CORPUS) * 400))
    occupant.start()
    deadline = time.monotonic() + 10
    while reranker.batcher.queued_texts == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    with pytest.raises(RetryLaterError) as refused:
        reranker.score(QUERY, list(TINY_CORPUS))
    occupant.join()
    assert (
        refused.value.field == QUEUE_SETTING and refused.value.retry_after >= 1 and refused.value.limit == 1
    )
    assert len(reranker.score(QUERY, list(TINY_CORPUS))) == len(TINY_CORPUS)  # the queue drained: served


def test_a_cross_encoder_cannot_be_the_serving_model(
    make_runtime: RuntimeFactory, tiny_reranker_dir: Path
) -> None:
    runtime = make_runtime(model=str(tiny_reranker_dir))
    with pytest.raises(ConfigurationError) as refused:
        runtime.serving.registry.active_at_start(runtime.settings.model)
    assert refused.value.field == "PAIRANK_MODEL" and "cross-encoder" in refused.value.message
