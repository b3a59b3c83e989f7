"""One rule for pairs -> judgements: what the trainer selects on is what the retraining gate scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from app.control.gate import build_gate_dataset, offline_candidates, paired_noise
from app.control.pair_export import ExportedPair, write_pairs
from app.control.retraining.config import DEV_FOLDER, TRAIN_PAIRS, RetrainParams, write_config
from evaluation.datasets import LabeledPair, load_beir
from evaluation.hybrid_eval import fused_run
from evaluation.judgements import judge_pairs, pair_task, relevance_grade, write_beir
from evaluation.metrics import RankingReport, evaluate_ranking
from evaluation.model_eval import evaluate_beir
from indexes.fusion import RankingSetting
from pairank.models import load_sentence_transformer, resolve_model
from training.config import config_from_dict
from training.evaluators import model_encoder
from training.trainer import train

CLAIMS = [
    "5G towers spread the coronavirus",
    "Drinking bleach cures covid",
    "The moon landing was staged in a studio",
    "Vaccines contain microchips for tracking",
    "Sharks were seen swimming on a flooded highway",
    "A celebrity died in a car crash last week",
    "Eating garlic prevents infection",
    "The earth is flat according to new photos",
    "Windmills cause cancer in nearby residents",
    "A politician was arrested for fraud yesterday",
    "Hot water kills the virus in your throat",
    "Bill Gates wants to depopulate the world",
]
CORPUS = {f"claim-{i}": text for i, text in enumerate(CLAIMS)}
TRAIN = [ExportedPair(f"is it true that {text.lower()}?", text, 1.0) for text in CLAIMS[:8] for _ in range(2)]
DEV = [
    ExportedPair("do cell masts spread covid", CLAIMS[0], 1.0),
    ExportedPair("microchips in the vaccine?", CLAIMS[3], 1.0),
    ExportedPair("shark on the highway photo", CLAIMS[4], 0.7),  # a graded label: relevant under both
    ExportedPair("does garlic stop the virus", CLAIMS[6], 1.0),
    ExportedPair("gates depopulation plan", CLAIMS[11], 1.0),
]


def test_relevance_grade_rounds_half_up_and_never_below_zero() -> None:
    assert [relevance_grade(x) for x in (-1, 0, 0.3, 0.49, 0.5, 0.7, 1, 1.5, 2, 2.4)] == [
        0,
        0,
        0,
        0,
        1,
        1,
        1,
        2,
        2,
        2,
    ]


def test_judge_pairs_keeps_corpus_ids_and_the_best_grade_of_repeated_pairs() -> None:
    pairs = [
        LabeledPair("q", "a", 0.3),
        LabeledPair("q", "b", 2),
        LabeledPair("q", "b", 1),
        LabeledPair("r", "new text", 1),
    ]
    dataset = judge_pairs(pairs, {"pair-d0": "a", "x": "unjudged"})
    assert dataset.qrels == {"pair-q0": {"pair-d0": 0, "pair-d2": 2}, "pair-q1": {"pair-d3": 1}}
    assert dataset.corpus["pair-d0"] == "a" and dataset.corpus["x"] == "unjudged"
    assert pair_task(pairs) == "rerank" and pair_task(pairs[1:]) == "retrieval"


def test_write_beir_round_trips(tmp_path: Path) -> None:
    dataset = judge_pairs([LabeledPair("q", "a", 1), LabeledPair("q", "b", 0)], {"c": "other"}, split="dev")
    loaded = load_beir(write_beir(dataset, tmp_path / "set"), "dev", with_titles=False)
    assert (loaded.corpus, loaded.queries, loaded.qrels) == (dataset.corpus, dataset.queries, dataset.qrels)


@pytest.mark.parametrize("served", [None, RankingSetting("hybrid", 0.2)], ids=["dense", "hybrid"])
def test_the_trainers_best_dev_metric_is_the_gates_candidate_metric(
    tmp_path: Path, tiny_model_dir: Path, served: RankingSetting | None
) -> None:
    params = RetrainParams(
        corpus="claims",
        kind="claim",
        base_model=str(tiny_model_dir),
        loss="bsc",
        loss_params={},
        shuffling="random",
        shuffle_params={},
        epochs=2,
        batch_size=4,
        learning_rate=1e-3,
        max_seq_length=32,
        seed=3,
        gate_metric="MRR",
        auto_activate=False,
        min_improvement=0.0,
        dev_fraction=0.2,
    )
    job_dir = tmp_path / "job"
    write_config(job_dir, params, DEV, ranking=served)
    write_pairs(job_dir / TRAIN_PAIRS, TRAIN)
    gate_set = build_gate_dataset(CORPUS, DEV)  # what the job stages for the trainer, then gates with
    write_beir(gate_set.dataset, job_dir / DEV_FOLDER)
    config = config_from_dict(yaml.safe_load((job_dir / "config.yaml").read_text()))
    assert (config.dev.task, config.dev.metric) == (gate_set.mode, "MRR")

    train(config, tmp_path / "run")

    best = json.loads((tmp_path / "run" / "metrics.json").read_text())["best"]["dev_metric"]
    candidate = load_sentence_transformer(resolve_model(str(tmp_path / "run")), device="cpu")
    assert candidate.max_seq_length == 32
    # The trainer selects its checkpoint on the gate's own dev set, scored through the first stage the
    # corpus serves (dense: as training/ always scored it; else the one first stage's pools).
    if served is None:
        gate = evaluate_beir(
            model_encoder(candidate), gate_set.dataset, gate_set.mode, metrics=["MRR"], top_k=100
        )
    else:
        pools = offline_candidates(model_encoder(candidate), gate_set)
        gate = evaluate_ranking(gate_set.dataset.qrels, fused_run(pools, served), metrics=["MRR"])
    assert gate.means["MRR"] == pytest.approx(best, abs=1e-6)


def test_a_gain_inside_two_standard_errors_is_noise() -> None:
    def report(values: list[float]) -> RankingReport:
        return RankingReport(
            {"MRR": sum(values) / len(values)}, {f"q{i}": {"MRR": v} for i, v in enumerate(values)}
        )

    active = report([0.5, 0.5, 1.0, 1.0, 0.5, 1.0, 0.5, 1.0])
    one_query_better = report([1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 0.5, 1.0])  # +0.0625 from one query
    noise = paired_noise(one_query_better, active, "MRR")
    assert noise["queries"] == 8 and noise["noise_band"] == pytest.approx(
        2 * 0.5 / math.sqrt(8) / math.sqrt(8)
    )
    assert noise["noise_band"] > 0.0625  # one query moving is not a gain
    every_query_better = report([v + 0.1 if v < 1 else v for v in [0.5, 0.5, 0.9, 0.9, 0.5, 0.9, 0.5, 0.9]])
    baseline = report([0.5, 0.5, 0.9, 0.9, 0.5, 0.9, 0.5, 0.9])
    steady = paired_noise(every_query_better, baseline, "MRR")
    assert steady["standard_error"] == pytest.approx(0.0) and steady["noise_band"] < 0.1
