"""Match decisions: a calibrated probability per candidate, and thresholds chosen for target precisions.

A decision model maps a candidate's features (evaluation/decision_features.py) to the probability that
it is the right match for the query. Two kinds, both stored as JSON (no pickles in the database):
logistic regression on standardised features (`logistic`), and the same followed by isotonic
regression of its scores on held-out outcomes (`isotonic`); the raw top-1 cosine with isotonic
regression (`cosine`) is the baseline every desk starts from. A query's decision reads its most probable
candidate: `match` (an auto-match, no person needed) when that probability reaches the match threshold
and the query is long enough, `new` (no earlier check is likely) below the new threshold, else
`review`. Thresholds are chosen on forward-validated probabilities (evaluation/open_world.py) so that
each decision meets its target precision at the share of never-checked claims the desk expects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.decision_features import FEATURES

__all__ = [
    "DECISION_DEPTH",
    "KINDS",
    "DecisionModel",
    "Thresholds",
    "choose_thresholds",
    "decide",
    "fit_model",
]

KINDS = ("cosine", "logistic", "isotonic")
DECISION_DEPTH = 10  # the served list's top this many: what a decision (and its features) reads
MATCH, REVIEW, NEW = "match", "review", "new"


@dataclass(frozen=True)
class DecisionModel:
    """A fitted probability model: standardised features -> logistic score -> (optional) isotonic map."""

    kind: str
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    isotonic_x: list[float] | None = None  # the isotonic map's knots (score -> probability)
    isotonic_y: list[float] | None = None

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """The probability that each row's candidate is the right match."""
        if len(features) == 0:
            return np.zeros(0, dtype=np.float64)
        if self.kind == "cosine":
            score = features[:, FEATURES.index("cosine")]
        else:
            z = (features - np.asarray(self.mean)) / np.asarray(self.scale)
            score = 1.0 / (1.0 + np.exp(-(z @ np.asarray(self.coef) + self.intercept)))
        if self.isotonic_x is None or self.isotonic_y is None:
            return np.asarray(score, dtype=np.float64)
        return np.interp(score, self.isotonic_x, self.isotonic_y)

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON."""
        return {
            "kind": self.kind, "features": list(FEATURES), "mean": self.mean, "scale": self.scale,
            "coef": self.coef, "intercept": self.intercept, "isotonic_x": self.isotonic_x,
            "isotonic_y": self.isotonic_y,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> DecisionModel:
        """A stored model; ValueError when it was fitted on other features."""
        if list(stored.get("features", [])) != list(FEATURES):
            raise ValueError("the decision model was fitted on other features: calibrate again")
        return cls(
            str(stored["kind"]), list(stored["mean"]), list(stored["scale"]), list(stored["coef"]),
            float(stored["intercept"]), stored.get("isotonic_x"), stored.get("isotonic_y"),
        )  # fmt: skip


def fit_model(
    kind: str, features: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None
) -> DecisionModel:
    """Fit a decision model on candidate rows (label 1: the right match) with optional sample weights."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    if kind not in KINDS:
        raise ValueError(f"unknown decision model {kind!r}; one of {', '.join(KINDS)}")
    width = features.shape[1]
    if kind == "cosine":
        model = DecisionModel(kind, [0.0] * width, [1.0] * width, [0.0] * width, 0.0)
    else:
        mean = features.mean(axis=0)
        scale = np.where(features.std(axis=0) > 1e-9, features.std(axis=0), 1.0)
        regression = LogisticRegression(C=1.0, max_iter=2000)
        if len(set(labels.tolist())) < 2:
            raise ValueError("the judged queries give only one kind of outcome: judge more queries")
        regression.fit((features - mean) / scale, labels, sample_weight=weights)
        model = DecisionModel(
            kind, mean.tolist(), scale.tolist(), regression.coef_[0].tolist(), float(regression.intercept_[0])
        )
        if kind == "logistic":
            return model
    scores = model.probabilities(features)
    isotonic = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    isotonic.fit(scores, labels, sample_weight=weights)
    return DecisionModel(
        kind, model.mean, model.scale, model.coef, model.intercept,
        [float(x) for x in isotonic.X_thresholds_], [float(y) for y in isotonic.y_thresholds_],
    )  # fmt: skip


@dataclass(frozen=True)
class Thresholds:
    """Where decisions change: `match` at or above `match`, `new` below `new`, `review` between."""

    match: float
    new: float


def _best_cut(
    scores: np.ndarray, good: np.ndarray, weights: np.ndarray, target: float, above: bool
) -> float | None:
    """The cut that decides the most (weighted) queries while its decided share stays `target` right:
    deciding those at or above it (`above`), or those below it."""
    order = np.argsort(-scores if above else scores, kind="stable")
    ranked, right, weight = scores[order], good[order].astype(np.float64), weights[order]
    precision = np.cumsum(right * weight) / np.maximum(np.cumsum(weight), 1e-12)
    best: float | None = None
    for i in range(len(ranked)):
        # A cut between tied scores is not a cut: decide a whole run of ties or none of it.
        if i + 1 < len(ranked) and ranked[i + 1] == ranked[i]:
            continue
        if precision[i] >= target:
            best = float(ranked[i]) if above else float(np.nextafter(ranked[i], np.inf))
    return best


def choose_thresholds(
    top_probability: np.ndarray,
    match_right: np.ndarray,
    absent: np.ndarray,
    weights: np.ndarray,
    match_precision: float,
    new_precision: float,
) -> Thresholds:
    """Thresholds on each query's best probability: `match` the lowest at which auto-matches are right
    `match_precision` of the time, `new` the highest below which `new` is right `new_precision` of the
    time (never above `match`); 1.0 / 0.0 when no cut meets a target (that decision is never made)."""
    match = _best_cut(top_probability, match_right, weights, match_precision, above=True)
    new = _best_cut(top_probability, absent, weights, new_precision, above=False)
    match_at = match if match is not None else 1.0 + 1e-9
    new_at = min(new if new is not None else 0.0, match_at)
    return Thresholds(match_at, new_at)


def decide(probability: float, thresholds: Thresholds, long_enough: bool) -> str:
    """One query's decision from its best candidate's probability."""
    if probability >= thresholds.match and long_enough:
        return MATCH
    if probability < thresholds.new:
        return NEW
    return REVIEW


def top_of(probabilities: Sequence[float]) -> int:
    """The most probable candidate's position (the first on ties: the served order decides)."""
    return int(np.argmax(np.asarray(probabilities))) if len(probabilities) else -1
