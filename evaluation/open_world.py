"""The open-world protocol: learn and measure match decisions the way a desk meets its queries.

Every judged query is ranked twice by the one first stage: with the corpus as it is (`present`: its
claim was checked before) and with its relevant documents and their twins left out (`absent`: the claim
was never checked, so every candidate is wrong). Both worlds of a query train the decision model, the
absent one weighted by the share of never-checked claims the desk expects (`absent_share`). Validation
runs forward in time: at each cut point a model learns from the earlier queries and decides the later
block, so the precision a desk is promised is measured on queries the model never saw, as new tips
arrive after the judgements it learned from.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evaluation.decision_features import Candidate, candidate_features
from evaluation.decisions import MATCH, NEW, REVIEW, DecisionModel, Thresholds, decide, fit_model, top_of
from evaluation.forward_splits import forward_splits

__all__ = ["JudgedQuery", "Outcome", "decision_report", "forward_outcomes", "training_rows"]


@dataclass(frozen=True)
class JudgedQuery:
    """One judged query in both worlds (its candidates in the served order) and what is right for it."""

    query: str
    gold: frozenset[str]  # its relevant documents and their twins: any of them is a right match
    present: list[Candidate]
    absent: list[Candidate]  # ranked with `gold` left out of the corpus

    @property
    def words(self) -> int:
        """How many words the query has (short texts never auto-match, by policy)."""
        return len(self.query.split())


@dataclass(frozen=True)
class Outcome:
    """One query in one world, decided: its best candidate's probability and what was right."""

    absent: bool  # the world where the claim was never checked
    probability: float  # the best candidate's
    right_if_matched: bool  # the best candidate is a right match
    gold_listed: bool  # a right match is among the candidates (shown for review)
    words: int
    fold: int = 0


def training_rows(
    queries: Sequence[JudgedQuery], absent_share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, weights) over both worlds' candidates: a candidate is right when it is gold."""
    rows, labels, weights = [], [], []
    for judged in queries:
        for candidates, weight in ((judged.present, 1.0 - absent_share), (judged.absent, absent_share)):
            if not candidates:
                continue
            rows.append(candidate_features(judged.query, candidates))
            labels += [int(c.doc_id in judged.gold) for c in candidates]
            weights += [weight] * len(candidates)
    if not rows:
        return np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    return np.vstack(rows), np.asarray(labels), np.asarray(weights, dtype=np.float64)


def outcomes(model: DecisionModel, queries: Sequence[JudgedQuery], fold: int = 0) -> list[Outcome]:
    """Each query decided by `model` in both worlds."""
    found = []
    for judged in queries:
        for absent, candidates in ((False, judged.present), (True, judged.absent)):
            probabilities = model.probabilities(candidate_features(judged.query, candidates))
            best = top_of(probabilities.tolist())
            found.append(
                Outcome(
                    absent,
                    float(probabilities[best]) if best >= 0 else 0.0,
                    best >= 0 and candidates[best].doc_id in judged.gold,
                    any(c.doc_id in judged.gold for c in candidates),
                    judged.words,
                    fold,
                )
            )
    return found


def forward_outcomes(
    queries: Sequence[JudgedQuery], kind: str, absent_share: float, folds: int, min_train: float = 0.4
) -> list[Outcome]:
    """Queries (oldest first) decided forward (evaluation/forward_splits.py): at each of `folds` cut
    points after the first `min_train` share, a model fitted on every earlier query decides the block
    after it. A query text judged twice counts at its first appearance."""
    first = {q.query: q for q in reversed(queries)}
    ordered = [first[text] for text in dict.fromkeys(q.query for q in queries)]
    found: list[Outcome] = []
    for fold, split in enumerate(forward_splits([q.query for q in ordered], folds, min_train)):
        features, labels, weights = training_rows(ordered[: split.cut], absent_share)
        model = fit_model(kind, features, labels, weights)
        found += outcomes(model, ordered[split.cut : split.cut + len(split.validate)], fold)
    return found


@dataclass
class DecisionRates:
    """Precision and coverage of each decision over some outcomes (absent ones weighted by the share)."""

    match_precision: float | None
    match_coverage: float  # right auto-matches / queries whose claim is present
    new_precision: float | None
    new_coverage: float  # `new` answers / queries whose claim is absent
    gold_shown: float  # present queries whose right match is the match or a review candidate
    decided: dict[str, float] = field(default_factory=dict)  # share of each decision


def rates(
    found: Sequence[Outcome], thresholds: Thresholds, absent_share: float, min_words: int
) -> DecisionRates:
    """What the thresholds do to these outcomes; precisions weigh each world by the expected share of
    never-checked claims, coverages are within each world."""
    weight = {False: 1.0 - absent_share, True: absent_share}
    decided = {MATCH: 0.0, REVIEW: 0.0, NEW: 0.0}
    right_matches = right_news = shown = 0
    for outcome in found:
        decision = decide(outcome.probability, thresholds, outcome.words >= min_words)
        decided[decision] += weight[outcome.absent]
        if outcome.absent:
            right_news += decision == NEW
        else:
            right_matches += decision == MATCH and outcome.right_if_matched
            shown += outcome.gold_listed and decision != NEW
    present = sum(1 for o in found if not o.absent)
    absent = len(found) - present
    total = sum(decided.values()) or 1.0
    return DecisionRates(
        right_matches * weight[False] / decided[MATCH] if decided[MATCH] else None,
        right_matches / present if present else 0.0,
        right_news * weight[True] / decided[NEW] if decided[NEW] else None,
        right_news / absent if absent else 0.0,
        shown / present if present else 0.0,
        {decision: value / total for decision, value in decided.items()},
    )


def decision_report(
    found: Sequence[Outcome], thresholds: Thresholds, absent_share: float, min_words: int
) -> dict[str, object]:
    """Each decision's precision and coverage over all forward outcomes, and their spread over folds."""
    overall = rates(found, thresholds, absent_share, min_words)
    per_fold = [
        rates([o for o in found if o.fold == fold], thresholds, absent_share, min_words)
        for fold in sorted({o.fold for o in found})
    ]

    def spread(name: str) -> float | None:
        values = [getattr(r, name) for r in per_fold if getattr(r, name) is not None]
        return statistics.stdev(values) if len(values) > 1 else None

    names = ("match_precision", "match_coverage", "new_precision", "new_coverage", "gold_shown")
    return {
        **{name: getattr(overall, name) for name in names},
        "spread": {name: spread(name) for name in names},
        "decided": overall.decided,
        "folds": len(per_fold),
        "queries": sum(1 for o in found if not o.absent),
    }


def reliability(found: Sequence[Outcome], bins: int = 10) -> list[dict[str, float]]:
    """Predicted against observed: per probability bin, the mean best probability and how often the
    best candidate was right (over both worlds), with the bin's count."""
    curve = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = [o for o in found if low <= o.probability < high or (high == 1.0 and o.probability == 1.0)]
        if inside:
            curve.append(
                {
                    "low": float(low),
                    "high": float(high),
                    "predicted": statistics.fmean(o.probability for o in inside),
                    "observed": statistics.fmean(float(o.right_if_matched and not o.absent) for o in inside),
                    "count": float(len(inside)),
                }
            )
    return curve
