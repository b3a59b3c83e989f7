"""The search plane on a real runtime (tiny model, every database): the live corpus as the first stage
reads it, filtered search, judged queries ranked for calibration, and a calibrated corpus's decisions."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.errors import ConflictError
from app.db.corpus_lookup import require_corpus
from app.db.engine import transaction
from app.search.candidates import live_candidates
from app.search.decisions import Decider, required_decider
from app.search.filtered import filtered_search, matching_ids
from app.search.first_stage import LiveCorpus
from app.search.ranked import RankedItem
from app.serving.runtime import Runtime
from app.usecases.corpora import CorpusService
from evaluation.datasets import BeirDataset
from evaluation.decision_features import FEATURES
from evaluation.decisions import fit_model
from evaluation.hybrid_eval import fused_run
from indexes.first_stage import BOTH, gather, rank_pool
from indexes.fusion import RankingSetting
from tests.helpers.runtime import RuntimeFactory, serve

TEXTS = {
    "a": "Sharks swim on a flooded highway after the hurricane.",
    "b": "The moon landing was filmed in a studio.",
    "c": "Drinking bleach cures the virus.",
    "d": "5G towers spread the coronavirus.",
    "e": "A shark photographed in a flooded street in Houston.",
    "f": "Vaccines contain microchips to track people.",
}


def loaded(make_runtime: RuntimeFactory) -> Runtime:
    runtime = make_runtime()
    serve(runtime)
    corpora = CorpusService(runtime)
    corpora.create_corpus("claims", "claim", None)
    docs = [(i, t, {"year": 2000 + n}, True) for n, (i, t) in enumerate(TEXTS.items())]
    corpora.upsert_documents("claims", docs)
    return runtime


def test_the_live_corpus_searches_as_the_index_does_and_a_filter_exactly(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = loaded(make_runtime)
    state = runtime.serving.state()
    opened = state.store.get("claims")
    live = LiveCorpus(state.store, opened)
    vector = state.encoder.encode(["shark on a flooded road"])
    assert live.dense_hits(vector, 3, None) == [opened.search_one(vector[0], 3)]
    allowed = matching_ids(runtime.sessions, opened.corpus_id, {"year": {"gte": 2003}})
    assert len(allowed) == 3
    (hits,) = live.dense_hits(vector, 10, np.array(allowed))
    assert {d for d, _ in hits} == set(allowed)
    assert hits == filtered_search(state.store, opened, vector, 10, allowed)[0]
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    cosines = live.cosines(vector[0], [d for d, _ in hits])
    assert all(cosines[d] == pytest.approx(s, abs=1e-5) for d, s in hits)


def test_judged_queries_rank_as_one_pool_ranks_them(make_runtime: RuntimeFactory) -> None:
    runtime = loaded(make_runtime)
    state = runtime.serving.state()
    dataset = BeirDataset(
        {}, {"q1": "shark flooded highway", "q2": "5G virus"}, {"q1": {"a": 1}, "q2": {"d": 1}}
    )
    candidates = live_candidates(state, runtime.sessions, "claims", dataset, "retrieval", 10)
    opened = state.store.get("claims")
    vectors = state.encoder.encode_bulk(list(dataset.queries.values()))
    pools = gather(LiveCorpus(state.store, opened), list(dataset.queries.values()), vectors, 10, BOTH)
    for setting in (RankingSetting("dense"), RankingSetting("lexical"), RankingSetting("hybrid", 0.3)):
        run = fused_run(candidates, setting, 10)
        for (query_id, scores), pool in zip(run.items(), pools, strict=True):
            names = [candidates.names[h.doc_id] for h in rank_pool(pool, setting, 10)]
            assert sorted(scores, key=scores.__getitem__, reverse=True) == names, query_id
    judged = live_candidates(state, runtime.sessions, "claims", dataset, "rerank", 10)
    assert [candidates.names.get(d, judged.names[d]) for d in judged.pools["q1"].ids] == ["a"]


def test_a_decider_holds_for_the_model_it_was_calibrated_with(make_runtime: RuntimeFactory) -> None:
    runtime = loaded(make_runtime)
    state = runtime.serving.state()
    rng = np.random.default_rng(0)
    features = rng.normal(size=(60, len(FEATURES)))
    model = fit_model("logistic", features, (features[:, 0] > 0).astype(int))
    record = {
        "model": state.model_version,
        "decision": model.to_dict(),
        "thresholds": {"match": 0.9, "new": 0.1},
    }
    with transaction(runtime.sessions) as session:
        require_corpus(session, "claims").match_calibration = record
    decider = Decider.of(record, None, state.model_version)
    assert decider is not None and Decider.of(record, None, "another@model") is None
    items = [RankedItem(i, TEXTS[i], 0.9 - 0.1 * r, r + 1) for r, i in enumerate("abc")]
    scored = decider.probabilities("shark highway", items)
    assert all(0.0 <= (item.probability or 0.0) <= 1.0 for item in scored)
    decision, best = decider.decide("shark highway", scored)
    assert decision in {"match", "review", "new"} and best is not None
    with pytest.raises(ConflictError, match="calibrate again"):
        required_decider(record, None, "another@model", "claims")
    with pytest.raises(ConflictError, match="no match calibration"):
        required_decider(None, None, state.model_version, "claims")
