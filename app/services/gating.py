"""The retraining gate: score the candidate and the active model on the same dev set and metric."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from app.services.pairs import ExportedPair
from evaluation.datasets import BeirDataset
from evaluation.judgements import judge_pairs, pair_task
from evaluation.metrics import RankingReport, parse_metric
from evaluation.model_eval import evaluate_beir

GATE_METRIC_OF_KIND = {"claim": "MRR", "answer": "MAP", "question": "MAP"}
REPORTED = ("MRR", "MAP", "HasPositive@1", "HasPositive@5")


@dataclass(frozen=True)
class GateDataset:
    """The dev set as a ranking task, and how to rank it."""

    dataset: BeirDataset
    mode: Literal["retrieval", "rerank"]


def default_gate_metric(kind: str) -> str:
    """The natural metric of a corpus kind: MRR for claims, MAP for answers and questions."""
    return GATE_METRIC_OF_KIND.get(kind, "MRR")


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
