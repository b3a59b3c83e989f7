"""The retraining gate by cross-validation, for corpora whose dev set is too small to compare two models.

With n dev queries one query moves HasPositive@1 by 1/n, and the paired standard error of a gain is
about sqrt(p / n) when a fraction p of the queries change their answer between the two models. On
PFCC-S (p ~ 0.1) that is a noise band (two standard errors) of 7 points at 80 dev queries and still
4.5 at 200, while a real fine-tuning gain measured by cross-validation is 3-4 points
(benchmarks/hybrid.md): below CV_BELOW_DEV_QUERIES dev queries a dev-set gate can only reject. So
the job trains K fold models instead (`pairank train` with a `cv:` section, training/cross_validation.py)
over all the corpus's stored pairs (train + dev) in the order they were judged, and the final candidate
on every pair with the chosen epoch count. The folds run forward in time: at each of K cut points a
model trains on every earlier query and is scored on the block after it, against the base model (the
active one) on the same queries. Random folds, even grouped by claim, approved a PFCC-S model that
ranks later claims no better (benchmarks/forward.md); the gate asks what a desk needs, whether the
model ranks the queries it will see next better. The gain is the mean over cut points of the paired
difference; the noise band is two standard errors of that mean; the spread (their standard deviation)
is reported beside the gain.

Cross-validation costs K fold trainings before the final one (3.2 times the pairs at K = 5), so `auto`
keeps it for corpora whose folds train within CV_MAX_PAIR_EPOCHS; larger ones have dev sets of
hundreds of pairs, and their gate is the dev set's (a request's `always` still cross-validates).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.judgements import JudgedPair

CV_BELOW_DEV_QUERIES = 200  # fewer dev queries than this: the gate cross-validates (module docstring)
CV_FOLDS = 5  # forward cut points
MIN_QUERIES_PER_BLOCK = 2  # a validation block of fewer queries says nothing about later ones
FORWARD_MIN_TRAIN = 0.4  # the share of the queries before the first cut point
# The most training (pairs x epochs, over the K fold models) that `auto` still cross-validates. On 2 CPU
# cores a pair-epoch costs about 0.11 s (SemEval CQA-A answers, 90 tokens, batch 30: 3.3 s a step;
# benchmarks/forward.md "The loop on an answer corpus"): 20,000 is about 40 minutes of folds. PFCC-S's
# 800 claim pairs (3 epochs: 7,700) cross-validate; CQA-A's 6,000 answer pairs (5 epochs: 96,000, about
# 3 hours of folds) do not.
CV_MAX_PAIR_EPOCHS = 20_000


def dev_queries(pairs: Sequence[JudgedPair]) -> int:
    """Distinct dev queries with a positive document (those the gate can score)."""
    return len({p.query for p in pairs if p.label > 0})


def fold_training_share(folds: int) -> float:
    """The fold models' training pairs, as a share of all pairs: the sum of the K cut points' shares."""
    return sum(FORWARD_MIN_TRAIN + k * (1 - FORWARD_MIN_TRAIN) / folds for k in range(folds))


def gate_folds(
    setting: str, folds: int, dev: Sequence[JudgedPair], everything: Sequence[JudgedPair], epochs: int = 1
) -> int:
    """The fold count of a cross-validated gate, or 0 for the dev-set gate.

    `setting`: `always`, `never`, or `auto` (cross-validate when the dev set has fewer than
    CV_BELOW_DEV_QUERIES queries and the folds' `epochs` over their pairs stay within
    CV_MAX_PAIR_EPOCHS). Either way, each of the K blocks after the first FORWARD_MIN_TRAIN of the
    queries needs MIN_QUERIES_PER_BLOCK queries with a positive document.
    """
    if setting == "never":
        return 0
    if setting == "auto" and (
        dev_queries(dev) >= CV_BELOW_DEV_QUERIES
        or fold_training_share(folds) * len(everything) * epochs > CV_MAX_PAIR_EPOCHS
    ):
        return 0
    validated = dev_queries(everything) * (1 - FORWARD_MIN_TRAIN)
    return folds if validated >= folds * MIN_QUERIES_PER_BLOCK else 0


def cross_validated_gate(
    summary: Mapping[str, Any], min_improvement: float, require_significant: bool
) -> dict[str, Any]:
    """The gate of a cross-validated job from its cv.json: gain, spread and noise band over folds.

    Epoch 0 of each fold is the base (active) model on the held-out queries; the candidate's value is
    the chosen epoch count's, so both sides are scored on the same queries by the same code.
    """
    metric = str(summary["metric"])
    chosen = summary["chosen"]
    epochs = str(chosen["epochs"])
    candidate, active = [], []
    for run in summary["runs"]:
        per_epoch = {str(k): float(v) for k, v in run["per_epoch"].items()}
        if run["point"] == chosen["point"] and epochs in per_epoch and "0" in per_epoch:
            candidate.append(per_epoch[epochs])
            active.append(per_epoch["0"])
    if not candidate:
        raise ValueError("cv.json has no fold with both the base model's and the chosen epoch's score")
    gains = [new - old for new, old in zip(candidate, active, strict=True)]
    delta = statistics.fmean(gains)
    spread = statistics.stdev(gains) if len(gains) > 1 else float("inf")
    standard_error = spread / len(gains) ** 0.5
    significant = delta > 2 * standard_error
    return {
        "protocol": "cross-validation",
        "scheme": summary.get("scheme", "grouped"),  # forward: each block validated after its training
        "metric": metric,
        # The first stage the corpus served when the job started: every fold model and the base model
        # were scored through it (its ranking and alpha, indexes/first_stage.py), not dense alone.
        "ranking": str(summary.get("ranking", "dense")),
        "folds": summary["folds"],
        "queries": summary["queries"],
        "groups": summary["groups"],
        "epochs": chosen["epochs"],
        "candidate": {metric: statistics.fmean(candidate)},
        "active": {metric: statistics.fmean(active)},
        "delta": delta,
        "spread": spread,
        "per_fold_delta": gains,
        "noise": {"folds": len(gains), "standard_error": standard_error, "noise_band": 2 * standard_error},
        "significant": significant,
        "improved": delta > min_improvement and (significant or not require_significant),
    }
