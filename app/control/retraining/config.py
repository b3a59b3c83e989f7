"""A retraining job's inputs and its `pairank train` config: the request with every default filled in
(`RetrainParams`), the pairs staged in the job folder, and the YAML the training process reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from app.control.gate_cv import FORWARD_MIN_TRAIN
from app.control.pair_export import ExportedPair
from app.db.blob_store import cached_input
from app.serving.context import ServiceContext
from evaluation.judgements import pair_task
from indexes.fusion import RankingSetting

DEV_FOLDER = "dev"  # in the job folder: the gate's dev set as a BEIR folder, the trainer's dev set
TRAIN_PAIRS, DEV_PAIRS = "train_pairs.jsonl", "dev_pairs.jsonl"
INPUTS = (TRAIN_PAIRS, DEV_PAIRS)  # a retraining job's inputs, stored with the job (app/db/blob_store.py)


@dataclass(frozen=True)
class RetrainParams:
    """A validated retraining request with every default filled in."""

    corpus: str
    kind: str
    base_model: str
    loss: str
    loss_params: dict[str, Any]
    shuffling: str
    shuffle_params: dict[str, Any]
    epochs: int
    batch_size: int
    learning_rate: float
    max_seq_length: int
    seed: int
    gate_metric: str
    auto_activate: bool
    min_improvement: float
    dev_fraction: float
    require_significant: bool = True  # a gain inside the dev noise band is not activated
    cross_validation: str = "auto"
    folds: int = 5
    hard_negatives: dict[str, Any] | None = None
    cv_folds: int = 0  # resolved at submission: > 0, the gate cross-validates (app/control/gate_cv.py)
    # The registered version `base_model` names, if any: the worker trains from its stored files.
    base_version: str | None = None
    bias_correction: bool = True  # AdamW's (training/config.py's default)
    defaults: str = ""  # the row of app/core/defaults.py's training table the unset fields came from
    # A cross-encoder trained beside the bi-encoder (RetrainRerankerIn's fields, app/schemas/retraining.py,
    # with `base_version` where its base is registered); None: the bi-encoder alone.
    reranker: dict[str, Any] | None = None


def training_config(
    params: RetrainParams,
    job_dir: Path,
    dev: list[ExportedPair],
    base_path: str | None = None,
    ranking: RankingSetting | None = None,
) -> dict[str, Any]:
    """The `pairank train` YAML config of a job (`base_path`: the base model's folder on this machine).

    The trainer selects its checkpoint on the gate's own dev set (the corpus's documents judged by the
    dev pairs, staged by the job as a BEIR folder) and metric, so its best dev metric is the gate's
    candidate metric (up to the served encoder's precision). `ranking`: the first stage the corpus
    serves, which scores the dev set (and every cross-validation fold) as `rank` would rank it.
    """
    config: dict[str, Any] = {
        "name": f"retrain-{params.corpus}",
        "base_model": base_path or params.base_model,
        "max_seq_length": params.max_seq_length,
        "seed": params.seed,
        "data": {"train_pairs": str(job_dir / TRAIN_PAIRS)},
        "dev": {
            "kind": "beir",
            "path": str(job_dir / DEV_FOLDER),
            "split": "dev",
            "task": pair_task(dev),
            "metric": params.gate_metric,
            "with_titles": False,
            "ranking": asdict(ranking) if ranking is not None else None,
        },
        "stages": [
            {
                "name": "retrain",
                "loss": params.loss,
                "loss_params": params.loss_params,
                "epochs": params.epochs,
                "lr": params.learning_rate,
                "batch_size": params.batch_size,
                "bias_correction": params.bias_correction,
                "shuffle": params.shuffling,
                "shuffle_params": params.shuffle_params,
            }
        ],
    }
    if params.hard_negatives:  # mined from every corpus document: the gate's staged corpus
        pool = str(job_dir / DEV_FOLDER / "corpus.jsonl")
        config["stages"][0]["hard_negatives"] = {**params.hard_negatives, "corpus": pool}
    if params.cv_folds:
        # K forward cut points over train + dev, then the final model on all pairs (gate_cv.py).
        config["cv"] = {
            "folds": params.cv_folds,
            "seeds": 1,
            "scheme": "forward",
            "min_train": FORWARD_MIN_TRAIN,
        }
    return config


def job_paths(data_dir: Path, job_id: str) -> tuple[Path, Path]:
    """(the job's input folder: pairs and config; the training run's output folder)."""
    return data_dir / "jobs" / job_id, data_dir / "models" / job_id


def write_config(
    job_dir: Path,
    params: RetrainParams,
    dev: list[ExportedPair],
    base_path: str | None = None,
    ranking: RankingSetting | None = None,
) -> dict[str, Any]:
    """Write the job's `pairank train` config, with this machine's paths, into its folder; returns it."""
    config = training_config(params, job_dir, dev, base_path, ranking)
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return config


def fetch_inputs(service: ServiceContext, job_id: str, job_dir: Path) -> None:
    """The job's pairs from the database into this worker's job folder (a verified cache): the job was
    submitted through any process, on any machine."""
    with service.sessions() as session:
        for name in INPUTS:
            cached_input(session, job_id, name, job_dir)
