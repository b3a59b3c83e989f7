"""Defaults that follow a corpus's kind: how a new corpus ranks, and the metric its gate maximises."""

from __future__ import annotations

from typing import Any

from indexes.fusion import DEFAULT_ALPHA

# How a new corpus ranks until a calibration says otherwise (its `default_ranking`), by kind. Claims:
# hybrid a=0.2, the best setting of the cross-validated PFCC-S table (benchmarks/hybrid.md: +5.75 points
# HasPositive@1 over dense for the base model, +2.5 more on the fine-tuned one). Answers (CQA-A: every
# amount of BM25 lowers MAP) and questions (CQA-B: +0.8 MAP, inside the fold spread) stay dense.
DEFAULT_RANKING_BY_KIND: dict[str, dict[str, Any]] = {
    "claim": {"mode": "hybrid", "alpha": DEFAULT_ALPHA, "fusion": "linear"},
}
GATE_METRIC_OF_KIND = {"claim": "MRR", "answer": "MAP", "question": "MAP"}


def default_gate_metric(kind: str) -> str:
    """The natural metric of a corpus kind: MRR for claims, MAP for answers and questions."""
    return GATE_METRIC_OF_KIND.get(kind, "MRR")
