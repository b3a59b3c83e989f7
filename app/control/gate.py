"""The retraining gate: score the candidate and the active model on the same dev set and metric, each
at its own calibrated ranking mode (dense, lexical or hybrid; docs/concepts/ranking.md), through the one
first stage (indexes/first_stage.py): the active model on the live store, exactly the lists `rank`
serves (`served_candidates`), the candidate, which serves no index yet, on its vectors in memory
(`offline_candidates`), gathered and ranked by the same code."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.control.pair_export import ExportedPair
from app.search.candidates import live_candidates
from app.search.ranking_setting import RankingChoice, choose_ranking, given_ranking, stored_setting
from app.serving.state import ServingState
from evaluation.datasets import BeirDataset
from evaluation.hybrid_eval import Candidates, Task, candidate_scores, score_settings
from evaluation.judgements import judge_pairs, pair_task
from evaluation.metrics import RankingReport, parse_metric
from evaluation.selection import query_groups
from indexes.first_stage import CANDIDATES
from indexes.fusion import RankingSetting

GATE_SOURCE = "retraining gate"  # the `source` of the ranking choice a gate stores for its candidate
REPORTED = ("MRR", "MAP", "HasPositive@1", "HasPositive@5")
MODE_CHOICE_FOLDS = 5
MODE_CHOICE_MIN_GROUPS = 10  # two query groups per fold; fewer: the model is gated (and served) dense


@dataclass(frozen=True)
class GateDataset:
    """The dev set as a ranking task, and how to rank it."""

    dataset: BeirDataset
    mode: Task


def build_gate_dataset(corpus: dict[str, str], dev: Sequence[ExportedPair]) -> GateDataset:
    """Dev pairs judged by evaluation/judgements.py (the trainer's rule) over the corpus's documents.

    With labeled negatives the task is re-ranking each query's judged documents (answers to a thread);
    with positives only, each query is ranked against the whole corpus (claim retrieval).
    """
    return GateDataset(judge_pairs(dev, corpus, name="gate"), pair_task(dev))


def served_candidates(
    state: ServingState, sessions: sessionmaker[Session], corpus: str, gate: GateDataset
) -> Candidates:
    """The dev queries' pools as the serving model's live store gathers them for `rank`."""
    return live_candidates(state, sessions, corpus, gate.dataset, gate.mode, CANDIDATES)


def offline_candidates(encode: Callable[[Sequence[str]], np.ndarray], gate: GateDataset) -> Candidates:
    """The dev queries' pools for a model that serves no index yet: its vectors of the corpus in memory."""
    return candidate_scores(encode, gate.dataset, gate.mode, CANDIDATES)


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
    report, every setting's report, and where the choice came from."""

    choice: RankingChoice
    report: RankingReport
    source: str  # "stored": the corpus's calibration for this model; "dev": chosen on the dev queries;
    # "default": the corpus's default ranking (else dense), the dev set being too small to choose on
    reports: Mapping[str, RankingReport]  # every setting of the grid, by label

    @property
    def setting(self) -> RankingSetting:
        """The ranking setting the model is gated (and would be served) at."""
        return self.choice.setting

    @property
    def settings(self) -> dict[str, float]:
        """Every setting's gate metric on the dev set, by label."""
        return self.choice.settings


def mode_report(
    candidates: Candidates,
    gate: GateDataset,
    gate_metric: str,
    stored: Mapping[str, Any] | None = None,
    default: Mapping[str, Any] | None = None,
) -> ModeReport:
    """Score every ranking setting on the dev queries' pools (`served_candidates` or
    `offline_candidates`); the model's mode is `stored` (the corpus's calibration for this model) when
    given, else the one the calibration protocol picks on the dev queries (grouped 5-fold
    cross-validated choice, as `calibrate-ranking` does); when the dev queries form fewer than
    MODE_CHOICE_MIN_GROUPS groups, the corpus's `default` ranking (what it serves uncalibrated), else
    dense."""
    parse_metric(gate_metric)
    names = list(dict.fromkeys([gate_metric, *REPORTED]))
    reports = score_settings(candidates, gate.dataset.qrels, names)
    saved = stored_setting(stored)
    if saved is not None and saved.label in reports:
        return ModeReport(given_ranking(saved, reports, gate_metric), reports[saved.label], "stored", reports)
    if len(query_groups(gate.dataset.qrels)) < MODE_CHOICE_MIN_GROUPS:
        # A choice among 13 settings on a handful of queries is noise.
        fallback = stored_setting(default)
        if fallback is None or fallback.label not in reports:
            fallback = RankingSetting("dense")
        chosen = given_ranking(fallback, reports, gate_metric)
        return ModeReport(chosen, reports[fallback.label], "default", reports)
    choice = choose_ranking(reports, gate.dataset.qrels, gate_metric, MODE_CHOICE_FOLDS)
    return ModeReport(choice, reports[choice.setting.label], "dev", reports)
