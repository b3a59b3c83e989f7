"""Which ranking a corpus uses, and the one record shape every stored choice of it takes."""

from __future__ import annotations

import pytest

from app.search.ranking_setting import (
    RankingRequest,
    choose_ranking,
    given_ranking,
    ranking_record,
    resolve_mode,
    stored_setting,
)
from evaluation.metrics import RankingReport
from indexes.fusion import DEFAULT_ALPHA, RankingSetting

# Records as releases before the one record shape stored them (a gate's choice without the
# cross-validation keys, a calibration without a source): still read.
OLD_GATE_RECORD = {"model": "m@1", "mode": "hybrid", "alpha": 0.3, "fusion": "linear", "metric": "MRR",
                   "value": 0.5, "settings": {"dense": 0.4}, "queries": 12, "task": "retrieval",
                   "source": "retraining gate", "calibrated_at": "2025-01-01T00:00:00"}  # fmt: skip
OLD_CALIBRATION = {"model": "m@1", "mode": "lexical", "alpha": 0.0, "fusion": "linear", "metric": "MAP",
                   "value": 0.6, "cv_mean": 0.5, "cv_std": 0.1, "chosen_per_fold": ["lexical"],
                   "settings": {"lexical": 0.6}, "queries": 9, "task": "rerank",
                   "calibrated_at": "2025-01-01T00:00:00"}  # fmt: skip


def test_old_records_are_read_as_their_setting() -> None:
    assert stored_setting(OLD_GATE_RECORD) == RankingSetting("hybrid", 0.3, "linear")
    assert stored_setting(OLD_CALIBRATION) == RankingSetting("lexical", 0.0, "linear")
    assert stored_setting({"mode": "hybrid"}) == RankingSetting("hybrid", DEFAULT_ALPHA, "linear")
    assert stored_setting(None) is None and stored_setting({}) is None


def test_a_request_then_the_calibration_for_the_model_then_the_default_then_dense() -> None:
    default = {"mode": "hybrid", "alpha": DEFAULT_ALPHA, "fusion": "linear"}
    assert resolve_mode(None, OLD_CALIBRATION, "m@1", default).mode == "lexical"
    assert resolve_mode(None, OLD_CALIBRATION, "other", default) == RankingSetting("hybrid", DEFAULT_ALPHA)
    assert resolve_mode(None, None, "m@1") == RankingSetting("dense", DEFAULT_ALPHA)
    asked = resolve_mode(RankingRequest(alpha=0.7), OLD_GATE_RECORD, "m@1")
    assert asked == RankingSetting("hybrid", 0.7, "linear")


def _reports(values: dict[str, dict[str, float]]) -> dict[str, RankingReport]:
    return {
        label: RankingReport(
            means={"MRR": sum(per_query.values()) / len(per_query)},
            per_query={q: {"MRR": v} for q, v in per_query.items()},
        )
        for label, per_query in values.items()
    }


def test_a_chosen_and_a_given_setting_are_stored_in_one_shape() -> None:
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(4)}
    queries = [f"q{i}" for i in range(4)]
    reports = _reports({"dense": dict.fromkeys(queries, 0.5), "lexical": dict.fromkeys(queries, 1.0)})
    chosen = choose_ranking(reports, qrels, "MRR", folds=5)
    assert chosen.setting == RankingSetting("lexical") and chosen.value == pytest.approx(1.0)
    assert chosen.cv_mean == pytest.approx(1.0) and len(chosen.chosen_per_fold) == 4  # one fold per group
    given = given_ranking(RankingSetting("dense"), reports, "MRR")
    assert given.value == pytest.approx(0.5) and given.cv_mean is None
    records = [ranking_record("m@1", c, "MRR", 4, "retrieval", "test", "now") for c in (chosen, given)]
    assert records[0].keys() == records[1].keys()
    assert stored_setting(records[0]) == chosen.setting and stored_setting(records[1]) == given.setting
