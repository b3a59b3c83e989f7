"""The retraining gate: score the candidate and the active model on the same dev set and metric, each
at its own calibrated ranking mode (dense, lexical or hybrid; docs/concepts/ranking.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from app.control.pair_export import ExportedPair
from app.search.ranking_setting import RankingChoice, choose_ranking, given_ranking, stored_setting
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import candidate_scores, score_settings
from evaluation.judgements import judge_pairs, pair_task
from evaluation.metrics import RankingReport, parse_metric
from evaluation.model_eval import evaluate_beir
from evaluation.selection import query_groups
from indexes.fusion import RankingSetting

GATE_SOURCE = "retraining gate"  # the `source` of the ranking choice a gate stores for its candidate
REPORTED = ("MRR", "MAP", "HasPositive@1", "HasPositive@5")
MODE_CHOICE_FOLDS = 5
MODE_CHOICE_MIN_GROUPS = 10  # two query groups per fold; fewer: the model is gated (and served) dense


@dataclass(frozen=True)
class GateDataset:
    """The dev set as a ranking task, and how to rank it."""

    dataset: BeirDataset
    mode: Literal["retrieval", "rerank"]


def build_gate_dataset(corpus: dict[str, str], dev: Sequence[ExportedPair]) -> GateDataset:
    """Dev pairs judged by evaluation/judgements.py (the trainer's rule) over the corpus's documents.

    With labeled negatives the task is re-ranking each query's judged documents (answers to a thread);
    with positives only, each query is ranked against the whole corpus (claim retrieval).
    """
    return GateDataset(judge_pairs(dev, corpus, name="gate"), pair_task(dev))


def gate_metrics(
    encode: Callable[[Sequence[str]], np.ndarray], gate: GateDataset, gate_metric: str
) -> dict[str, float]:
    """The gate metric and a few companions for one model."""
    return gate_report(encode, gate, gate_metric).means


def gate_report(
    encode: Callable[[Sequence[str]], np.ndarray], gate: GateDataset, gate_metric: str
) -> RankingReport:
    """Means and per-query values of the gate metric and its companions for one model."""
    parse_metric(gate_metric)
    names = list(dict.fromkeys([gate_metric, *REPORTED]))
    return evaluate_beir(encode, gate.dataset, gate.mode, metrics=names, top_k=100)


def paired_noise(candidate: RankingReport, active: RankingReport, metric: str) -> dict[str, float]:
    """The gain's standard error from the paired per-query differences (candidate - active).

    Two standard errors is the noise band: a gain inside it could be which dev queries were drawn
    (with 80 queries and HasPositive@1, one query is 0.0125), so it is not activated automatically.
    """
    queries = sorted(set(candidate.per_query) & set(active.per_query))
    diffs = np.array([candidate.per_query[q][metric] - active.per_query[q][metric] for q in queries])
    se = float(diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else float("inf")
    return {"queries": len(queries), "standard_error": se, "noise_band": 2 * se}


@dataclass(frozen=True)
class ModeReport:
    """One model on the dev set at its calibrated mode: the choice (setting, each setting's mean), its
    report, and where the choice came from."""

    choice: RankingChoice
    report: RankingReport
    source: str  # "stored": the corpus's calibration for this model; "dev": chosen on the dev queries;
    # "default": the corpus's default ranking (else dense), the dev set being too small to choose on

    @property
    def setting(self) -> RankingSetting:
        """The ranking setting the model is gated (and would be served) at."""
        return self.choice.setting

    @property
    def settings(self) -> dict[str, float]:
        """Every setting's gate metric on the dev set, by label."""
        return self.choice.settings


def mode_report(
    encode: Callable[[Sequence[str]], np.ndarray],
    gate: GateDataset,
    gate_metric: str,
    stored: Mapping[str, Any] | None = None,
    default: Mapping[str, Any] | None = None,
) -> ModeReport:
    """Score every ranking setting on the dev set; the model's mode is `stored` (the corpus's calibration
    for this model) when given, else the one the calibration protocol picks on the dev queries
    (grouped 5-fold cross-validated choice, as `calibrate-ranking` does); when the dev queries form fewer
    than MODE_CHOICE_MIN_GROUPS groups, the corpus's `default` ranking (what it serves uncalibrated),
    else dense."""
    parse_metric(gate_metric)
    names = list(dict.fromkeys([gate_metric, *REPORTED]))
    candidates = candidate_scores(encode, gate.dataset, gate.mode)
    reports = score_settings(candidates, gate.dataset.qrels, names)
    saved = stored_setting(stored)
    if saved is not None and saved.label in reports:
        return ModeReport(given_ranking(saved, reports, gate_metric), reports[saved.label], "stored")
    if len(query_groups(gate.dataset.qrels)) < MODE_CHOICE_MIN_GROUPS:
        # A choice among 13 settings on a handful of queries is noise.
        fallback = stored_setting(default)
        if fallback is None or fallback.label not in reports:
            fallback = RankingSetting("dense")
        return ModeReport(given_ranking(fallback, reports, gate_metric), reports[fallback.label], "default")
    choice = choose_ranking(reports, gate.dataset.qrels, gate_metric, MODE_CHOICE_FOLDS)
    return ModeReport(choice, reports[choice.setting.label], "dev")
