"""Match decisions as use cases, without HTTP: calibrate a corpus on its judged pairs, decide texts with
its policy and a recency window, change the policy, score it open-world (every database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.core.errors import ConflictError, InvalidInputError
from app.core.match_policy import MatchPolicy
from app.usecases.calibration.match import calibrate_corpus, open_world_report
from app.usecases.corpora import CorpusService
from app.usecases.matching import MatchService, recency_filter
from app.usecases.pairs import PairInput, PairService
from tests.helpers.runtime import RuntimeFactory, serve

TOPICS = ["vaccines", "bananas", "towers", "elections", "sharks", "bleach", "masks", "gold", "water", "eggs"]


def loaded(make_runtime: RuntimeFactory):  # noqa: ANN201 - a Runtime
    runtime = make_runtime()
    serve(runtime)
    CorpusService(runtime).create_corpus("checks", "claim", None)
    docs = [
        (f"c{i}", f"The mayor said {TOPICS[i % 10]} were banned in town {i // 10} in {1990 + i}.",
         {"published": f"20{10 + i % 15:02d}-01-01"}, True)
        for i in range(40)
    ]  # fmt: skip
    CorpusService(runtime).upsert_documents("checks", docs)
    questions = [f"were {TOPICS[i % 10]} banned in town {i // 10} in {1990 + i}?" for i in range(30)]
    PairService(runtime).add_pairs(
        "checks", [PairInput(q, f"c{i}", None, 1.0) for i, q in enumerate(questions)]
    )
    return runtime, [text for _, text, _, _ in docs]


def test_calibrate_then_decide(make_runtime: RuntimeFactory) -> None:
    runtime, texts = loaded(make_runtime)
    service = MatchService(runtime)
    with pytest.raises(ConflictError, match="no match calibration"):
        service.match("checks", [texts[0]])
    report = calibrate_corpus(runtime, "checks")
    assert report["queries"] == 30 and report["model"] == runtime.serving.state().model_version
    (result,) = service.match("checks", [texts[33]])
    assert result.decision in {"match", "review", "new"} and result.candidates[0].id == "c33"
    assert all(item.probability is not None for item in result.candidates)
    assert (result.match is not None) == (result.decision == "match")
    changed = service.set_policy("checks", {"review_candidates": 2, "match_precision": 0.6})
    assert changed["review_candidates"] == 2
    assert len(service.match("checks", [texts[33]])[0].candidates) == 2
    with pytest.raises(InvalidInputError, match="recency_days"):
        service.set_policy("checks", {"recency_days": 30})
    measured = open_world_report(runtime, "checks", {"q": texts[33]}, {"q": {"c33"}}, 0.5, 0)
    assert set(measured.per_query["q"]) == {"absent", "probability", "match", "new", "right"}


def test_a_recency_window_keeps_recent_documents_only(make_runtime: RuntimeFactory) -> None:
    policy = MatchPolicy(recency_days=365, date_field="published")
    window = recency_filter(policy, datetime(2024, 6, 1, tzinfo=UTC))
    assert window == {"published": {"gte": "2023-06-02"}}
    assert recency_filter(MatchPolicy()) is None
    runtime, texts = loaded(make_runtime)
    service = MatchService(runtime)
    calibrate_corpus(runtime, "checks")
    service.set_policy("checks", {"recency_days": 3650, "date_field": "published"})
    (result,) = service.match("checks", [texts[3]])  # c3 was published in 2013: outside the window
    assert "c3" not in {item.id for item in result.candidates}
    with pytest.raises(InvalidInputError, match="recency window"):
        service.match("checks", [texts[3]], {"published": {"gte": "2000-01-01"}})
