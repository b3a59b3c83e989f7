"""The retraining gate's two protocols: when it cross-validates, how it reads cv.json, and each model's
calibrated ranking mode on the dev set."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.control.gate import GATE_SOURCE, GateDataset, mode_report, offline_candidates
from app.control.gate_cv import (
    CV_BELOW_DEV_QUERIES,
    CV_MAX_PAIR_EPOCHS,
    cross_validated_gate,
    fold_training_share,
    gate_folds,
)
from app.control.pair_export import ExportedPair
from app.search.ranking_setting import ranking_record
from evaluation.judgements import judge_pairs


def pairs_about(documents: int, queries_each: int, prefix: str = "q") -> list[ExportedPair]:
    """`queries_each` positive queries for each of `documents` documents: one query group per document."""
    return [
        ExportedPair(f"{prefix} {d} {i}", f"document {d}", 1.0)
        for d in range(documents)
        for i in range(queries_each)
    ]


def test_auto_cross_validates_only_a_small_dev_set_with_enough_later_queries() -> None:
    everything = pairs_about(10, 2)  # 20 queries: the last 60% (12) are cut into blocks of >= 2
    small_dev = everything[:10]
    large_dev = [ExportedPair(f"dev {i}", "document 0", 1.0) for i in range(CV_BELOW_DEV_QUERIES)]
    assert gate_folds("auto", 5, small_dev, everything) == 5
    assert gate_folds("auto", 5, large_dev, everything) == 0  # enough dev queries: the dev gate
    assert gate_folds("never", 5, small_dev, everything) == 0
    assert gate_folds("always", 5, large_dev, everything) == 5
    # 12 validated queries hold 2 per block for 6 cut points but not for 7: no cross-validation.
    assert gate_folds("always", 6, small_dev, everything) == 6
    assert gate_folds("always", 7, small_dev, everything) == 0
    # A corpus whose folds would train past the budget gets the dev-set gate unless a request insists.
    many = pairs_about(100, 20)  # 2,000 pairs: 6,400 fold pairs, 32,000 pair-epochs at 5 epochs
    assert (
        fold_training_share(5) * len(many) * 5 > CV_MAX_PAIR_EPOCHS >= fold_training_share(5) * len(many) * 3
    )
    assert gate_folds("auto", 5, small_dev, many, epochs=5) == 0
    assert gate_folds("auto", 5, small_dev, many, epochs=3) == 5
    assert gate_folds("always", 5, small_dev, many, epochs=5) == 5
    # Only queries with a positive document count.
    negatives = [ExportedPair(f"n {i}", "document 0", 0.0) for i in range(40)]
    assert gate_folds("always", 2, small_dev, pairs_about(1, 3) + negatives) == 0


def summary(per_fold: list[tuple[float, float]], chosen_epochs: int = 2) -> dict:
    """A cv.json as the trainer writes it (JSON: epoch keys are strings) with base and trained scores."""
    point = {"stages.0.lr": 2e-5}
    runs = [
        {"point": point, "seed": 42, "fold": f, "per_epoch": {"0": base, "1": base, "2": trained}}
        for f, (base, trained) in enumerate(per_fold)
    ]
    other = {"point": {"stages.0.lr": 1e-3}, "seed": 42, "fold": 0, "per_epoch": {"0": 0.5, "1": 0.1}}
    chosen = {"point": point, "epochs": chosen_epochs}
    return json.loads(json.dumps({"metric": "MRR", "folds": len(per_fold), "queries": 100, "groups": 60,
                                  "chosen": chosen, "runs": [*runs, other]}))  # fmt: skip


def test_cross_validated_gate_pairs_each_fold_with_the_base_model() -> None:
    gate = cross_validated_gate(summary([(0.80, 0.84), (0.70, 0.73), (0.75, 0.80)]), 0.0, True)
    assert gate["protocol"] == "cross-validation" and gate["epochs"] == 2
    assert gate["per_fold_delta"] == pytest.approx([0.04, 0.03, 0.05])
    assert gate["delta"] == pytest.approx(0.04) and gate["spread"] == pytest.approx(0.01)
    assert gate["noise"]["noise_band"] == pytest.approx(2 * 0.01 / math.sqrt(3))
    assert gate["active"]["MRR"] == pytest.approx(0.75) and gate["candidate"]["MRR"] == pytest.approx(0.79)
    assert gate["significant"] and gate["improved"]


def test_a_gain_inside_the_fold_noise_is_not_activated() -> None:
    noisy = summary([(0.80, 0.90), (0.70, 0.66), (0.75, 0.77)])  # +0.10, -0.04, +0.02
    gate = cross_validated_gate(noisy, 0.0, True)
    assert gate["delta"] > 0 and not gate["significant"] and not gate["improved"]
    assert cross_validated_gate(noisy, 0.0, False)["improved"]  # the waiver: min_improvement alone
    assert not cross_validated_gate(noisy, 0.5, False)["improved"]
    with pytest.raises(ValueError, match="no fold"):
        cross_validated_gate(summary([(0.8, 0.9)], chosen_epochs=5), 0.0, True)


# Queries share rare words with their documents but nothing a bag of hashed trigrams would rank:
# lexical ranking is perfect, the "model" below ranks by text length (a bad dense model).
DOCS = {f"d{i}": f"zork{i} quibble{i} report number {i} " + "x" * (3 * i) for i in range(12)}
DEV = [ExportedPair(f"what about zork{i} quibble{i}", DOCS[f"d{i}"], 1.0) for i in range(12)]


def length_encoder(texts: list[str]) -> np.ndarray:
    """Unit vectors that only know a text's length: dense ranking by length, blind to words."""
    angles = np.array([len(t) / 7.0 for t in texts])
    return np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def test_each_model_is_gated_at_its_calibrated_mode() -> None:
    gate = GateDataset(judge_pairs(DEV, DOCS, name="gate"), "retrieval")
    chosen = mode_report(offline_candidates(length_encoder, gate), gate, "MRR")
    assert chosen.source == "dev" and chosen.setting.mode == "lexical"
    assert chosen.report.means["MRR"] == pytest.approx(1.0)
    assert chosen.settings["dense"] < 0.5
    # The active model's stored calibration wins over a choice on the dev set.
    stored = mode_report(
        offline_candidates(length_encoder, gate), gate, "MRR", {"model": "m", "mode": "dense", "alpha": 0.0}
    )
    assert stored.source == "stored" and stored.setting.mode == "dense"
    assert stored.report.means["MRR"] == pytest.approx(chosen.settings["dense"])
    queries = len(chosen.report.per_query)
    record = ranking_record("m@1", chosen.choice, "MRR", queries, "retrieval", GATE_SOURCE, "now")
    assert record["model"] == "m@1" and record["mode"] == "lexical" and record["value"] == pytest.approx(1.0)
    assert record["queries"] == 12 and record["source"] == "retraining gate"
    # Nine query groups are too few to choose on: dense, whatever the settings score.
    small = GateDataset(judge_pairs(DEV[:9], DOCS, name="gate"), "retrieval")
    assert mode_report(offline_candidates(length_encoder, small), small, "MRR").source == "default"
    assert mode_report(offline_candidates(length_encoder, small), small, "MRR").setting.mode == "dense"
    # ... or the corpus's default ranking, what it serves uncalibrated (a claim corpus: hybrid a=0.2).
    claim_default = {"mode": "hybrid", "alpha": 0.2, "fusion": "linear"}
    served = mode_report(offline_candidates(length_encoder, small), small, "MRR", default=claim_default)
    assert served.source == "default" and served.setting.label == "hybrid a=0.2"
