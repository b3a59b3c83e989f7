"""Defaults that follow a corpus: how a new corpus ranks and the metric its gate maximises (by kind),
and how the retrain job trains (by what its judged pairs hold)."""

from __future__ import annotations

from dataclasses import dataclass
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


# How the retrain job trains, by what the corpus's judged pairs hold; a request overrides any field.
# One row per kind of data, with the forward measurement behind it (benchmarks/forward.md: paired gains
# over the product default on later queries, 3 cut points x 3 seeds). docs/guides/fine-tuning.md shows
# this table.
@dataclass(frozen=True)
class TrainingDefaults:
    """One row: the data it applies to, the training settings, and the evidence for them."""

    data: str
    settings: dict[str, Any]
    evidence: str
    # Whether the job also trains a cross-encoder re-ranker (`reranker` in the request): on only where
    # forward validation showed the stack beating the fine-tuned bi-encoder alone beyond 2 sd.
    reranker: bool = False
    reranker_evidence: str = ""


LABELLED_NEGATIVES = TrainingDefaults(
    "labelled negatives or graded labels (answers judged good / bad)",
    {
        "loss": "combo",  # 0.1 x BSC + 0.9 x MSE on the labels: the BSC paper's best CQA-A model
        "loss_params": {"mu": 0.1, "normalization": "l2_rows", "temperature": 0.055},
        "shuffling": "none",  # the pairs' own order: a query's judged documents stay together
        "shuffle_params": {},
        "epochs": 5,
        "learning_rate": 2e-5,
        "batch_size": 30,
        "bias_correction": True,
        "hard_negatives": None,  # the labelled negatives are the hard ones
    },
    "CQA-A answers, forward: MAP +7.08 +- 1.85, MRR +5.74 +- 1.13 over zero-shot dense (every cut and "
    "seed above zero; training/configs/semeval_cqa_a.yaml)",
    reranker=False,
    reranker_evidence="CQA-A: a cross-encoder blended 50/50 with zero-shot dense +5.61 +- 0.91 MAP, less "
    "than the fine-tuned bi-encoder alone (+7.08); blended into the fine-tuned one +1.74 +- 1.56 MAP over "
    "it at the three cuts measured (+3.51, +0.58, +1.13: not beyond 2 sd; opt in with `reranker`); ANTIQUE "
    "(graded answers): blended into zero-shot +3.06 +- 2.75 MRR at two cuts (+5.00, +1.11: inside 2 sd); "
    "CQA-B (related questions): the stack -7.28 +- 2.67 MAP under the fine-tuned bi-encoder (4 runs)",
)
POSITIVES_ONLY = TrainingDefaults(
    "positives only (a query and the document that answers it)",
    {
        "loss": "bsc",
        "loss_params": {"normalization": "l2_rows", "temperature": 0.05, "symmetric": True},
        "shuffling": "example",
        "shuffle_params": {"group_size": 8},
        "epochs": 3,
        "learning_rate": 2e-5,
        "batch_size": 30,
        "bias_correction": True,  # training/configs/pfcc_snopes.yaml: without it early steps overshoot
        "hard_negatives": {"count": 1, "window": 20, "remine": "once"},
    },
    "PFCC-S claims, forward: HasPositive@1 +2.29 +- 1.43, MRR +1.60 +- 1.12 over zero-shot hybrid a=0.2 "
    "(inside 2 sd: the gate decides per corpus); one hard negative mined once from ranks 0-20, the "
    "cross-validated best on PFCC-S (benchmarks/hybrid.md)",
    reranker=False,
    reranker_evidence="PFCC-S: a cross-encoder trained on the claim pairs hurts, -4.10 +- 2.46 "
    "HasPositive@1 blended 50/50 with hybrid a=0.2 (-14.72 alone)",
)


def training_defaults(negatives: int) -> TrainingDefaults:
    """The row for a corpus whose judged pairs hold `negatives` pairs judged not relevant."""
    return LABELLED_NEGATIVES if negatives > 0 else POSITIVES_ONLY


def parameters_of(field: str, value: str, params_key: str) -> dict[str, Any]:
    """The parameters a row gives with `field` = `value` (`loss` -> `loss_params`), else none."""
    for row in (POSITIVES_ONLY, LABELLED_NEGATIVES):
        if row.settings[field] == value:
            return dict(row.settings[params_key])
    return {}
