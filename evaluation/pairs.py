"""Pair-task metrics: precision/recall/F1/accuracy at a score threshold, the F1-optimal threshold, and
Spearman/Pearson correlations (x100) for graded similarity.

A pair is predicted positive when its score >= the threshold. Labels of the binary functions must be
0/1 (or booleans). Precision, recall and F1 are 0 where their denominator is 0 (no predicted or no
gold positives), as scikit-learn's `zero_division=0` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairMetrics:
    """Binary classification quality of `score >= threshold`."""

    threshold: float
    precision: float
    recall: float
    f1: float
    accuracy: float


def _as_arrays(
    scores: Sequence[float] | np.ndarray, labels: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Validate equal, non-empty lengths, finite scores and 0/1 labels; return (scores, bool labels)."""
    score_array = np.asarray(scores, dtype=np.float64).reshape(-1)
    label_array = np.asarray(labels, dtype=np.float64).reshape(-1)
    if len(score_array) != len(label_array):
        raise ValueError(f"got {len(score_array)} scores but {len(label_array)} labels")
    if len(score_array) == 0:
        raise ValueError("no pairs to evaluate")
    if not np.isfinite(score_array).all():
        raise ValueError("scores must be finite numbers")
    if not np.isin(label_array, (0.0, 1.0)).all():
        raise ValueError("binary pair labels must be 0 or 1")
    return score_array, label_array == 1.0


def _metrics(threshold: float, true_pos: int, false_pos: int, num_pos: int, total: int) -> PairMetrics:
    """PairMetrics from confusion counts (predicted positives = true_pos + false_pos)."""
    predicted = true_pos + false_pos
    precision = true_pos / predicted if predicted else 0.0
    recall = true_pos / num_pos if num_pos else 0.0
    # 2TP / (2TP + FP + FN) equals 2PR / (P + R), and integer ratios make equal F1s compare exactly equal,
    # which the tie rule of best_f1_threshold relies on.
    f1 = 2 * true_pos / (predicted + num_pos) if true_pos else 0.0
    true_neg = total - num_pos - false_pos
    return PairMetrics(float(threshold), precision, recall, f1, (true_pos + true_neg) / total)


def pair_metrics_at(
    scores: Sequence[float] | np.ndarray, labels: Sequence[float] | np.ndarray, threshold: float
) -> PairMetrics:
    """Precision, recall, F1 and accuracy when pairs scoring >= threshold are predicted positive."""
    score_array, positive = _as_arrays(scores, labels)
    predicted = score_array >= threshold
    true_pos = int((predicted & positive).sum())
    false_pos = int((predicted & ~positive).sum())
    return _metrics(threshold, true_pos, false_pos, int(positive.sum()), len(score_array))


def best_f1_threshold(
    scores: Sequence[float] | np.ndarray, labels: Sequence[float] | np.ndarray
) -> PairMetrics:
    """The threshold (one of the scores) maximizing F1; among equal F1 the highest threshold wins."""
    score_array, positive = _as_arrays(scores, labels)
    order = np.argsort(-score_array, kind="stable")
    sorted_scores, sorted_positive = score_array[order], positive[order]
    true_pos = np.cumsum(sorted_positive)
    false_pos = np.cumsum(~sorted_positive)
    # Only the last position of a run of equal scores is a real cut: `>= threshold` takes the whole run.
    is_cut = np.append(sorted_scores[1:] != sorted_scores[:-1], True)
    num_pos, total = int(positive.sum()), len(score_array)
    best: PairMetrics | None = None
    for index in np.flatnonzero(is_cut):
        candidate = _metrics(
            sorted_scores[index], int(true_pos[index]), int(false_pos[index]), num_pos, total
        )
        # Cuts are visited from the highest threshold down, so a strict `>` keeps the highest on ties:
        # the fewest false duplicates for the same F1.
        if best is None or candidate.f1 > best.f1:
            best = candidate
    assert best is not None  # _as_arrays guarantees at least one pair, hence one cut
    return best


def correlations(
    scores: Sequence[float] | np.ndarray, gold: Sequence[float] | np.ndarray
) -> dict[str, float]:
    """Spearman and Pearson correlation x100 between scores and gold; NaN when either side is constant."""
    from scipy.stats import pearsonr, spearmanr

    score_array = np.asarray(scores, dtype=np.float64).reshape(-1)
    gold_array = np.asarray(gold, dtype=np.float64).reshape(-1)
    if len(score_array) != len(gold_array):
        raise ValueError(f"got {len(score_array)} scores but {len(gold_array)} gold values")
    if len(score_array) < 2:
        raise ValueError("correlations need at least 2 pairs")
    if np.ptp(score_array) == 0 or np.ptp(gold_array) == 0:
        # Undefined, not zero: a constant model tells nothing; scipy would warn and return NaN too.
        return {"spearman": math.nan, "pearson": math.nan}
    spearman = float(spearmanr(score_array, gold_array).statistic)
    pearson = float(pearsonr(score_array, gold_array).statistic)
    return {"spearman": 100.0 * spearman, "pearson": 100.0 * pearson}
