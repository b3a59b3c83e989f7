"""Tests of evaluation.pairs: thresholded metrics, the F1-optimal threshold, correlations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.pairs import PairMetrics, best_f1_threshold, correlations, pair_metrics_at


def test_metrics_at_a_threshold_predict_positive_at_or_above_it() -> None:
    scores = [0.9, 0.8, 0.5, 0.3, 0.1]
    labels = [1, 0, 1, 1, 0]
    # score >= 0.5: predicted 0.9, 0.8, 0.5 -> TP 2, FP 1, FN 1, TN 1
    assert pair_metrics_at(scores, labels, 0.5) == PairMetrics(0.5, 2 / 3, 2 / 3, 2 / 3, 3 / 5)


def test_zero_denominators_give_zero() -> None:
    metrics = pair_metrics_at([0.2, 0.1], [1, 0], 0.9)
    assert (metrics.precision, metrics.recall, metrics.f1, metrics.accuracy) == (0.0, 0.0, 0.0, 0.5)
    assert pair_metrics_at([0.2, 0.1], [0, 0], 0.0).recall == 0.0


def test_best_threshold_is_a_score_and_maximizes_f1() -> None:
    scores = np.array([0.9, 0.8, 0.3, 0.1])
    best = best_f1_threshold(scores, [1, 0, 1, 0])
    assert best == PairMetrics(0.3, 2 / 3, 1.0, 0.8, 0.75)


def test_best_threshold_takes_whole_runs_of_tied_scores() -> None:
    # Cutting inside the tie at 0.5 is impossible with `score >= threshold`.
    best = best_f1_threshold([0.5, 0.5, 0.5, 0.1], [1, 0, 0, 1])
    assert best.threshold in (0.5, 0.1)
    assert best == pair_metrics_at([0.5, 0.5, 0.5, 0.1], [1, 0, 0, 1], best.threshold)


def test_ties_in_f1_go_to_the_highest_threshold() -> None:
    # 0.9 alone: P 1, R 1/2 -> F1 2/3; down to 0.2: TP 2, FP 2 -> P 1/2, R 1 -> F1 2/3.
    best = best_f1_threshold([0.9, 0.6, 0.4, 0.2], [1, 0, 0, 1])
    assert best.threshold == 0.9 and best.f1 == pytest.approx(2 / 3)


def test_no_positive_label_gives_f1_zero_at_the_highest_score() -> None:
    assert best_f1_threshold([0.3, 0.7], [0, 0]) == PairMetrics(0.7, 0.0, 0.0, 0.0, 0.5)


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [([], [], "no pairs"), ([0.1], [1, 0], "labels"), ([0.1], [2], "0 or 1"), ([math.nan], [1], "finite")],
)
def test_bad_inputs_are_rejected(scores: list, labels: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        best_f1_threshold(scores, labels)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), st.booleans()), min_size=1, max_size=30
    )
)
def test_best_threshold_beats_every_score_as_threshold(pairs: list[tuple[float, bool]]) -> None:
    scores = [score for score, _ in pairs]
    labels = [int(label) for _, label in pairs]
    best = best_f1_threshold(scores, labels)
    assert best.threshold in scores
    assert best == pair_metrics_at(scores, labels, best.threshold)
    for threshold in set(scores):
        other = pair_metrics_at(scores, labels, threshold)
        assert other.f1 < best.f1 or (other.f1 == best.f1 and threshold <= best.threshold)


def test_correlations_are_scaled_by_100() -> None:
    result = correlations([0.1, 0.4, 0.35, 0.8], [0.0, 2.0, 1.0, 5.0])
    assert result["spearman"] == pytest.approx(100.0)
    assert result["pearson"] == pytest.approx(100 * np.corrcoef([0.1, 0.4, 0.35, 0.8], [0, 2, 1, 5])[0, 1])


def test_correlations_of_constant_input_are_nan_and_short_input_is_rejected() -> None:
    assert all(math.isnan(value) for value in correlations([0.5, 0.5, 0.5], [1, 2, 3]).values())
    with pytest.raises(ValueError, match="at least 2"):
        correlations([0.5], [1.0])
    with pytest.raises(ValueError, match="gold"):
        correlations([0.5, 0.2], [1.0])
