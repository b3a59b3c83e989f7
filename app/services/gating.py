"""The retraining gate: score the candidate and the active model on the same dev set and metric."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from app.services.pairs import ExportedPair
from evaluation.datasets import BeirDataset
from evaluation.judgements import judge_pairs, pair_task
from evaluation.metrics import parse_metric
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
    parse_metric(gate_metric)
    names = list(dict.fromkeys([gate_metric, *REPORTED]))
    return evaluate_beir(encode, gate.dataset, gate.mode, metrics=names, top_k=100).means
